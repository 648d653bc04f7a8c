"""XLA:CPU with bfloat16 inputs against float32: matmuls (``jax.lax.dot_general`` with
``preferred_element_type=float32``) and the MNIST CNN's convolutions (``conv_general_dilated``
on bfloat16, forward and both gradients), under ``jax.jit`` and under the XLA:CPU options
minikeras compiles with (convolutions on Eigen), beside minikeras's own float32 convolution
(``xla_cpu.conv``: its native kernels where built). Prints GFLOP/s per shape and the CPU's bf16
flags; the figures decide ``xla_cpu.tuning.BF16_*``.

    python benchmarks/bf16_xla.py            # the table
    python benchmarks/bf16_xla.py --quick    # a smoke run (tiny repeats)
"""
import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.xla_cpu import compiler, conv


def cpu_flags():
    """The bf16-related CPU flags of this machine ('avx512_bf16', 'amx_bf16', 'avx512f'), from /proc/cpuinfo."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        flags = []
    return [f for f in ("avx512f", "avx512_bf16", "amx_bf16", "avx2") if f in flags]


def best_time(fn, args, repeats):
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return min(times)


def dot_case(m, k, n, dtype):
    rng = np.random.default_rng(0)
    a = jnp.asarray(rng.standard_normal((m, k)), dtype)
    b = jnp.asarray(rng.standard_normal((k, n)), dtype)
    fn = jax.jit(lambda a, b: jax.lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                                   preferred_element_type=jnp.float32))
    return fn, (a, b), 2.0 * m * k * n


def conv_case(batch, size, cin, cout, dtype, part, minikeras=False):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((batch, size, size, cin)), dtype)
    w = jnp.asarray(rng.standard_normal((3, 3, cin, cout)) * 0.1, dtype)
    dn = ("NHWC", "HWIO", "NHWC")

    def xla_conv(x, w):
        return jax.lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=dn)
    out = size - 2
    flops = 2.0 * batch * out * out * 9 * cin * cout
    g = jnp.ones((batch, out, out, cout), dtype)
    if minikeras:  # minikeras's formulation (native kernels where built), compiled as its programs are
        kernels = {"forward": (lambda x, w, g: conv.conv2d_forward(x, w)),
                   "input grad": (lambda x, w, g: conv.conv2d_input_grad(g, w, x.shape)),
                   "filter grad": (lambda x, w, g: conv.conv2d_filter_grad(x, g, w.shape))}
        return compiler.jit(kernels[part]), (x, w, g), flops
    if part == "forward":
        return jax.jit(xla_conv), (x, w), flops
    index = 0 if part == "input grad" else 1
    fn = jax.jit(lambda x, w, g: jax.vjp(xla_conv, x, w)[1](g)[index])
    return fn, (x, w, g), flops


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeats = 2 if args.quick else 10
    scale = 8 if args.quick else 1
    print(f"jax {jax.__version__}, CPU flags: {' '.join(cpu_flags()) or 'none of avx2/avx512f/avx512_bf16/amx_bf16'}")
    cases = [("dot 2048^3", lambda d: dot_case(2048 // scale, 2048 // scale, 2048 // scale, d)),
             ("dot 128x9216 @ 9216x128 (Dense)", lambda d: dot_case(128, 9216 // scale, 128, d))]
    for part in ("forward", "input grad", "filter grad"):
        cases.append((f"conv 3x3 32->64 26x26 b128 {part}",
                      lambda d, minikeras=False, part=part: conv_case(128 // scale, 26, 32, 64, d, part, minikeras)))
    for name, make in cases:
        rates = {}
        for dtype in (jnp.float32, jnp.bfloat16):
            fn, fn_args, flops = make(dtype)
            rates[jnp.dtype(dtype).name] = flops / best_time(fn, fn_args, repeats) / 1e9
        line = (f"{name:44s} float32 {rates['float32']:7.1f} GFLOP/s  bfloat16 {rates['bfloat16']:7.1f} GFLOP/s  "
                f"({rates['bfloat16'] / rates['float32']:.2f}x)")
        if name.startswith("conv"):  # minikeras's float32 kernel, what a widened bfloat16 convolution runs
            fn, fn_args, flops = make(jnp.float32, minikeras=True)
            line += f"; minikeras float32 {flops / best_time(fn, fn_args, repeats) / 1e9:7.1f} GFLOP/s"
        print(line)


if __name__ == "__main__":
    main()
