"""A recurrent layer's per-step products inside a loop of 100 steps: XLA's dot against
``xla_cpu.matmul_native``'s ``a @ b`` kernel, as CPU-time ratios (above 1: the kernel is faster).

- backward ``dz @ U.T``: dz (batch, gates*units), ``U.T`` made once before the loop (what the
  fused loop's reverse scan runs, ``ops.fused.step_matmul``);
- forward ``h @ U``: h (batch, units) (which stays on XLA's dot: ``xla_cpu/tuning.py``).

Each loop step applies a tanh so that XLA cannot hoist or fuse the product away. The contenders
run in turn within each round, in one process, and each time is the median of ``--rounds``;
process CPU time, so that other processes on the machine change the ratios little.
``--threads 2`` runs the kernel on two threads (the calling one and one of XLA's pool per step) and
``--wall`` times wall time instead, for a quiet machine, where splitting each step's product over
both cores may pay; ``--pair`` adds ``xla_cpu.rnn_step_native``'s kernel on the calling thread and a
helper thread of its own, ``--both`` prints wall and CPU time ratios from the same rounds.
``--avx2`` also builds the kernel without AVX-512 (``-mno-avx512f``, the same source) and times
it on this CPU, a stand-in for a CPU without AVX-512 (against XLA's AVX-512 dot here).

    python benchmarks/rnn_products.py                      # the sizes of xla_cpu/tuning.py's row
    python benchmarks/rnn_products.py --sizes 64x128x4 --avx2
    python benchmarks/rnn_products.py --sizes 64x128x4 --threads 2 --wall   # quiet machine only
    python benchmarks/rnn_products.py --sizes 64x128x4 64x128x3 --pair --both   # quiet machine only
    python benchmarks/rnn_products.py --sizes 4x16x1 --rounds 1 --steps 2   # smoke
"""
import argparse
import ctypes
import os
import subprocess
import sys
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import cpu_model  # noqa: E402

import minikeras  # noqa: F401  (its malloc setting, as in every benchmark)
from minikeras.xla_cpu import jit, matmul_native, native_build, rnn_step_native

_AVX2_TARGET = "minikeras_matmul_nn_avx2_benchmark"
_PAIR_TARGET = "minikeras_rnn_step_matmul"


def _register_avx2_build():
    """Builds matmul_native.cc without AVX-512 into a temporary folder and registers its a @ b kernel."""
    source = os.path.join(os.path.dirname(native_build.__file__), "matmul_native.cc")
    out = os.path.join(tempfile.mkdtemp(), "matmul_avx2.so")
    compiler = os.environ.get("CXX", "c++")
    subprocess.run([compiler, "-O3", "-march=native", "-mno-avx512f", "-ffp-contract=fast", "-std=c++17", "-shared",
                    "-fPIC", "-pthread", "-w", "-I", jax.ffi.include_dir(), source, "-o", out], check=True)
    library = ctypes.CDLL(out)
    jax.ffi.register_ffi_target(_AVX2_TARGET, jax.ffi.pycapsule(library.MinikerasMatmulNn), platform="cpu")


def _kernel(target, threads=1):
    def product(a, b):
        return jax.ffi.ffi_call(target, jax.ShapeDtypeStruct((a.shape[0], b.shape[1]), a.dtype))(
            a, b, threads=np.int64(threads))
    return product


def contenders(units, gates, steps, avx2, threads, pair):
    """name -> a compiled loop of ``steps`` products (backward dz @ U.T and forward h @ U)."""
    products = {"xla": lambda a, b: a @ b, "native": _kernel("minikeras_matmul_nn")}
    if threads > 1:
        products[f"native_{threads}_threads"] = _kernel("minikeras_matmul_nn", threads)
    if pair:
        products["native_pair"] = _kernel(_PAIR_TARGET, 2)
    if avx2:
        products["native_avx2"] = _kernel(_AVX2_TARGET)
    loops = {}
    for name, product in products.items():
        def backward(d, u, product=product):
            u_t = u.T
            return jax.lax.fori_loop(0, steps, lambda i, d: jnp.tile(jnp.tanh(product(d, u_t)), (1, gates)), d)

        def forward(d, u, product=product):
            return jax.lax.fori_loop(0, steps, lambda i, q: jnp.tanh(product(q[:, :units], u)), d)
        loops["backward " + name] = jit(backward)
        loops["forward " + name] = jit(forward)
    return loops


