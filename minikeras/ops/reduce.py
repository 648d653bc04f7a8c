"""Reductions over axes: sum, mean, max, min, prod, logsumexp, any/all, argmax/argmin.

``broadcast_to`` and ``unbroadcast`` stand here beside ``reduce_sum``: each is the other's gradient.
"""
import math

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.dtypes import index_dtype, requested_dtype
from minikeras.errors import invalid_argument
from minikeras.ops.convert import normalize_axis
from minikeras.ops.elementwise import cast, equal, exp, sqrt, square
from minikeras.ops.primitive import Primitive
from minikeras.ops.reshape import reshape, static_shape
from minikeras.tensor import Tensor, Variable, to_array
from minikeras.xla_cpu import wide_sum


def _as_input(x):
    return x if hasattr(x, "ndim") and not isinstance(x, np.ndarray) else Tensor(to_array(x))


def _restore_reduced(g, x_shape, axis, keepdims):
    """Reshapes a reduced gradient back to rank of x (size-1 reduced axes) and broadcasts it."""
    if not keepdims:
        axes = range(len(x_shape)) if axis is None else axis
        kept = tuple(1 if i in axes else n for i, n in enumerate(x_shape))
        g = reshape(g, kept)
    return broadcast_to(g, x_shape)


def _count(x_shape, axis):
    axes = range(len(x_shape)) if axis is None else axis
    return math.prod(x_shape[i] for i in axes)  # an int, or a symbolic size under mk.function's None dimensions


def divide_by_count(t, count):
    """``t / count`` for a number of elements ``count``: a Python int, or a symbolic size
    (a None dimension of ``mk.function``'s input signature), known when the program runs."""
    if type(count) is int:
        return t / float(count)
    return t / Tensor(jnp.asarray(count, t.dtype))


