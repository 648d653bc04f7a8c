"""The main job's recipe written for TensorFlow, and the time-to-99% race against minikeras.

``examples/mnist_cnn.py`` trains the classic Keras MNIST convnet for 3 epochs (Adam with a
100-step warm-up from 2e-4 to 2e-3, 2e-3 until two thirds of the training, then a cosine decay
to 0; batch 64; test accuracy after every epoch). This file is the same recipe as TensorFlow 2
users write it: a ``@tf.function`` GradientTape step, ``tf.data`` shuffling and batching, Keras
layers and the same schedule as a ``keras.optimizers.schedules.LearningRateSchedule`` subclass.
It prints the same curve lines, timed the same way: from the call on, loading the data, building
the model and compiling included, imports not.

    python benchmarks/mnist_cnn_tf.py --seed 0          # TensorFlow alone (needs the bench extra)
    python benchmarks/mnist_cnn_tf.py --race            # minikeras tape, minikeras fit and
                                                        # TensorFlow, seeds 0-2, back to back
    python benchmarks/mnist_cnn_tf.py --race --seeds 0 --epochs 3

``--race`` runs each (program, seed) in a fresh process in turn, so each pays its own start-up
(minikeras compiles from scratch: ``--no-compilation-cache``), and prints the seconds to the end
of epoch 1 and to 99% test accuracy, the final accuracy, minikeras' time as a fraction of
TensorFlow's for the same seed, and the share of CPU time the hypervisor gave to other guests
during each run.
The TensorFlow program reads the same MNIST files as the main job (``$MINIKERAS_DATASETS/mnist``
or the download cache) with NumPy, without importing minikeras or jax.
"""
import argparse
import gzip
import math
import os
import re
import struct
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BATCH_SIZE = 64  # the main job's (examples/mnist_cnn.py); the race passes its batch size to both programs
CURVE_LINE = re.compile(r"^epoch ([0-9.]+)/[0-9.]+: loss [0-9.naif]+, test accuracy ([0-9.]+), ([0-9.]+) s$")
FIRST_STEP_LINE = re.compile(r"first step at ([0-9.]+) s")  # seconds since the program started


# -- the TensorFlow program ----------------------------------------------------------------------
def _idx(path):
    """The uint8 array of a gzip-compressed IDX file (MNIST's format: a big-endian header of a
    magic number, whose last byte is the rank, and the sizes; then the values)."""
    with gzip.open(path, "rb") as stream:
        data = stream.read()
    rank = data[3]
    shape = struct.unpack(f">{rank}I", data[4:4 + 4 * rank])
    return np.frombuffer(data, np.uint8, offset=4 + 4 * rank).reshape(shape)


def load():
    """MNIST as the main job prepares it (float32 images in [0, 1], (n, 28, 28, 1); int32
    labels), read from ``$MINIKERAS_DATASETS/mnist`` or the download cache without importing
    minikeras (so that jax is not loaded into TensorFlow's process)."""
    folder = os.path.join(os.environ.get("MINIKERAS_DATASETS") or os.path.join(
        os.path.expanduser(os.environ.get("MINIKERAS_HOME") or "~/.minikeras"), "datasets"), "mnist")
    arrays = [_idx(os.path.join(folder, f"{name}.gz")) for name in (
        "train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")]
    images = [(x.astype(np.float32) / 255.0)[..., None] for x in arrays[0::2]]
    labels = [y.astype(np.int32) for y in arrays[1::2]]
    return (images[0], labels[0]), (images[1], labels[1])


def warmup_stable_decay(tf, total, peak=2e-3, warmup_steps=100):
    """The main job's schedule (``examples/mnist_cnn.py``'s ``learning_rate``) in TensorFlow: linear
    warmup from ``peak / 10`` to ``peak``, ``peak`` until two thirds of ``total``, cosine to 0."""
    decay_start = (2 * total) // 3
    warmup_steps = min(warmup_steps, decay_start)

    class WarmupStableDecay(tf.keras.optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):
            step = tf.cast(step, tf.float32)
            warmup = peak / 10 + 0.9 * peak * step / max(warmup_steps, 1)
            decayed = tf.minimum(tf.maximum(step - decay_start, 0.0) / (total - decay_start), 1.0)
            return tf.where(step < warmup_steps, warmup, 0.5 * peak * (1.0 + tf.cos(math.pi * decayed)))

        def get_config(self):
            return {"total": total, "peak": peak, "warmup_steps": warmup_steps}

    return WarmupStableDecay()