def time_size(batch, units, gates, args):
    rng = np.random.default_rng(0)
    u = jnp.asarray(rng.normal(size=(units, gates * units)).astype("float32") * 0.05)
    d = jnp.asarray(rng.normal(size=(batch, gates * units)).astype("float32"))
    loops = contenders(units, gates, args.steps, args.avx2, args.threads, args.pair)
    clock = time.perf_counter if args.wall else time.process_time
    for name, product in ((("native", _kernel("minikeras_matmul_nn")),)
                          + ((("native_avx2", _kernel(_AVX2_TARGET)),) if args.avx2 else ())
                          + ((("native_pair", _kernel(_PAIR_TARGET, 2)),) if args.pair else ())):
        got, want = jax.jit(product)(d, u.T), d @ u.T  # one product: 100 steps of tanh amplify rounding
        assert float(jnp.max(jnp.abs(got - want))) <= 1e-5 * max(1.0, float(jnp.max(jnp.abs(want)))), name
    clocks = {"wall": time.perf_counter, "CPU": time.process_time} if args.both else \
        {"wall" if args.wall else "CPU": clock}
    times = {(kind, name): [] for kind in clocks for name in loops}
    for _ in range(args.rounds):
        for name, loop in loops.items():
            start = {kind: c() for kind, c in clocks.items()}
            for _ in range(args.calls):
                loop(d, u).block_until_ready()
            for kind, c in clocks.items():
                times[kind, name].append((c() - start[kind]) / args.calls)
    median = {key: sorted(t)[len(t) // 2] for key, t in times.items()}
    for kind in clocks:
        parts = []
        for direction in ("backward", "forward"):
            xla = median[kind, direction + " xla"]
            ratios = ", ".join(f"{name.split()[1]} {xla / t:.2f}x" for (k, name), t in median.items()
                               if k == kind and name.startswith(direction) and not name.endswith("xla"))
            parts.append(f"{direction} {1e3 * xla:.2f} ms (XLA) / {ratios}")
        print(f"batch {batch}, units {units}, gates {gates}, {kind}: " + "; ".join(parts), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", default=["32x32x4", "16x64x4", "64x128x4", "64x128x3", "256x128x4",
                                                        "64x256x3"], help="batch x units x gates")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=5, help="loops per timed run")
    parser.add_argument("--avx2", action="store_true")
    parser.add_argument("--threads", type=int, default=1, help="also the kernel on this many threads")
    parser.add_argument("--wall", action="store_true", help="wall time instead of process CPU time")
    parser.add_argument("--pair", action="store_true",
                        help="also the kernel on the calling thread and a helper thread of its own (ThreadPair)")
    parser.add_argument("--both", action="store_true", help="wall and process CPU time, each as ratios")
    args = parser.parse_args()
    if not matmul_native.available():
        sys.exit("matmul_native.cc could not be built here: " + native_build.why_unavailable("matmul_native.cc"))
    if args.avx2:
        _register_avx2_build()
    if args.pair and not rnn_step_native.available():
        sys.exit("rnn_step_native.cc could not be built here: " + native_build.why_unavailable("rnn_step_native.cc"))
    what = "wall and CPU" if args.both else "wall" if args.wall else "CPU"
    print(f"jax {jax.__version__}, {cpu_model()}; {what} time XLA / kernel, median of {args.rounds} rounds")
    for size in args.sizes:
        time_size(*(int(v) for v in size.split("x")), args)


if __name__ == "__main__":
    main()