def unbroadcast(g, shape):
    """Sums ``g`` over the axes that broadcasting added or stretched, so it has ``shape``."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    extra = g.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and g.shape[extra + i] != 1)
    if axes and axes == tuple(range(len(axes))) and wide_sum.supported(g.shape, len(axes), g.dtype):
        g = _leading_sum(g, n_leading=len(axes))  # a bias gradient over wide rows (xla_cpu.wide_sum)
    elif axes:
        g = reduce_sum(g, axis=axes)
    return reshape(g, shape) if g.shape != shape else g


_leading_sum = Primitive("reduce_sum", lambda x, *, n_leading: wide_sum.leading_sum(x, n_leading))
_leading_sum.defgrad(lambda g, out, x, *, n_leading: broadcast_to(g, x.shape))


_broadcast_to = Primitive("broadcast_to", lambda x, *, shape: jnp.broadcast_to(x, shape))
_broadcast_to.defgrad(lambda g, out, x, *, shape: unbroadcast(g, x.shape))


def broadcast_to(input, shape, name=None):  # noqa: A002
    """Broadcasts ``input`` to ``shape`` (NumPy rules)."""
    x = input if isinstance(input, (Tensor, Variable)) else Tensor(to_array(input))
    shape = static_shape(shape, "broadcast_to")
    if x.shape == shape:
        return x
    try:  # jax's rule takes symbolic sizes (mk.function's None dimensions) too
        compatible = jnp.broadcast_shapes(x.shape, shape) == shape
    except ValueError:
        compatible = False
    if not compatible:
        raise invalid_argument("BroadcastTo", f"broadcast_to: cannot broadcast shape {x.shape} to {shape}")
    return _broadcast_to(x, shape=shape)


_sum = Primitive("reduce_sum", lambda x, *, axis, keepdims: jnp.sum(x, axis=axis, keepdims=keepdims))
_mean = Primitive("reduce_mean", lambda x, *, axis, keepdims: jnp.mean(x, axis=axis, keepdims=keepdims))
_max = Primitive("reduce_max", lambda x, *, axis, keepdims: jnp.max(x, axis=axis, keepdims=keepdims))
_min = Primitive("reduce_min", lambda x, *, axis, keepdims: jnp.min(x, axis=axis, keepdims=keepdims))
_prod = Primitive("reduce_prod", lambda x, *, axis, keepdims: jnp.prod(x, axis=axis, keepdims=keepdims))
_logsumexp = Primitive(
    "reduce_logsumexp",
    lambda x, *, axis, keepdims: jax.nn.logsumexp(x, axis=axis, keepdims=keepdims))


@_sum.defgrad
def _(g, out, x, *, axis, keepdims):
    return _restore_reduced(g, x.shape, axis, keepdims)


@_mean.defgrad
def _(g, out, x, *, axis, keepdims):
    return divide_by_count(_restore_reduced(g, x.shape, axis, keepdims), _count(x.shape, axis))


def _extremum_rule(g, out, x, *, axis, keepdims):
    out_full = _restore_reduced(out, x.shape, axis, keepdims)
    hits = cast(equal(x, out_full), g.dtype)
    ties = _restore_reduced(reduce_sum(hits, axis=axis, keepdims=keepdims), x.shape, axis, keepdims)
    return _restore_reduced(g, x.shape, axis, keepdims) * hits / ties


_max.defgrad(_extremum_rule)
_min.defgrad(_extremum_rule)


@_prod.defgrad
def _(g, out, x, *, axis, keepdims):
    return _restore_reduced(g * out, x.shape, axis, keepdims) / x


@_logsumexp.defgrad
def _(g, out, x, *, axis, keepdims):
    return _restore_reduced(g, x.shape, axis, keepdims) * exp(x - _restore_reduced(out, x.shape, axis, keepdims))


def _reducer(prim, doc):
    def op(input_tensor, axis=None, keepdims=False, name=None):
        x = _as_input(input_tensor)
        return prim(x, axis=normalize_axis(axis, x.ndim, prim.name), keepdims=bool(keepdims))

    op.__name__ = prim.name
    op.__doc__ = doc
    return op


reduce_sum = _reducer(_sum, "Sum over ``axis`` (all axes when None); ``keepdims`` keeps reduced axes as size 1.")
reduce_mean = _reducer(_mean, "Mean over ``axis`` (all axes when None).")
reduce_max = _reducer(_max, "Maximum over ``axis``; the gradient is shared equally among ties, as in TensorFlow.")
reduce_min = _reducer(_min, "Minimum over ``axis``; the gradient is shared equally among ties.")
reduce_prod = _reducer(_prod, "Product over ``axis`` (gradient undefined where an element is 0).")
reduce_logsumexp = _reducer(_logsumexp, "log(sum(exp(x))) over ``axis``, computed stably.")

_any = Primitive("reduce_any", lambda x, *, axis, keepdims: jnp.any(x, axis=axis, keepdims=keepdims),
                 differentiable=False)
_all = Primitive("reduce_all", lambda x, *, axis, keepdims: jnp.all(x, axis=axis, keepdims=keepdims),
                 differentiable=False)
reduce_any = _reducer(_any, "Logical or over ``axis``.")
reduce_all = _reducer(_all, "Logical and over ``axis``.")


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """Variance over ``axis`` (population variance, as ``tf.math.reduce_variance``)."""
    x = _as_input(input_tensor)
    mean = reduce_mean(x, axis=axis, keepdims=True)
    return reduce_mean(square(x - mean), axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """Standard deviation over ``axis``."""
    return sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


def _index_dtype(output_type):
    return requested_dtype(output_type) if output_type else index_dtype()


_argmax = Primitive("argmax", lambda x, *, axis, dtype: jnp.argmax(x, axis=axis).astype(dtype), differentiable=False)
_argmin = Primitive("argmin", lambda x, *, axis, dtype: jnp.argmin(x, axis=axis).astype(dtype), differentiable=False)


def argmax(input, axis=None, output_type=None, name=None):  # noqa: A002 - TensorFlow's name
    """Index of the largest value along ``axis`` (default 0, as in TensorFlow); not differentiable.

    Returns int64 as TensorFlow with 64-bit dtypes on (``mk.config.enable_x64()``), else int32.
    """
    x = _as_input(input)
    axis = 0 if axis is None else normalize_axis(axis, x.ndim, "argmax")[0]
    return _argmax(x, axis=axis, dtype=_index_dtype(output_type))


def argmin(input, axis=None, output_type=None, name=None):  # noqa: A002
    """Index of the smallest value along ``axis`` (default 0); not differentiable."""
    x = _as_input(input)
    axis = 0 if axis is None else normalize_axis(axis, x.ndim, "argmin")[0]
    return _argmin(x, axis=axis, dtype=_index_dtype(output_type))
