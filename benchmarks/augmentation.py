"""Augmentation inside the model, and loading a folder of PNG files: minikeras vs TensorFlow.

1. ``fit`` samples/s of a small CNN with ``RandomFlip`` + ``RandomRotation`` layers inside the
   model (28x28x1 inputs, batch 128): the augmentation runs in the compiled training step. The
   first epoch (tracing and compiling) is reported apart; the median of the next epochs is the
   steady state.
2. ``image_dataset_from_directory`` over a folder of PNG files (64x64 RGB, 10 classes, 10,000 by
   default) resized to 48x48: images/s for one pass, decoding and resizing included.

TensorFlow (Keras 3) runs the same model and the same folder in its own process
(``augmentation_tf.py``, started with ``--tf-python``, default this interpreter), one after the
other, so that neither slows the other.

    python benchmarks/augmentation.py                                  # 16,384 samples, 10,000 PNGs
    python benchmarks/augmentation.py --samples 512 --images 200 --epochs 1   # a smoke run
    python benchmarks/augmentation.py --tf-python /path/to/tf-venv/bin/python
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import minikeras as mk

HERE = os.path.dirname(os.path.abspath(__file__))


def model():
    net = mk.Sequential([
        mk.Input((28, 28, 1)), mk.layers.Rescaling(1 / 255),
        mk.layers.RandomFlip("horizontal"), mk.layers.RandomRotation(0.1),
        mk.layers.Conv2D(32, 3, activation="relu"), mk.layers.MaxPooling2D(),
        mk.layers.Conv2D(64, 3, activation="relu"), mk.layers.MaxPooling2D(),
        mk.layers.Flatten(), mk.layers.Dense(10)])
    net.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    return net


def fit_throughput(samples, batch_size, epochs):
    """(steady-state samples/s, first-epoch seconds) of ``model().fit``."""
    mk.random.set_seed(0)
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (samples, 28, 28, 1)).astype(np.float32)
    y = rng.integers(0, 10, samples).astype(np.int32)
    net = model()
    start = time.perf_counter()
    net.fit(x, y, batch_size=batch_size, epochs=1, verbose=0)
    first = time.perf_counter() - start
    times = []
    for _ in range(epochs):
        start = time.perf_counter()
        net.fit(x, y, batch_size=batch_size, epochs=1, verbose=0)
        times.append(time.perf_counter() - start)
    return samples / float(np.median(times)), first


def write_folder(root, count, size=64, classes=10):
    """``count`` PNG files of random smooth RGB images, ``root/class_k/i.png``."""
    rng = np.random.default_rng(0)
    base = rng.integers(0, 256, (classes, size, size, 3)).astype(np.int16)
    for k in range(classes):
        os.makedirs(os.path.join(root, f"class_{k}"), exist_ok=True)
    for i in range(count):
        k = i % classes
        image = np.clip(base[k] + rng.integers(-20, 21, (size, size, 3)), 0, 255).astype(np.uint8)
        mk.io.write_file(os.path.join(root, f"class_{k}", f"{i:05d}.png"), mk.io.encode_png(image))


def folder_throughput(root, image_size):
    ds = mk.utils.image_dataset_from_directory(root, image_size=(image_size, image_size), batch_size=64, seed=0,
                                               verbose=False)
    start = time.perf_counter()
    count = sum(int(images.shape[0]) for images, _ in ds)
    return count / (time.perf_counter() - start)


def tensorflow(python, args, folder):
    command = [python, os.path.join(HERE, "augmentation_tf.py"), "--samples", str(args.samples), "--batch-size",
               str(args.batch_size), "--epochs", str(args.epochs), "--images-dir", folder, "--image-size",
               str(args.image_size)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        print(f"TensorFlow's run failed (is TensorFlow installed for {python}?):\n{done.stderr[-2000:]}")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=16384)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=3, help="timed epochs after the first")
    parser.add_argument("--images", type=int, default=10000)
    parser.add_argument("--image-size", type=int, default=48)
    parser.add_argument("--tf-python", default=sys.executable)
    parser.add_argument("--no-tf", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        write_folder(folder, args.images)
        print(f"wrote {args.images} PNG files in {time.perf_counter() - start:.1f} s")
        fit_rate, first = fit_throughput(args.samples, args.batch_size, args.epochs)
        folder_rate = folder_throughput(folder, args.image_size)
        tf = None if args.no_tf else tensorflow(args.tf_python, args, folder)
    print(f"{'':28s}{'minikeras':>12s}{'TensorFlow':>12s}{'ratio':>8s}")
    rows = [("fit samples/s (augmented)", fit_rate, tf and tf["fit_samples_per_s"]),
            ("first epoch s (compile)", first, tf and tf["fit_first_epoch_s"]),
            (f"folder images/s ({args.image_size}x{args.image_size})", folder_rate,
             tf and tf["folder_images_per_s"])]
    for name, ours, theirs in rows:
        ratio = f"{ours / theirs:8.2f}" if theirs else ""
        print(f"{name:28s}{ours:12.1f}{(theirs or float('nan')):12.1f}{ratio}")
    return {"fit": fit_rate, "first": first, "folder": folder_rate, "tf": tf}


if __name__ == "__main__":
    main()
