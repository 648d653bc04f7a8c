"""XLA:CPU with bfloat16 inputs against float32: matmuls (``jax.lax.dot_general`` with
``preferred_element_type=float32``) and the MNIST CNN's convolutions (``conv_general_dilated``
on bfloat16, forward and both gradients), under ``jax.jit`` and under the XLA:CPU options
minikeras compiles with (convolutions on Eigen), beside minikeras's own convolutions
(``xla_cpu.conv``: float32 on its native kernels where built, and bfloat16 as a mixed layer runs
it: on the bfloat16 kernels on a CPU with AVX512_BF16, else widened) and an im2col formulation
on XLA's bfloat16 dot (patches @ filter, the padded dy's patches @ the flipped filter,
patches^T @ dy; float32 accumulation). Each convolution's contenders are timed in turn, the best
of the repeats kept. Prints GFLOP/s per shape and the CPU's bf16 flags; the figures decide
``xla_cpu.tuning.BF16_*``.

    python benchmarks/bf16_xla.py            # the table
    python benchmarks/bf16_xla.py --quick    # a smoke run (tiny repeats)
"""
import argparse
import functools
import time

import jax
import jax.numpy as jnp
import numpy as np

from minikeras import config as mk_config
from minikeras.xla_cpu import compiler, conv


def cpu_flags():
    """The bf16-related CPU flags of this machine ('avx512_bf16', 'amx_bf16', 'avx512f'), from /proc/cpuinfo."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        flags = []
    return [f for f in ("avx512f", "avx512_bf16", "amx_bf16", "avx2") if f in flags]


def interleaved_rates(contenders, repeats):
    """GFLOP/s of each ``name: (fn, args, flops)``, timed in turn (so machine load hits all alike),
    the best of ``repeats`` rounds kept."""
    for fn, args, _ in contenders.values():
        jax.block_until_ready(fn(*args))
    best = dict.fromkeys(contenders, float("inf"))
    for _ in range(repeats):
        for name, (fn, args, _) in contenders.items():
            start = time.perf_counter()
            jax.block_until_ready(fn(*args))
            best[name] = min(best[name], time.perf_counter() - start)
    return {name: flops / best[name] / 1e9 for name, (_, _, flops) in contenders.items()}


def dot_case(m, k, n, dtype):
    rng = np.random.default_rng(0)
    a = jnp.asarray(rng.standard_normal((m, k)), dtype)
    b = jnp.asarray(rng.standard_normal((k, n)), dtype)
    fn = jax.jit(lambda a, b: jax.lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                                   preferred_element_type=jnp.float32))
    return fn, (a, b), 2.0 * m * k * n


def _patches(xp, k, out):
    taps = [xp[:, i:i + out, j:j + out, :] for i in range(k) for j in range(k)]
    p = jnp.concatenate(taps, axis=-1)
    return p.reshape(-1, p.shape[-1])


def im2col_bf16(part, x, w, g):
    """The convolution of ``part`` as an im2col GEMM on XLA's bfloat16 dot, float32 accumulation."""
    k, _, cin, cout = w.shape
    out = x.shape[1] - k + 1
    if part == "forward":
        y = jnp.matmul(_patches(x, k, out), w.reshape(-1, cout), preferred_element_type=jnp.float32)
        return y.astype(x.dtype).reshape(x.shape[0], out, out, cout)
    if part == "input grad":
        gp = jnp.pad(g, ((0, 0), (k - 1, k - 1), (k - 1, k - 1), (0, 0)))
        flipped = jnp.flip(w, (0, 1)).transpose(0, 1, 3, 2).reshape(-1, cin)
        dx = jnp.matmul(_patches(gp, k, x.shape[1]), flipped, preferred_element_type=jnp.float32)
        return dx.astype(x.dtype).reshape(x.shape)
    dw = jax.lax.dot_general(_patches(x, k, out), g.reshape(-1, cout), (((0,), (0,)), ((), ())),
                             preferred_element_type=jnp.float32)
    return dw.astype(x.dtype).reshape(w.shape)


def conv_case(batch, size, cin, cout, dtype, part, minikeras=False, im2col=False):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((batch, size, size, cin)), dtype)
    w = jnp.asarray(rng.standard_normal((3, 3, cin, cout)) * 0.1, dtype)
    dn = ("NHWC", "HWIO", "NHWC")

    def xla_conv(x, w):
        return jax.lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=dn)
    out = size - 2
    flops = 2.0 * batch * out * out * 9 * cin * cout
    g = jnp.ones((batch, out, out, cout), dtype)
    if im2col:
        return compiler.jit(functools.partial(im2col_bf16, part)), (x, w, g), flops
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
                      lambda d, part=part, **how: conv_case(128 // scale, 26, 32, 64, d, part, **how)))
    print(f"minikeras's bfloat16 convolutions: {mk_config.bfloat16_products()}")
    for name, make in cases:
        contenders = {"float32": make(jnp.float32), "bfloat16": make(jnp.bfloat16)}
        if name.startswith("conv"):
            contenders["mk float32"] = make(jnp.float32, minikeras=True)
            contenders["mk bfloat16"] = make(jnp.bfloat16, minikeras=True)
            contenders["im2col bf16 dot"] = make(jnp.bfloat16, im2col=True)
        rates = interleaved_rates(contenders, repeats)
        line = (f"{name:44s} float32 {rates['float32']:7.1f} GFLOP/s  bfloat16 {rates['bfloat16']:7.1f} GFLOP/s  "
                f"({rates['bfloat16'] / rates['float32']:.2f}x)")
        if name.startswith("conv"):
            base = rates["mk float32"]
            line += "; " + ", ".join(f"{key} {rates[key]:7.1f} ({rates[key] / base:.2f}x mk float32)"
                                     for key in ("mk float32", "mk bfloat16", "im2col bf16 dot"))
        print(line)


if __name__ == "__main__":
    main()
