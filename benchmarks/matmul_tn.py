"""A Dense or EinsumDense weight gradient ``x.T @ g``: minikeras's ``matmul_tn`` kernel against XLA's dot.

For each ``K x M x N`` shape (x: (K, M), g: (K, N)) both run in this process, interleaved, and the
table gives the medians of wall and CPU time (CPU time sums this process's threads, which a loaded
machine distorts less) and XLA's time over the kernel's. ``xla_cpu.matmul_native.supported`` and
``tuning.MATMUL_NATIVE_FLOPS`` decide where the kernel runs; this shows whether it should.

The default shapes are the keras.io models' and the MNIST CNN's: the miniature GPT's vocabulary
layer (2560 x 256 x 20000) and feed-forward layer, the ViT's attention projections (9216 x 64 x
256, 9216 x 256 x 64), MLP and head (64 x 9216 x 2048), and the MNIST CNN's Dense (128 x 9216 x 128).

    python benchmarks/matmul_tn.py
    python benchmarks/matmul_tn.py --shapes 4096x512x512 --rounds 21
"""
import argparse
import os
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import cpu_model  # noqa: E402

from minikeras.xla_cpu import matmul_native  # noqa: E402
from minikeras.xla_cpu.native_build import why_unavailable  # noqa: E402

DEFAULT_SHAPES = ["2560x256x20000", "2560x256x256", "9216x64x256", "9216x256x64", "9216x64x128",
                  "64x9216x2048", "128x9216x128"]


def compare(k, m, n, rounds):
    """{'kernel'|'xla': (median wall s, median CPU s)} for ``x.T @ g`` of these sizes."""
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((k, m), dtype=np.float32))
    g = jnp.asarray(rng.standard_normal((k, n), dtype=np.float32))
    contenders = {"kernel": jax.jit(matmul_native.matmul_tn), "xla": jax.jit(lambda a, b: a.T @ b)}
    for function in contenders.values():
        function(x, g).block_until_ready()
    wall = {name: [] for name in contenders}
    cpu = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, function in contenders.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            function(x, g).block_until_ready()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    return {name: (statistics.median(wall[name]), statistics.median(cpu[name])) for name in contenders}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="+", default=DEFAULT_SHAPES, help="KxMxN: x (K, M), g (K, N)")
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args(argv)
    if not matmul_native.available():
        print(f"the kernel is not available here: {why_unavailable('matmul_native.cc')}")
        return
    print(f"CPU: {cpu_model()}, {os.cpu_count()} CPUs; median of {args.rounds} interleaved rounds")
    print(f"{'K x M x N':>16s} {'kernel ms':>10s} {'xla ms':>8s} {'xla/kernel':>10s} "
          f"{'kernel CPU ms':>13s} {'xla CPU ms':>10s} {'xla/kernel':>10s}")
    for shape in args.shapes:
        k, m, n = (int(v) for v in shape.split("x"))
        if not matmul_native.supported((k, m), (k, n), jnp.float32):
            print(f"{shape:>16s} the kernel does not take this shape (N % 16, or under MATMUL_NATIVE_FLOPS)")
            continue
        times = compare(k, m, n, args.rounds)
        (kw, kc), (xw, xc) = times["kernel"], times["xla"]
        print(f"{shape:>16s} {kw * 1e3:10.2f} {xw * 1e3:8.2f} {xw / kw:9.2f}x {kc * 1e3:13.2f} {xc * 1e3:10.2f} "
              f"{xc / kc:9.2f}x")


if __name__ == "__main__":
    main()
