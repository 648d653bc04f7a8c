"""A classifier's head as native CPU kernels (``head_native.cc``): softmax over the last axis,
sparse categorical cross-entropy of probabilities (Keras' formula), and their gradients.

    y = softmax(x, axis)                                # jax.nn.softmax(x, axis)
    dx = softmax_gradient(y, g, axis)                   # y * (g - sum(g * y, axis))
    loss = sparse_crossentropy(p, labels)               # -log(clip(p / sum(p)))[label], per row
    dp = sparse_crossentropy_gradient(p, labels, g)     # its gradient for the cotangent g (per row)

each native where it applies and the jax formula elsewhere.

They run where the work is microseconds and XLA's compile is not: a classifier's head, float32
arrays of fewer than ``tuning.HEAD_NATIVE_MAX_ELEMENTS`` (4096) elements in rows shorter than
``tuning.HEAD_NATIVE_MAX_CLASSES`` (32) along the last axis, on the CPU backend. XLA:CPU compiles
these as ten loop kernels, a noticeable share of the MNIST CNN step's first call; custom calls
compile nothing. Each has the bits of XLA:CPU's code for its jax formula (its exp written out,
row sums in order, divisions by a row's sum as multiplications by the reciprocal), but for the
softmax gradient of a few row lengths (6 and 8, whose sums XLA vectorizes otherwise) and the
cross-entropy's log (the C library's, not XLA's). Where XLA fused the softmax's gradient with the
cross-entropy's, as in the MNIST CNN's step, its contractions across the two rounded some
gradients otherwise in the last bit: training runs differ from XLA's by float rounding. Bigger
softmaxes (attention, 1000 classes, a large evaluation batch) are worth XLA's vectorized loops and
keep the jax formulas, as do other dtypes and axes, other backends, and machines without the
kernels (no compiler, ``MINIKERAS_NATIVE=0``, ``tuning.NATIVE_KERNELS`` False).
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.xla_cpu import tuning
from minikeras.xla_cpu.native_build import register_targets

_FORWARD = "minikeras_softmax_forward"
_BACKWARD = "minikeras_softmax_backward"
_CROSSENTROPY = "minikeras_sparse_crossentropy"
_CROSSENTROPY_GRADIENT = "minikeras_sparse_crossentropy_gradient"
_CLIP = 1e-7  # Keras' epsilon


@functools.lru_cache(maxsize=None)
def available():
    """True when the kernels are built for this machine and registered with XLA:CPU."""
    return register_targets("head_native.cc", {
        _FORWARD: "MinikerasSoftmaxForward", _BACKWARD: "MinikerasSoftmaxBackward",
        _CROSSENTROPY: "MinikerasSparseCrossentropy", _CROSSENTROPY_GRADIENT: "MinikerasSparseCrossentropyGradient"})


def supported(shape, dtype, axis):
    """Whether the kernels take an array of this shape and dtype, softmax along ``axis``."""
    return (tuning.NATIVE_KERNELS and jax.default_backend() == "cpu" and jnp.dtype(dtype) == jnp.float32
            and len(shape) >= 1 and axis % len(shape) == len(shape) - 1 and all(type(d) is int for d in shape)
            and 0 < shape[-1] < tuning.HEAD_NATIVE_MAX_CLASSES
            and int(np.prod(shape, dtype=np.int64)) < tuning.HEAD_NATIVE_MAX_ELEMENTS)


def softmax(x, axis):
    """``jax.nn.softmax(x, axis=axis)``."""
    if not (supported(x.shape, x.dtype, axis) and available()):
        return jax.nn.softmax(x, axis=axis)
    call = jax.ffi.ffi_call(_FORWARD, jax.ShapeDtypeStruct(x.shape, x.dtype), vmap_method="sequential")
    return call(x, n=np.int64(x.shape[-1]))


def softmax_gradient(y, g, axis):
    """The gradient of softmax at output ``y`` for the output cotangent ``g``:
    ``y * (g - sum(g * y, axis, keepdims=True))``."""
    if not (supported(y.shape, y.dtype, axis) and g.dtype == y.dtype and available()):
        return y * (g - jnp.sum(g * y, axis=axis, keepdims=True))
    call = jax.ffi.ffi_call(_BACKWARD, jax.ShapeDtypeStruct(y.shape, y.dtype), vmap_method="sequential")
    return call(y, g, n=np.int64(y.shape[-1]))


def _labels_fit(p, labels):
    return (supported(p.shape, p.dtype, -1) and tuple(labels.shape) == tuple(p.shape[:-1])
            and jnp.issubdtype(labels.dtype, jnp.integer) and available())


def _clip(q):
    return jnp.minimum(jnp.maximum(q, _CLIP), 1.0 - _CLIP)


def sparse_crossentropy(p, labels):
    """Keras' sparse categorical cross-entropy of probabilities, one loss per row:
    ``-sum(one_hot(labels) * log(clip(p / sum(p), 1e-7, 1 - 1e-7)), -1)`` (a label out of
    [0, n) gives 0). ``p``: (..., n) float; ``labels``: (...) integers."""
    if not _labels_fit(p, labels):
        target = jax.nn.one_hot(labels, p.shape[-1], dtype=p.dtype)
        return -jnp.sum(target * jnp.log(_clip(p / jnp.sum(p, axis=-1, keepdims=True))), axis=-1)
    call = jax.ffi.ffi_call(_CROSSENTROPY, jax.ShapeDtypeStruct(labels.shape, p.dtype), vmap_method="sequential")
    return call(p, labels.astype(jnp.int32))


def sparse_crossentropy_gradient(p, labels, g):
    """The gradient in ``p`` of ``sparse_crossentropy(p, labels)`` for the cotangent ``g`` (one
    per row): with ``r = 1 / sum(p)``, ``q = p r`` and ``c = clip(q)``,
    ``t = where(clip passes q, one_hot(labels) * -g / c, 0) * r`` and ``dp = t + sum(-t q)``."""
    if not (_labels_fit(p, labels) and tuple(g.shape) == tuple(labels.shape) and g.dtype == p.dtype):
        r = 1.0 / jnp.sum(p, axis=-1, keepdims=True)
        q = p * r
        dq = jax.nn.one_hot(labels, p.shape[-1], dtype=p.dtype) * -g[..., None] / _clip(q)
        passes = (q >= _CLIP) & (jnp.maximum(q, _CLIP) <= 1.0 - _CLIP)
        t = jnp.where(passes, dq, 0.0) * r
        return t + jnp.sum(-t * q, axis=-1, keepdims=True)
    call = jax.ffi.ffi_call(_CROSSENTROPY_GRADIENT, jax.ShapeDtypeStruct(p.shape, p.dtype), vmap_method="sequential")
    return call(p, labels.astype(jnp.int32), g)