def run_tensorflow(epochs=3, batch_size=BATCH_SIZE, seed=0, log=print):
    """Trains the classic convnet with TensorFlow; returns [(epochs done, seconds, accuracy), ...]."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    start = time.perf_counter()
    tf.keras.utils.set_random_seed(seed)
    log("Loading MNIST")
    (x_train, y_train), (x_test, y_test) = load()
    log(f"Loaded {len(x_train)} training and {len(x_test)} test images: {time.perf_counter() - start:.1f} s")
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(28, 28, 1)),
        tf.keras.layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
        tf.keras.layers.Conv2D(64, (3, 3), activation="relu"),
        tf.keras.layers.MaxPooling2D(pool_size=(2, 2)),
        tf.keras.layers.Dropout(0.25),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dropout(0.5),
        tf.keras.layers.Dense(10, activation="softmax"),
    ])
    steps_per_epoch = math.ceil(len(x_train) / batch_size)
    total = max(1, round(epochs * steps_per_epoch))
    optimizer = tf.keras.optimizers.Adam(warmup_stable_decay(tf, total))
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()
    train_ds = (tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(len(x_train))
                .batch(batch_size).prefetch(tf.data.AUTOTUNE))

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    @tf.function
    def predict(images):
        return tf.argmax(model(images, training=False), axis=1, output_type=tf.int32)

    def accuracy():
        correct = sum(int(tf.reduce_sum(tf.cast(predict(x_test[i:i + 1000]) == y_test[i:i + 1000], tf.int32)))
                      for i in range(0, len(x_test), 1000))
        return correct / len(x_test)

    curve, done = [], 0
    log(f"Training {total} steps of {batch_size} examples ({epochs:g} epochs of {steps_per_epoch} steps)")
    while done < total:
        mean_loss = tf.keras.metrics.Mean()
        steps = min(steps_per_epoch, total - done)
        for step, (images, labels) in enumerate(train_ds.take(steps), 1):
            called = time.perf_counter()
            mean_loss.update_state(train_step(images, labels))
            if done == 0 and step == 1:
                log(f"  compiled the training step in {time.perf_counter() - called:.1f} s; first step at "
                    f"{time.perf_counter() - start:.1f} s")
        done += steps
        acc = accuracy()
        curve.append((round(done / steps_per_epoch, 2), time.perf_counter() - start, acc))
        log(f"epoch {curve[-1][0]:g}/{epochs:g}: loss {float(mean_loss.result()):.4f}, test accuracy {acc:.4f}, "
            f"{curve[-1][1]:.1f} s")
    return curve


# -- the race ------------------------------------------------------------------------------------
def time_to(curve, target=0.99):
    """Seconds at the first evaluation with accuracy >= ``target``, or None."""
    return next((seconds for _, seconds, accuracy in curve if accuracy >= target), None)


def run_child(command):
    """Runs one training program; returns (its curve, the seconds of its first-step line)."""
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr[-3000:]}")
    curve, first_step = [], None
    for line in result.stdout.splitlines():
        match = CURVE_LINE.match(line.strip())
        if match:
            curve.append((float(match[1]), float(match[3]), float(match[2])))
        elif "compiled the training step" in line:
            first_step = float(FIRST_STEP_LINE.search(line)[1])
    if not curve:
        raise RuntimeError(f"no curve in the output of {' '.join(command)}:\n{result.stdout[-3000:]}")
    return curve, first_step


def race(seeds, epochs, batch_size=BATCH_SIZE):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import (  # here, not at the top: common imports jax, which TensorFlow's run must not load
        CpuSteal,
        cpu_model,
    )

    python = sys.executable
    common = ["--epochs", str(epochs), "--batch-size", str(batch_size)]
    programs = {
        "mk tape": lambda s: [python, "examples/mnist_cnn.py", "--mode", "tape", "--seed", str(s), *common,
                              "--no-compilation-cache"],
        "mk fit": lambda s: [python, "examples/mnist_cnn.py", "--mode", "fit", "--seed", str(s), *common,
                             "--no-compilation-cache"],
        "tf": lambda s: [python, __file__, "--seed", str(s), *common],
    }
    print(f"{cpu_model()}, {os.cpu_count()} CPUs; {epochs:g} epochs of the main job's recipe at batch {batch_size}, "
          "each run a fresh process, back to back")
    print(f"{'seed':>4} {'program':8} {'first step':>10} {'epoch 1':>8} {'to 99%':>8} {'vs tf':>6} {'end':>7} "
          f"{'final acc':>9} {'steal':>5}")
    for seed in seeds:
        results, steal = {}, {}
        for name, make in programs.items():
            with CpuSteal() as meter:
                results[name] = run_child(make(seed))
            steal[name] = "-" if meter.share is None else f"{meter.share:.0%}"
        tf_time = time_to(results["tf"][0])
        for name, (curve, first_step) in results.items():
            reached = time_to(curve)
            ratio = f"{reached / tf_time:5.2f}x" if reached is not None and tf_time else "   -  "
            print(f"{seed:>4} {name:8} {_seconds(first_step):>10} {_seconds(curve[0][1]):>8} {_seconds(reached):>8} "
                  f"{ratio:>6} {_seconds(curve[-1][1]):>7} {curve[-1][2]:9.4f} {steal[name]:>5}", flush=True)


def _seconds(value):
    """'12.3s', or '-' for a time not known (fit prints no first-step line; 99% not reached)."""
    return "-" if value is None else f"{value:.1f}s"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=float, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=BATCH_SIZE, help="the main job's (64) unless given; --race "
                        "passes it to every program")
    parser.add_argument("--race", action="store_true", help="minikeras (tape, fit) and TensorFlow, back to back")
    parser.add_argument("--seeds", default="0,1,2", help="with --race: comma-separated seeds")
    args = parser.parse_args(argv)
    if args.race:
        race([int(s) for s in args.seeds.split(",")], args.epochs, args.batch_size)
        return
    start = time.perf_counter()
    curve = run_tensorflow(args.epochs, args.batch_size, seed=args.seed, log=lambda text: print(text, flush=True))
    reached = time_to(curve)
    print(f"final test accuracy {curve[-1][2]:.4f}; time to 99%: "
          f"{'not reached' if reached is None else f'{reached:.1f} s'}; wall time {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
