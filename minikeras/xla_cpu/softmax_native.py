"""Softmax over the last axis and its gradient as native CPU kernels (``softmax_native.cc``).

    y = softmax(x, axis)                 # jax.nn.softmax(x, axis), native where it applies
    dx = softmax_gradient(y, g, axis)    # y * (g - sum(g * y, axis)), likewise

They run where the work is microseconds and XLA's compile is not: a classifier's head, float32
arrays of fewer than ``tuning.SOFTMAX_NATIVE_MAX_ELEMENTS`` (4096) elements in rows shorter than
``tuning.SOFTMAX_NATIVE_MAX_ROW`` (32) along the last axis, on the CPU backend. XLA:CPU compiles a
softmax and its gradient as five loop kernels: ~0.2 s of the MNIST CNN step's first call on a Zen
3; custom calls compile nothing. There the forward pass has the bits of XLA:CPU's
``jax.nn.softmax`` (its exp written out, the row sum in order, the division as a multiplication by
the reciprocal), and so does the gradient for most shapes (XLA vectorizes the sums of a few row
lengths, 6 and 8, otherwise: the last bit may differ there). Bigger softmaxes (attention, 1000
classes, a large evaluation batch) are worth XLA's vectorized loops and keep the jax formulas, as
do other dtypes and axes, other backends, and machines without the kernels (no compiler,
``MINIKERAS_NATIVE=0``, ``tuning.NATIVE_KERNELS`` False).
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.xla_cpu import tuning
from minikeras.xla_cpu.native_build import register_targets

_FORWARD = "minikeras_softmax_forward"
_BACKWARD = "minikeras_softmax_backward"


@functools.lru_cache(maxsize=None)
def available():
    """True when the kernels are built for this machine and registered with XLA:CPU."""
    return register_targets("softmax_native.cc", {_FORWARD: "MinikerasSoftmaxForward",
                                                  _BACKWARD: "MinikerasSoftmaxBackward"})


def supported(shape, dtype, axis):
    """Whether the kernels take an array of this shape and dtype, softmax along ``axis``."""
    return (tuning.NATIVE_KERNELS and jax.default_backend() == "cpu" and jnp.dtype(dtype) == jnp.float32
            and len(shape) >= 1 and axis % len(shape) == len(shape) - 1 and all(type(d) is int for d in shape)
            and 0 < shape[-1] < tuning.SOFTMAX_NATIVE_MAX_ROW
            and int(np.prod(shape, dtype=np.int64)) < tuning.SOFTMAX_NATIVE_MAX_ELEMENTS)


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
