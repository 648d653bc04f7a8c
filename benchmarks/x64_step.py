"""The MNIST CNN's training step with 64-bit dtypes off and on: the same speed is expected, since
``floatx()`` stays float32 and fit hands the model float32 batches in both modes.

Each mode runs in a process of its own (jax's x64 flag is global), started in turn for each
round so that machine load hits both alike; each process times ``model.fit`` on the classic Keras
MNIST CNN (train_step.py's ``classic_cnn``, Adam, batch 128) fed float64 images and int64 labels
as a tutorial's ``x_train / 255.0`` gives them, and a ``mk.function`` GradientTape step on the
same float64 batch. Printed: samples/s per mode (median of the rounds) and on/off ratios.

    python benchmarks/x64_step.py                    # 5 rounds of 40 steps
    python benchmarks/x64_step.py --steps 3 --rounds 1   # a smoke run
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def child(steps, batch_size):
    import numpy as np

    sys.path.insert(0, HERE)
    from train_step import classic_cnn

    import minikeras as mk

    rng = np.random.default_rng(0)
    n = steps * batch_size
    x = rng.integers(0, 256, size=(n, 28, 28, 1)).astype(np.float64) / 255.0  # float64, as x_train / 255.0
    y = rng.integers(0, 10, size=(n,)).astype(np.int64)
    mk.utils.set_random_seed(0)
    model = classic_cnn()
    model.compile(optimizer=mk.optimizers.Adam(), loss="sparse_categorical_crossentropy")
    model.fit(x[:2 * batch_size], y[:2 * batch_size], batch_size=batch_size, epochs=1, verbose=0)  # compile
    start = time.perf_counter()
    model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0, shuffle=False)
    fit_rate = n / (time.perf_counter() - start)

    loss_fn = mk.losses.SparseCategoricalCrossentropy()
    optimizer = mk.optimizers.Adam()

    @mk.function
    def step(images, labels):
        with mk.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    batches = [(mk.constant(x[i:i + batch_size]), mk.constant(y[i:i + batch_size])) for i in range(0, n, batch_size)]
    step(*batches[0]).numpy()  # compile
    start = time.perf_counter()
    for images, labels in batches:
        loss = step(images, labels)
    loss.numpy()
    tape_rate = n / (time.perf_counter() - start)
    print("RESULT" + json.dumps({"x64": mk.config.x64_enabled(), "input": batches[0][0].dtype.name,
                                 "fit": fit_rate, "tape": tape_rate}))


def run(mode, steps, batch_size):
    env = dict(os.environ)
    env.pop("MINIKERAS_ENABLE_X64", None)
    if mode == "on":
        env["MINIKERAS_ENABLE_X64"] = "1"
    out = subprocess.run([sys.executable, __file__, "--child", "--steps", str(steps), "--batch-size", str(batch_size)],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads([line for line in out.stdout.splitlines() if line.startswith("RESULT")][-1][6:])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.steps, args.batch_size)
    results = {"off": [], "on": []}
    for _ in range(args.rounds):
        for mode in ("off", "on"):
            results[mode].append(run(mode, args.steps, args.batch_size))
    print(f"classic MNIST CNN, batch {args.batch_size}, {args.steps} steps, median of {args.rounds} rounds (samples/s)")
    medians = {}
    for mode, rows in results.items():
        medians[mode] = {k: statistics.median(r[k] for r in rows) for k in ("fit", "tape")}
        print(f"  x64 {mode:3s} (tape input {rows[0]['input']}): fit {medians[mode]['fit']:8.0f}   "
              f"tape {medians[mode]['tape']:8.0f}")
    print(f"  on / off: fit {medians['on']['fit'] / medians['off']['fit']:.3f}   "
          f"tape {medians['on']['tape'] / medians['off']['tape']:.3f}")
    return medians


if __name__ == "__main__":
    main()
