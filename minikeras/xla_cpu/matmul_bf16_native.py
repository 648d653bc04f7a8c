"""``matmul_tn(a, b)`` = ``a.T @ b`` for 2-D bfloat16 arrays on AVX512_BF16 (``matmul_bf16_native.cc``).

A bfloat16 Dense layer's weight gradient ``x.T @ g``, with float32 sums rounded to bfloat16 once
(what ``low_precision.matmul`` computes: only the order of the float32 sums differs). XLA:CPU
runs that product well below its bfloat16 GEMM rate (it widens a dot contracting the rows of
both operands, and on a row-major copy of ``x.T`` the shape is slow); the kernel pairs batch
rows for ``vdpbf16ps``. ``supported`` says where it applies (bfloat16, b with a multiple of 16
columns, a CPU with AVX512_BF16 of one of ``tuning.BF16_CONV_NATIVE_VENDORS``, the vendors whose
``vdpbf16ps`` is fast, big enough to be worth a call); elsewhere ``low_precision.matmul`` keeps
its own paths, so nothing changes on a CPU without the instructions. Differentiable in reverse
mode (``jax.custom_vjp``, the products of ``low_precision.matmul``); per element under ``vmap``.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.xla_cpu import low_precision, tuning
from minikeras.xla_cpu.native_build import register_targets, usable_cpus, why_unavailable

_SOURCE = "matmul_bf16_native.cc"
_TARGET = "minikeras_matmul_tn_bf16"


@functools.lru_cache(maxsize=None)
def available():
    """True when this CPU has AVX512_BF16 and the kernel is built and registered with XLA:CPU."""
    return "avx512_bf16" in low_precision.cpu_flags() and register_targets(_SOURCE, {_TARGET: "MinikerasMatmulTnBf16"})


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


@jax.custom_vjp
def matmul_tn(a, b):
    """``a.T @ b`` (a: (K, M), b: (K, N), bfloat16) on the kernel; call only where ``supported``
    and ``available``."""
    out = jax.ShapeDtypeStruct((a.shape[1], b.shape[1]), a.dtype)
    return jax.ffi.ffi_call(_TARGET, out, vmap_method="sequential")(a, b, threads=np.int64(usable_cpus()))


def _fwd(a, b):
    return matmul_tn(a, b), (a, b)


def _bwd(residuals, g):
    a, b = residuals  # d(a^T b)/da = b g^T, d(a^T b)/db = a g
    return low_precision.matmul(b, g, transpose_b=True), low_precision.matmul(a, g)


matmul_tn.defvjp(_fwd, _bwd)
