"""Sparse categorical cross-entropy of logits over wide rows, as native CPU kernels
(``logits_crossentropy_native.cc``): a language model's loss over its vocabulary.

    out = crossentropy(logits, labels)              # (..., 3): loss, max and log-sum-exp per row
    dx = crossentropy_gradient(logits, labels, out, g)   # for the cotangent g of out

``ops.nn_losses``' ``sparse_categorical_crossentropy_from_logits`` computes the same formulas in
jax (the comment above it says why the output keeps the row maximum and log-sum-exp). These run where
the rows are wide: at least ``tuning.LOGITS_CROSSENTROPY_NATIVE_MIN_CLASSES`` classes, float32,
with ``tuning.LOGITS_CROSSENTROPY_NATIVE`` on,
on the CPU backend of a CPU with AVX-512 (the kernels' vector code; elsewhere they would run
scalar, slower than XLA's loops). There XLA:CPU writes the logits once more, shifted by their row maximum
(fused into the product that makes them), and reads them again for the sums; the native forward
reads each row once. The gradient has XLA's bits given the same forward output; the forward's
log-sum-exp is summed in another order (and takes the C library's log), so the loss and the
log-sum-exp may differ from XLA's in the last bits. Narrower rows (a classifier's ten classes),
other dtypes and backends, and machines without the kernels keep the jax formulas.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.xla_cpu import tuning
from minikeras.xla_cpu.low_precision import cpu_flags
from minikeras.xla_cpu.native_build import register_targets, usable_cpus

_FORWARD = "minikeras_logits_crossentropy"
_GRADIENT = "minikeras_logits_crossentropy_gradient"


@functools.lru_cache(maxsize=None)
def available():
    """True when the kernels are built for this machine and registered with XLA:CPU."""
    return register_targets("logits_crossentropy_native.cc", {
        _FORWARD: "MinikerasLogitsCrossentropy", _GRADIENT: "MinikerasLogitsCrossentropyGradient"})


def supported(logits_shape, labels_shape, dtype):
    """Whether the kernels take logits of this shape and dtype with labels of ``labels_shape``
    (one per row of the last axis)."""
    return (tuning.NATIVE_KERNELS and tuning.LOGITS_CROSSENTROPY_NATIVE and jax.default_backend() == "cpu"
            and jnp.dtype(dtype) == jnp.float32
            and len(logits_shape) >= 1 and all(type(d) is int for d in logits_shape)
            and tuple(labels_shape) == tuple(logits_shape[:-1])
            and logits_shape[-1] >= tuning.LOGITS_CROSSENTROPY_NATIVE_MIN_CLASSES
            and int(np.prod(logits_shape[:-1], dtype=np.int64)) > 0
            and (not tuning.LOGITS_CROSSENTROPY_NATIVE_NEEDS_AVX512 or "avx512f" in cpu_flags()))


def applies(logits, labels):
    """``supported`` for these arrays, and the kernels built."""
    return (supported(logits.shape, labels.shape, logits.dtype) and jnp.issubdtype(labels.dtype, jnp.integer)
            and available())


def crossentropy(logits, labels):
    """``(loss, max, log-sum-exp)`` of each row of ``logits`` (..., n) for its integer label
    (...): ``loss = -((logits[label] - max) - log_sum_exp)``, 0 for a label outside [0, n).
    Call where ``applies``."""
    out = jax.ShapeDtypeStruct(tuple(labels.shape) + (3,), logits.dtype)
    call = jax.ffi.ffi_call(_FORWARD, out, vmap_method="broadcast_all")
    return call(logits, labels.astype(jnp.int32), threads=np.int64(usable_cpus()))


def crossentropy_gradient(logits, labels, out, g):
    """The gradient in ``logits`` of ``crossentropy`` given its output ``out`` and cotangent
    ``g`` (both (..., 3)): ``(g_loss + g_lse) * exp((logits - max) - log_sum_exp)``, then
    ``-g_loss`` added at each row's label (``g_loss`` 0 where the label is outside [0, n); the
    max's cotangent cancels). Call where ``applies``."""
    call = jax.ffi.ffi_call(_GRADIENT, jax.ShapeDtypeStruct(logits.shape, logits.dtype), vmap_method="broadcast_all")
    return call(logits, labels.astype(jnp.int32), out, g, threads=np.int64(usable_cpus()))
