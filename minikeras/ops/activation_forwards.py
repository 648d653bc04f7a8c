"""The jax forwards of the activations that are not ``jax.nn`` functions (Keras 3's formulas):
pure functions of arrays, parameters as keywords. ``mk.activations`` and ``keras.ops.nn`` record
them as one op each and differentiate them with ``jax.vjp``."""
import jax.numpy as jnp


def tanh_shrink(x):
    return x - jnp.tanh(x)


def hard_shrink(x, *, threshold):
    return jnp.where(jnp.abs(x) > threshold, x, 0.0)


def soft_shrink(x, *, threshold):
    return jnp.where(x > threshold, x - threshold, jnp.where(x < -threshold, x + threshold, 0.0))


def threshold(x, *, threshold, default_value):
    return jnp.where(x > threshold, x, default_value)


def sparsemax(x, *, axis):
    ordered = -jnp.sort(-x, axis=axis)
    cumulative = jnp.cumsum(ordered, axis=axis)
    shape = [1] * x.ndim
    shape[axis] = -1
    k = jnp.arange(1, x.shape[axis] + 1).reshape(shape)
    support = ordered - (cumulative - 1) / k > 0
    size = jnp.sum(support, axis=axis, keepdims=True)
    tau = (jnp.sum(jnp.where(support, cumulative, 0.0), axis=axis, keepdims=True) - 1) / size
    return jnp.maximum(x - tau, 0.0)
