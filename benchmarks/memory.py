"""Peak memory of training the classic MNIST CNN: ``model.fit`` and a ``mk.function`` tape step
vs the hand-written ``jax.jit`` + optax step of ``train_step.py``.

Each contender runs in its own fresh process (peak RSS only grows, so processes cannot share)
on the same MNIST-sized data (60,000 float32 images in NumPy, as a user holds them), trains the
same number of steps at batch 128 and reports its peak resident set size
(``resource.getrusage(...).ru_maxrss``) and how much of it training added on top of the process
after loading the data and importing everything (the baseline, measured alike in each).

    python benchmarks/memory.py [--steps 40] [--batch-size 128]
"""
import argparse
import json
import os
import resource
import subprocess
import sys


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def current_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def train(kind, steps, batch):
    """Trains ``steps`` steps in this process; returns the memory figures as a dict."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import jax.numpy as jnp
    import numpy as np
    from common import block
    from train_step import classic_cnn, jax_step, mk_tape_step

    import minikeras as mk

    rng = np.random.default_rng(0)
    x = rng.random((60000, 28, 28, 1), dtype=np.float32)
    y = rng.integers(0, 10, 60000).astype(np.int32)
    mk.random.set_seed(0)
    model = classic_cnn()
    baseline = current_mb()
    if kind == "jax":
        step, state = jax_step("classic", model)
        for i in range(steps):
            xb, yb = jnp.asarray(x[i * batch:(i + 1) * batch]), jnp.asarray(y[i * batch:(i + 1) * batch])
            state[0], state[1], state[2], loss = step(state[0], state[1], xb, yb, state[2])
        block(loss)
    elif kind == "mk tape":
        tape_step = mk_tape_step(model)
        for i in range(steps):
            loss = tape_step(x[i * batch:(i + 1) * batch], y[i * batch:(i + 1) * batch])
        block(loss)
    elif kind == "mk fit":
        model.compile(optimizer=mk.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy",
                      metrics=["accuracy"])
        model.fit(x, y, batch_size=batch, epochs=1, steps_per_epoch=steps, verbose=0)
    else:
        raise ValueError(f"unknown kind {kind!r}")
    return {"peak_mb": peak_mb(), "baseline_mb": baseline}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(train(args.child, args.steps, args.batch_size)))
        return
    results = {}
    for kind in ("jax", "mk tape", "mk fit"):
        out = subprocess.run([sys.executable, __file__, "--child", kind, "--steps", str(args.steps),
                              "--batch-size", str(args.batch_size)], capture_output=True, text=True, check=True)
        results[kind] = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"classic MNIST CNN, batch {args.batch_size}, {args.steps} steps, 60,000 images in NumPy; each in a fresh "
          "process")
    print(f"  {'':8} {'peak RSS':>10} {'vs jax':>7} {'training adds':>14} {'vs jax':>7}")
    jax_peak, jax_added = results["jax"]["peak_mb"], results["jax"]["peak_mb"] - results["jax"]["baseline_mb"]
    for kind, r in results.items():
        added = r["peak_mb"] - r["baseline_mb"]
        print(f"  {kind:8} {r['peak_mb']:8.0f} MB {r['peak_mb'] / jax_peak:6.2f}x {added:11.0f} MB "
              f"{added / jax_added:6.2f}x")


if __name__ == "__main__":
    main()
