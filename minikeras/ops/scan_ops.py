"""Cumulative sums and products along an axis (``tf.math.cumsum``, ``tf.math.cumprod``).

Both take TF's ``exclusive`` (each output leaves out its own element) and ``reverse``
(accumulate from the end). The gradient of a cumulative sum is the cumulative sum of the
cotangent in the other direction; the cumulative product's is TF's, through the output
divided by the input (undefined where an input is 0, as in TensorFlow).
"""
import jax.numpy as jnp

from minikeras.errors import invalid_argument
from minikeras.ops.linalg import as_tensor
from minikeras.ops.primitive import Primitive


def _scan(accumulate, identity):
    def forward(x, *, axis, exclusive, reverse):
        if reverse:
            x = jnp.flip(x, axis)
        out = accumulate(x, axis=axis)
        if exclusive:  # shift by one along axis, the identity first
            pad = [(0, 0)] * x.ndim
            pad[axis] = (1, 0)
            out = jnp.pad(out, pad, constant_values=identity)
            out = jnp.take(out, jnp.arange(x.shape[axis]), axis=axis)
        return jnp.flip(out, axis) if reverse else out
    return forward


_cumsum = Primitive("cumsum", _scan(jnp.cumsum, 0))
_cumprod = Primitive("cumprod", _scan(jnp.cumprod, 1))


@_cumsum.defgrad
def _(g, out, x, *, axis, exclusive, reverse):
    return cumsum(g, axis=axis, exclusive=exclusive, reverse=not reverse)


@_cumprod.defgrad
def _(g, out, x, *, axis, exclusive, reverse):
    return cumsum(g * out, axis=axis, exclusive=exclusive, reverse=not reverse) / x


def _axis(x, axis, op):
    axis = int(axis)
    if x.ndim == 0 or not -x.ndim <= axis < x.ndim:
        raise invalid_argument(op, f"axis {axis} is out of range for a tensor of shape {x.shape}")
    return axis % x.ndim


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative sum along ``axis``: ``cumsum([a, b, c]) == [a, a + b, a + b + c]``;
    ``exclusive=True`` gives ``[0, a, a + b]``, ``reverse=True`` sums from the end."""
    x = as_tensor(x)
    return _cumsum(x, axis=_axis(x, axis, "Cumsum"), exclusive=bool(exclusive), reverse=bool(reverse))


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative product along ``axis``: ``cumprod([a, b, c]) == [a, a * b, a * b * c]``;
    ``exclusive`` and ``reverse`` as in ``cumsum``."""
    x = as_tensor(x)
    return _cumprod(x, axis=_axis(x, axis, "Cumprod"), exclusive=bool(exclusive), reverse=bool(reverse))
