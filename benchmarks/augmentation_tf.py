"""TensorFlow's side of ``augmentation.py``, run in its own process (TensorFlow and Keras 3
only: no minikeras, no jax). Prints one JSON line of results.

    python benchmarks/augmentation_tf.py --samples 4096 --epochs 3 --images-dir DIR --image-size 48
"""
import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def model():
    net = keras.Sequential([
        keras.Input((28, 28, 1)), keras.layers.Rescaling(1 / 255),
        keras.layers.RandomFlip("horizontal"), keras.layers.RandomRotation(0.1),
        keras.layers.Conv2D(32, 3, activation="relu"), keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, activation="relu"), keras.layers.MaxPooling2D(),
        keras.layers.Flatten(), keras.layers.Dense(10)])
    net.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return net


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, required=True)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--images-dir")
    parser.add_argument("--image-size", type=int, default=48)
    args = parser.parse_args()
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (args.samples, 28, 28, 1)).astype(np.float32)
    y = rng.integers(0, 10, args.samples).astype(np.int32)
    net = model()
    start = time.perf_counter()
    net.fit(x, y, batch_size=args.batch_size, epochs=1, verbose=0)  # traces and compiles
    first = time.perf_counter() - start
    times = []
    for _ in range(args.epochs):
        start = time.perf_counter()
        net.fit(x, y, batch_size=args.batch_size, epochs=1, verbose=0)
        times.append(time.perf_counter() - start)
    result = {"fit_samples_per_s": args.samples / float(np.median(times)), "fit_first_epoch_s": first,
              "tf": tf.__version__}
    if args.images_dir:
        size = (args.image_size, args.image_size)
        ds = keras.utils.image_dataset_from_directory(args.images_dir, image_size=size, batch_size=64, seed=0,
                                                      verbose=False)
        start = time.perf_counter()
        count = sum(int(images.shape[0]) for images, _ in ds)
        result["folder_images_per_s"] = count / (time.perf_counter() - start)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
