"""A Dense layer's kernel and bias gradients from one pass over g (``ops.nn_dense.dense_bias``)
against the separate product and bias add (the kernel gradient on ``matmul_tn``, the bias
gradient a sum of its own), both in this process, interleaved (the order alternating by round).

"Old" is the layer traced with ``ops.fused.dense_bias`` answering None (the path before it), or
with ``--old native-wide`` with ``matmul_native.MAX_COLUMNS`` out of reach (the native kernel for
the vocabulary's x^T g instead of XLA's dot), or ``--old both``; "new" is the working tree's. Printed: per round
old/new of wall and CPU time (CPU time sums this process's threads), and their medians. Parts:

* ``head``: the miniature GPT's vocabulary layer alone, Dense(20000) on (batch, 80, 256), its
  input, kernel and bias gradients of a sum of its output (one ``mk.function``);
* ``gpt``, ``vit``: ``benchmarks/keras_io_models.py``'s miniature GPT or Vision Transformer (use
  ``--batch-size 64``, the example's), one ``fit`` epoch of ``--steps`` batches per timed call.

    python benchmarks/dense_bias_gradient.py --part head --rounds 9
    python benchmarks/dense_bias_gradient.py --part gpt --rounds 9
    python benchmarks/dense_bias_gradient.py --part gpt --rounds 9 --old native-wide
    python benchmarks/dense_bias_gradient.py --part gpt --batch-size 2 --steps 1 --rounds 1   # smoke run
"""
import argparse
import contextlib
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keras_io_models  # noqa: E402
from common import block, cpu_model  # noqa: E402

import minikeras as mk  # noqa: E402
from minikeras import keras  # noqa: E402
from minikeras.layers.core import dense  # noqa: E402
from minikeras.xla_cpu import matmul_native  # noqa: E402

OLD = "separate-ops"  # set by --old


@contextlib.contextmanager
def old_code():
    """While a step is traced: Dense as before ``dense_bias`` (the product, then the bias add;
    ``OLD`` "separate-ops"), the native x^T g kernel at every width ("native-wide"), or both."""
    patches = []
    if OLD in ("separate-ops", "both"):
        patches.append((dense, "dense_bias", lambda x, kernel, bias: None))
    if OLD in ("native-wide", "both"):
        patches.append((matmul_native, "MAX_COLUMNS", 1 << 30))
    saved = [(module, name, getattr(module, name)) for module, name, _ in patches]
    for module, name, value in patches:
        setattr(module, name, value)
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


def head_runs(batch):
    x = mk.constant(np.random.default_rng(0).standard_normal((batch, 80, 256)).astype(np.float32))
    runs = {}
    for name in ("old", "new"):
        layer = mk.layers.Dense(20000)
        layer(x)

        @mk.function
        def grads(x, layer=layer):
            with mk.GradientTape() as tape:
                tape.watch(x)
                loss = mk.reduce_sum(layer(x))
            return tape.gradient(loss, [x, layer.kernel, layer.bias])

        with old_code() if name == "old" else contextlib.nullcontext():
            block(grads(x))
        runs[name] = lambda grads=grads: block(grads(x))
    return runs


def fit_runs(kind, batch, steps):
    runs = {}
    for name in ("old", "new"):
        model, x, y = keras_io_models.build(kind, keras, batch, steps)
        with old_code() if name == "old" else contextlib.nullcontext():
            model.fit(x, y, batch_size=batch, epochs=1, verbose=0)
        runs[name] = lambda model=model, x=x, y=y: model.fit(x, y, batch_size=batch, epochs=1, verbose=0)
    return runs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["head", "gpt", "vit"], default="head")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps", type=int, default=2, help="gpt, vit: batches per fit epoch")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--old", choices=["separate-ops", "native-wide", "both"], default="separate-ops")
    args = parser.parse_args(argv)
    global OLD
    OLD = args.old
    runs = head_runs(args.batch_size) if args.part == "head" else fit_runs(args.part, args.batch_size, args.steps)
    times = {name: [] for name in runs}
    for r in range(args.rounds):
        for name in (("old", "new") if r % 2 == 0 else ("new", "old")):
            wall, cpu = time.perf_counter(), time.process_time()
            runs[name]()
            times[name].append((time.perf_counter() - wall, time.process_time() - cpu))
    print(f"{cpu_model()}; {args.part}, batch {args.batch_size}, {args.rounds} rounds, old: {OLD}; old/new per round:")
    ratios = [[o[i] / n[i] for o, n in zip(times["old"], times["new"])] for i in (0, 1)]
    for what, values in zip(("wall", "CPU"), ratios):
        print(f"  {what:4s} median {statistics.median(values):.3f}  rounds " + " ".join(f"{v:.2f}" for v in values))


if __name__ == "__main__":
    main()
