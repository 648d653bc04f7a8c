"""A ``fit`` epoch's time per step against the ``mk.function`` tape step's, in one process.

``train_step.py`` times its ``mk tape`` and ``mk fit`` rows as medians of a few repeats; a gap
of a few percent between them there can be noise. This runs, interleaved in one process
(``--rounds`` rounds, medians), the classic MNIST CNN of ``train_step.py`` (optionally under a
dtype policy) as:

  * tape:           the tape step over device batches (``train_step.mk_tape_step``),
  * tape np:        the same step fed NumPy batches (the host-to-device copy ``fit`` also makes),
  * fit:            ``model.fit`` over one epoch of the same batches, as ``train_step.py`` runs it,
  * train_on_batch: ``model.train_on_batch`` per batch,

and prints each one's wall and CPU (``time.process_time``) milliseconds per step and its ratio to
the tape step (above 1: faster than it).

    python benchmarks/fit_vs_tape.py --policy mixed_bfloat16
    python benchmarks/fit_vs_tape.py --steps 2 --rounds 1     # a smoke run
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import block, cpu_model, honour_default_malloc_flag  # noqa: E402

honour_default_malloc_flag()  # before minikeras is imported
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import train_step  # noqa: E402

import minikeras as mk  # noqa: E402


def contenders(policy, steps, batch):
    """{name: run()} over ``steps`` batches of random MNIST-shaped data; each run blocks."""
    rng = np.random.default_rng(0)
    x = rng.random((steps * batch, 28, 28, 1), dtype=np.float32)
    y = rng.integers(0, 10, steps * batch).astype(np.int32)
    host = [(x[i * batch:(i + 1) * batch], y[i * batch:(i + 1) * batch]) for i in range(steps)]
    device = [(jnp.asarray(a), jnp.asarray(b)) for a, b in host]
    mk.random.set_seed(0)
    tape_step = train_step.mk_tape_step(train_step.classic_cnn(policy))
    model = train_step.classic_cnn(policy)
    model.compile(optimizer=mk.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")

    def steps_over(batches):
        def run():
            for a, b in batches:
                loss = tape_step(a, b)
            block(loss)
        return run

    def run_fit():
        model.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0)

    def run_train_on_batch():
        for a, b in device:
            loss = model.train_on_batch(a, b, return_dict=False)
        block(loss)

    return {"tape": steps_over(device), "tape np": steps_over(host), "fit": run_fit,
            "train_on_batch": run_train_on_batch}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", default=None, help="a dtype policy (mixed_bfloat16)")
    parser.add_argument("--steps", type=int, default=12, help="batches per epoch (train_step.py's 12)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--batch-size", type=int, default=128)
    args = parser.parse_args(argv)
    for name in ("steps", "rounds", "batch_size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')}: expected an integer >= 1, received {getattr(args, name)}")
    if args.policy is not None:
        mk.mixed_precision.Policy(args.policy)  # an unknown name stops here, before any timing
    runs = contenders(args.policy, args.steps, args.batch_size)
    for run in runs.values():  # compiles
        run()
    wall = {name: [] for name in runs}
    cpu = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, run in runs.items():
            start_wall, start_cpu = time.perf_counter(), time.process_time()
            run()
            wall[name].append(time.perf_counter() - start_wall)
            cpu[name].append(time.process_time() - start_cpu)
    print(f"{cpu_model()}; policy {args.policy or 'float32'}, batch {args.batch_size}, {args.steps} steps x "
          f"{args.rounds} rounds, interleaved, medians; ratio: the tape step's time / this one's")
    if args.policy is not None:
        print(f"bfloat16 products: {mk.config.bfloat16_products()}")
    tape_wall, tape_cpu = statistics.median(wall["tape"]), statistics.median(cpu["tape"])
    for name in runs:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        print(f"{name:15s} wall {1e3 * w / args.steps:7.2f} ms/step ({tape_wall / w:.3f}x)   "
              f"CPU {1e3 * c / args.steps:7.2f} ms/step ({tape_cpu / c:.3f}x)")


if __name__ == "__main__":
    main()
