"""``matmul_tn(a, b)`` = ``a.T @ b`` and ``matmul_nn(a, b)`` = ``a @ b`` for 2-D float32 arrays, as native CPU
kernels (``matmul_native.cc``).

The weight gradient of a Dense layer is ``x.T @ g``: a product contracting the rows of both
operands, which XLA:CPU runs well below its GEMM speed (and transposing an operand first does not
help: XLA fuses the transpose back). The kernel runs it close to GEMM speed where ``b`` has a
multiple of 16 columns and fewer than ``MAX_COLUMNS``; ``supported`` says where it applies and
``available()`` builds it on first use (``native_build``). Elsewhere, or where it cannot be built,
``matmul_tn`` is ``a.T @ b`` in XLA. With jax 0.10's YNNPACK, XLA's dot is the faster one for wide
products (benchmarks/LOG.md, sixteenth session: ``python benchmarks/matmul_tn.py``, CPU time of
XLA's over the kernel's on a Zen 4: 0.78-0.89x from 1024 columns on, among them the miniature
GPT's 2560 x 256 x 20000 vocabulary gradient, the ViT's 64 x 9216 x 2048 head and ResNet50's
3136 x 256 x 1024 filter gradient; 0.92-1.26x at 256 and 512 columns).
It is differentiable in reverse mode (``jax.custom_vjp``); under ``vmap`` it runs per element.

``matmul_tn_and_column_sums(a, b)`` = ``(a.T @ b, b.sum(0))``: a Dense layer's kernel and bias
gradients, ``x^T g`` and the sum of ``g`` over its rows, from one pass of the kernel over ``g`` (the
blocks of the product's last rows add up the slices of ``g`` they read); where it does not apply,
``matmul_tn`` and a sum. Each column's sum runs in order of the rows (a float32 sequential sum's
rounding, as ``wide_sum``'s product with ones has).

``matmul_nn`` is a recurrent layer's backward step, ``dz @ U.T`` with ``U.T`` made once before the
loop: few rows (the batch) against a kernel read by column panels that stay in the core's cache,
each sum in order of k (at LSTM(128)'s step, the bits of XLA's dot). Inside the loop it ran
1.04-1.5x XLA's dot on AVX-512; built for AVX2 it lost at some sizes, so it runs where the CPU
has AVX-512 (``tuning.MATMUL_NN_NATIVE_FLOPS``, ``tuning.MATMUL_NN_NATIVE_NEEDS_AVX512``).
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.xla_cpu import tuning
from minikeras.xla_cpu.low_precision import cpu_flags
from minikeras.xla_cpu.native_build import register_targets, usable_cpus

_TARGET = "minikeras_matmul_tn"
_TARGET_NN = "minikeras_matmul_nn"
_TARGET_SUMS = "minikeras_matmul_tn_sums"

# from this many columns of ``b`` on, XLA's dot runs ``a.T @ b`` faster than the kernel (module docstring)
MAX_COLUMNS = 1024


@functools.lru_cache(maxsize=None)
def available():
    """True when the kernels are built for this machine and registered with XLA:CPU."""
    return register_targets("matmul_native.cc", {_TARGET: "MinikerasMatmulTn", _TARGET_NN: "MinikerasMatmulNn",
                                                  _TARGET_SUMS: "MinikerasMatmulTnSums"})


def supported(a_shape, b_shape, dtype):
    """Whether the kernel takes ``a.T @ b`` for these (concrete) shapes and dtype on this backend,
    and the product is big enough (``tuning.MATMUL_NATIVE_FLOPS``) to be worth a call and ``b`` narrower than
    ``MAX_COLUMNS``."""
    return (tuning.NATIVE_KERNELS and jax.default_backend() == "cpu" and jnp.dtype(dtype) == jnp.float32
            and len(a_shape) == 2 and len(b_shape) == 2 and all(type(d) is int for d in (*a_shape, *b_shape))
            and a_shape[0] == b_shape[0] and b_shape[1] % 16 == 0 and b_shape[1] < MAX_COLUMNS
            and 2 * a_shape[0] * a_shape[1] * b_shape[1] >= tuning.MATMUL_NATIVE_FLOPS)


@jax.custom_vjp
def _native(a, b):
    out = jax.ShapeDtypeStruct((a.shape[1], b.shape[1]), a.dtype)
    return jax.ffi.ffi_call(_TARGET, out, vmap_method="sequential")(a, b, threads=np.int64(usable_cpus()))


def _native_fwd(a, b):
    return _native(a, b), (a, b)


def _native_bwd(residuals, g):
    a, b = residuals
    return b @ g.T, a @ g  # d(a^T b)/da = b g^T, d(a^T b)/db = a g


_native.defvjp(_native_fwd, _native_bwd)


def matmul_tn(a, b):
    """``a.T @ b`` (a: (K, M), b: (K, N)); on the native kernel where ``supported`` and ``available``."""
    if supported(a.shape, b.shape, a.dtype) and available():
        return _native(a, b)
    return jnp.matmul(jnp.swapaxes(a, -1, -2), b)


@jax.custom_vjp
def _native_sums(a, b):
    out = (jax.ShapeDtypeStruct((a.shape[1], b.shape[1]), a.dtype), jax.ShapeDtypeStruct((b.shape[1],), b.dtype))
    return jax.ffi.ffi_call(_TARGET_SUMS, out, vmap_method="sequential")(a, b, threads=np.int64(usable_cpus()))


def _native_sums_fwd(a, b):
    return _native_sums(a, b), (a, b)


def _native_sums_bwd(residuals, cotangents):
    a, b = residuals
    g_product, g_sums = cotangents
    return b @ g_product.T, a @ g_product + g_sums  # the sums' cotangent reaches every row of b


_native_sums.defvjp(_native_sums_fwd, _native_sums_bwd)


def matmul_tn_and_column_sums(a, b):
    """``(a.T @ b, b.sum(0))`` (a: (K, M), b: (K, N)); from one pass of the native kernel over ``b`` where
    ``supported`` and ``available``; for float32 ``b`` of ``MAX_COLUMNS`` columns or more, from XLA's dot
    of ``a`` with a column of ones before it; else ``matmul_tn`` and ``jnp.sum``."""
    if supported(a.shape, b.shape, a.dtype) and b.dtype == a.dtype and available():
        return _native_sums(a, b)
    if b.shape[1] >= MAX_COLUMNS and a.dtype == b.dtype == jnp.float32:
        # XLA's dot of [1 a]^T b: the sums are its first row, no pass over b of their own (the GPT's
        # vocabulary gradient: 1.03x CPU time against the product and wide_sum's sum: benchmarks/LOG.md)
        product = jnp.matmul(jnp.concatenate([jnp.ones((a.shape[0], 1), a.dtype), a], axis=1).T, b)
        return product[1:], product[0]
    return matmul_tn(a, b), jnp.sum(b, axis=0)



def supported_nn(a_shape, b_shape, dtype):
    """Whether the kernel takes ``a @ b`` (a: (M, K), b: (K, N)) for these (concrete) shapes and dtype on this
    backend: N a multiple of 16, at least ``tuning.MATMUL_NN_NATIVE_FLOPS``, and a CPU with AVX-512 unless
    ``tuning.MATMUL_NN_NATIVE_NEEDS_AVX512`` is False."""
    return (tuning.NATIVE_KERNELS and jax.default_backend() == "cpu" and jnp.dtype(dtype) == jnp.float32
            and (not tuning.MATMUL_NN_NATIVE_NEEDS_AVX512 or "avx512f" in cpu_flags())
            and len(a_shape) == 2 and len(b_shape) == 2 and all(type(d) is int for d in (*a_shape, *b_shape))
            and a_shape[1] == b_shape[0] and b_shape[1] % 16 == 0
            and 2 * a_shape[0] * a_shape[1] * b_shape[1] >= tuning.MATMUL_NN_NATIVE_FLOPS)


@jax.custom_vjp
def _native_nn(a, b):
    out = jax.ShapeDtypeStruct((a.shape[0], b.shape[1]), a.dtype)
    return jax.ffi.ffi_call(_TARGET_NN, out, vmap_method="sequential")(a, b, threads=np.int64(1))


def _native_nn_fwd(a, b):
    return _native_nn(a, b), (a, b)


def _native_nn_bwd(residuals, g):
    a, b = residuals
    return g @ b.T, a.T @ g  # d(a b)/da = g b^T, d(a b)/db = a^T g


_native_nn.defvjp(_native_nn_fwd, _native_nn_bwd)


def matmul_nn(a, b):
    """``a @ b`` (a: (M, K), b: (K, N)); on the native kernel where ``supported_nn`` and ``available``."""
    if supported_nn(a.shape, b.shape, a.dtype) and available():
        return _native_nn(a, b)
    return a @ b
