"""Training steps per second of ``model.fit`` under ``mk.distribute.DataParallel`` on 1, 2, 4 and
8 devices (virtual CPU devices unless the machine has accelerators), for a small MLP and a
small CNN, with the same global batch on every row.

    python benchmarks/data_parallel.py [--steps 20] [--repeats 3] [--batch 256] [--devices 1,2,4,8]

The first row, "none", is the same fit with no distribution at all: the cost of the
placement hook shows as the difference to "1 device".

On CPU the devices are virtual (``--xla_force_host_platform_device_count=8``, set here before
JAX is imported): they share the machine's cores, so on a machine with 2 physical cores there
is no real speed-up to expect beyond 2 devices - more devices add collectives and
per-device dispatch without adding compute. The numbers measure the overhead of the
machinery, not the scaling one gets from real GPUs or a TPU slice. Each figure is the best of
``--repeats`` timed rounds of ``--steps`` steps (after a compiling warm-up), so that load from
other processes on a shared machine matters less.
"""
import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import jax  # noqa: E402
import numpy as np  # noqa: E402

import minikeras as mk  # noqa: E402


def mlp():
    return mk.Sequential([mk.Input((784,)), mk.layers.Dense(256, activation="relu"),
                          mk.layers.Dense(256, activation="relu"), mk.layers.Dense(10)])


def cnn():
    return mk.Sequential([mk.Input((28, 28, 1)), mk.layers.Conv2D(16, 3, activation="relu"), mk.layers.MaxPooling2D(),
                          mk.layers.Conv2D(32, 3, activation="relu"), mk.layers.MaxPooling2D(), mk.layers.Flatten(),
                          mk.layers.Dense(10)])


def steps_per_second(make_model, x, y, batch, steps, repeats, distribution):
    mk.random.set_seed(0)
    model = make_model()
    model.compile(mk.optimizers.Adam(1e-3), mk.losses.SparseCategoricalCrossentropy(from_logits=True),
                  distribution=distribution)
    n = batch * steps
    model.fit(x[:batch * 2], y[:batch * 2], batch_size=batch, epochs=1, verbose=0, shuffle=False)  # compile
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        model.fit(x[:n], y[:n], batch_size=batch, epochs=1, verbose=0, shuffle=False)  # logs are read: synced
        best = min(best, time.perf_counter() - start)
    return steps / best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--devices", default="1,2,4,8")
    args = parser.parse_args()
    counts = [int(c) for c in args.devices.split(",") if int(c) <= len(jax.devices())]
    rng = np.random.default_rng(0)
    n = args.batch * args.steps
    data = {
        "MLP 784-256-256-10": (mlp, rng.standard_normal((n, 784)).astype(np.float32)),
        "CNN 2x conv3x3 + dense": (cnn, rng.standard_normal((n, 28, 28, 1)).astype(np.float32)),
    }
    labels = rng.integers(0, 10, n)
    print(f"{jax.devices()[0].platform}: {len(jax.devices())} devices, {os.cpu_count()} cores; global batch "
          f"{args.batch}; steps/s (best of {args.repeats} x {args.steps} steps)")
    print(f"{'model':<26}{'none':>10}" + "".join(f"{str(c) + ' dev':>10}" for c in counts))
    for name, (make_model, x) in data.items():
        row = [steps_per_second(make_model, x, labels, args.batch, args.steps, args.repeats, None)]
        for count in counts:
            distribution = mk.distribute.DataParallel(devices=jax.devices()[:count])
            row.append(steps_per_second(make_model, x, labels, args.batch, args.steps, args.repeats, distribution))
        print(f"{name:<26}" + "".join(f"{r:>10.1f}" for r in row))


if __name__ == "__main__":
    main()
