"""``matmul_tn(a, b)`` = ``a.T @ b`` and ``matmul_nt(a, b)`` = ``a @ b.T`` for 2-D bfloat16 arrays on
AVX512_BF16 (``matmul_bf16_native.cc``).

A bfloat16 Dense layer's weight gradient ``x.T @ g``, with float32 sums rounded to bfloat16 once
(what ``low_precision.matmul`` computes: only the order of the float32 sums differs). XLA:CPU
runs that product well below its bfloat16 GEMM rate (it widens a dot contracting the rows of
both operands, and on a row-major copy of ``x.T`` the shape is slow); the kernel pairs batch
rows for ``vdpbf16ps``. ``supported`` says where it applies (bfloat16, b with a multiple of 16
columns, a CPU with AVX512_BF16 of one of ``tuning.BF16_CONV_NATIVE_VENDORS``, the vendors whose
``vdpbf16ps`` is fast, big enough to be worth a call); elsewhere ``low_precision.matmul`` keeps
its own paths, so nothing changes on a CPU without the instructions. Differentiable in reverse
mode (``jax.custom_vjp``, the products of ``low_precision.matmul``); per element under ``vmap``.

``matmul_nt`` is the same layer's input gradient ``g @ W.T``: XLA:CPU widens a bfloat16 dot whose
operand arrives transposed, so ``low_precision.matmul`` gives it a row-major copy of ``W.T`` first,
a transpose pass over the kernel every step; the kernel reads W as it lies (its rows paired per
block, in cache) and writes bfloat16 (XLA's dot wrote float32, rounded in the next pass).
``supported_nt`` says where it applies (as ``supported``, with the contraction even and B's rows a
multiple of 16; ``tuning.BF16_MATMUL_NT_NATIVE``).
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.xla_cpu import low_precision, tuning
from minikeras.xla_cpu.native_build import register_targets, usable_cpus, why_unavailable

_SOURCE = "matmul_bf16_native.cc"
_TARGET = "minikeras_matmul_tn_bf16"
_TARGET_NT = "minikeras_matmul_nt_bf16"
_TARGET_WIDENED = "minikeras_matmul_tn_bf16_widened"


@functools.lru_cache(maxsize=None)
def available():
    """True when this CPU has AVX512_BF16 and the kernel is built and registered with XLA:CPU."""
    return "avx512_bf16" in low_precision.cpu_flags() and register_targets(
        _SOURCE, {_TARGET: "MinikerasMatmulTnBf16", _TARGET_NT: "MinikerasMatmulNtBf16",
                  _TARGET_WIDENED: "MinikerasMatmulTnBf16Widened"})


def unavailable_reason():
    """Why ``available()`` is False ('' when it is True or was not asked)."""
    if "avx512_bf16" not in low_precision.cpu_flags():
        return "the CPU lacks AVX512_BF16 (the 'avx512_bf16' flag of /proc/cpuinfo)"
    return why_unavailable(_SOURCE)


def supported(a_shape, b_shape, dtype):
    """Whether the kernel computes ``a.T @ b`` for these (concrete) shapes and dtype here (not
    whether it is built: ``available``)."""
    return (tuning.NATIVE_KERNELS and tuning.BF16_CONV_NATIVE and jax.default_backend() == "cpu"
            and jnp.dtype(dtype) == low_precision.BFLOAT16
            and low_precision.cpu_vendor() in tuning.BF16_CONV_NATIVE_VENDORS
            and len(a_shape) == 2 and len(b_shape) == 2 and all(type(d) is int for d in (*a_shape, *b_shape))
            and a_shape[0] == b_shape[0] and b_shape[1] % 16 == 0
            and 2 * a_shape[0] * a_shape[1] * b_shape[1] >= tuning.MATMUL_NATIVE_FLOPS)


def supported_nt(a_shape, b_shape, dtype):
    """Whether ``matmul_nt`` computes ``a @ b.T`` for these (concrete) shapes and dtype here: a
    (M, K), b (N, K), K even, N a multiple of 16, big enough to be worth a call (not whether it is
    built: ``available``)."""
    return (tuning.BF16_MATMUL_NT_NATIVE and tuning.NATIVE_KERNELS and tuning.BF16_CONV_NATIVE
            and jax.default_backend() == "cpu" and jnp.dtype(dtype) == low_precision.BFLOAT16
            and low_precision.cpu_vendor() in tuning.BF16_CONV_NATIVE_VENDORS
            and len(a_shape) == 2 and len(b_shape) == 2 and all(type(d) is int for d in (*a_shape, *b_shape))
            and a_shape[1] == b_shape[1] and a_shape[1] % 2 == 0 and b_shape[0] % 16 == 0
            and 2 * a_shape[0] * a_shape[1] * b_shape[0] >= tuning.MATMUL_NATIVE_FLOPS)


@jax.custom_vjp
def matmul_nt(a, b):
    """``a @ b.T`` (a: (M, K), b: (N, K), bfloat16) on the kernel; call only where ``supported_nt``
    and ``available``."""
    out = jax.ShapeDtypeStruct((a.shape[0], b.shape[0]), a.dtype)
    return jax.ffi.ffi_call(_TARGET_NT, out, vmap_method="sequential")(a, b, threads=np.int64(usable_cpus()))


def _fwd_nt(a, b):
    return matmul_nt(a, b), (a, b)


def _bwd_nt(residuals, g):
    a, b = residuals  # d(a b^T)/da = g b, d(a b^T)/db = g^T a
    return low_precision.matmul(g, b), low_precision.matmul(g, a, transpose_a=True)


matmul_nt.defvjp(_fwd_nt, _bwd_nt)


def matmul_tn(a, b):
    """``a.T @ b`` (a: (K, M), b: (K, N), bfloat16) on the kernel; call only where ``supported``
    and ``available``. With ``tuning.BF16_WEIGHT_GRADIENT_WIDENED`` the kernel writes the rounded
    result widened to float32 and the bfloat16 array is converted from it
    (``low_precision.with_widened``): a float32 weight's gradient (``mk.cast`` to float32 next)
    is then the kernel's output itself, and the conversion is only computed where something reads
    the bfloat16 array."""
    if not tuning.BF16_WEIGHT_GRADIENT_WIDENED:
        return _matmul_tn_narrow(a, b)
    wide = _matmul_tn_widened(a, b)
    return low_precision.with_widened(wide.astype(a.dtype), wide)


def _tn_products(residuals, g):
    a, b = residuals  # d(a^T b)/da = b g^T, d(a^T b)/db = a g
    return low_precision.matmul(b, g, transpose_b=True), low_precision.matmul(a, g)


@jax.custom_vjp
def _matmul_tn_narrow(a, b):
    out = jax.ShapeDtypeStruct((a.shape[1], b.shape[1]), a.dtype)
    return jax.ffi.ffi_call(_TARGET, out, vmap_method="sequential")(a, b, threads=np.int64(usable_cpus()))


_matmul_tn_narrow.defvjp(lambda a, b: (_matmul_tn_narrow(a, b), (a, b)), _tn_products)


@jax.custom_vjp
def _matmul_tn_widened(a, b):
    out = jax.ShapeDtypeStruct((a.shape[1], b.shape[1]), jnp.float32)
    return jax.ffi.ffi_call(_TARGET_WIDENED, out, vmap_method="sequential")(a, b, threads=np.int64(usable_cpus()))


_matmul_tn_widened.defvjp(lambda a, b: (_matmul_tn_widened(a, b), (a, b)),
                          lambda residuals, g: _tn_products(residuals, g.astype(residuals[0].dtype)))
