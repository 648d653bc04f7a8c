"""Sparse categorical cross-entropy of logits, forward and gradient together: XLA's code for the jax
formulas against the native kernels (``xla_cpu.logits_crossentropy_native``), per number of classes.

Both are compiled as minikeras compiles (``xla_cpu.jit``) from ``ops.nn_losses``' forward and
gradient functions, once with ``tuning.LOGITS_CROSSENTROPY_NATIVE`` off and once on (every width
taken), and timed in alternating rounds. The ratio XLA / native above 1 means the kernels are
faster; ``tuning.LOGITS_CROSSENTROPY_NATIVE_MIN_CLASSES`` is set from it.

    python benchmarks/logits_crossentropy.py
    python benchmarks/logits_crossentropy.py --rows 2560 --classes 20000   # the miniature GPT's head
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))
import jax  # noqa: E402
import numpy as np  # noqa: E402
from common import alternating_rounds, cpu_model  # noqa: E402

from minikeras.ops import nn_losses  # noqa: E402
from minikeras.xla_cpu import jit, low_precision, tuning  # noqa: E402


def both(labels, logits, g):
    out = nn_losses._sparse_ce_logits_forward(labels, logits)
    return out, nn_losses._sparse_ce_logits_gradient_forward(labels, logits, out, g)


def compiled(native, labels, logits, g):
    """``both`` compiled with the kernels off or on (every width), warmed up."""
    saved = tuning.LOGITS_CROSSENTROPY_NATIVE, tuning.LOGITS_CROSSENTROPY_NATIVE_MIN_CLASSES
    tuning.LOGITS_CROSSENTROPY_NATIVE, tuning.LOGITS_CROSSENTROPY_NATIVE_MIN_CLASSES = native, 1
    try:
        function = jit(both)
        jax.block_until_ready(function(labels, logits, g))
    finally:
        tuning.LOGITS_CROSSENTROPY_NATIVE, tuning.LOGITS_CROSSENTROPY_NATIVE_MIN_CLASSES = saved
    return function


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1024)
    parser.add_argument("--classes", type=int, nargs="*", default=[64, 128, 256, 512, 1024, 4096])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20, help="calls per timed round")
    args = parser.parse_args(argv)
    print(f"{cpu_model()}, {os.cpu_count()} CPUs; avx512f: {'avx512f' in low_precision.cpu_flags()}; "
          f"{args.rows} rows; forward and gradient together, ms per call (medians of {args.rounds} rounds)")
    rng = np.random.default_rng(0)
    for n in args.classes:
        logits = (rng.standard_normal((args.rows, n)) * 3).astype(np.float32)
        labels = rng.integers(0, n, args.rows).astype(np.int32)
        g = rng.standard_normal((args.rows, 3)).astype(np.float32)
        functions = {native: compiled(native, labels, logits, g) for native in (False, True)}
        times = alternating_rounds({native: (lambda f=f: f(labels, logits, g)) for native, f in functions.items()},
                                   args.rounds, args.calls)
        xla, native = (statistics.median(times[k]["wall"]) for k in (False, True))
        print(f"  {n:6d} classes: XLA {xla:8.3f}  native {native:8.3f}  XLA / native {xla / native:5.2f}x")


if __name__ == "__main__":
    main()
