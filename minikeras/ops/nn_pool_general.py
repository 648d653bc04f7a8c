"""N-D pooling, channels_last: ``pool_nd`` (max or average windows over 1 to 3 spatial axes).

``nn_conv``'s ``max_pool2d``/``avg_pool2d`` are the 2-D pooling ops with gradient rules of
their own; this op serves the other ranks (3-D volumes) as one recorded ``call_jax`` op whose
backward pass is ``jax.vjp`` of ``lax.reduce_window`` (any order).
"""
import math

import jax.numpy as jnp
from jax import lax

from minikeras.ops.jax_call import call_jax
from minikeras.tensor import Tensor, Variable, to_array


def _windows(x, pool_size, strides, padding):
    window = (1,) + tuple(pool_size) + (1,)
    steps = (1,) + tuple(strides) + (1,)
    return window, steps, padding


def _max(x, pool_size, strides, padding):
    window, steps, pads = _windows(x, pool_size, strides, padding)
    # a Python scalar init, so that jax sees a max-monoid reduction it can differentiate
    lowest = -float("inf") if jnp.issubdtype(x.dtype, jnp.floating) else int(jnp.iinfo(x.dtype).min)
    return lax.reduce_window(x, lowest, lax.max, window, steps, pads)


def _average(x, pool_size, strides, padding):
    """Window means; with 'SAME' padding over the in-bounds elements only (as Keras and TensorFlow)."""
    window, steps, pads = _windows(x, pool_size, strides, padding)
    sums = lax.reduce_window(x, 0.0, lax.add, window, steps, pads)
    if padding == "VALID":
        return sums / jnp.asarray(math.prod(pool_size), x.dtype)
    ones = jnp.ones((1,) + tuple(x.shape[1:-1]) + (1,), x.dtype)
    return sums / lax.reduce_window(ones, 0.0, lax.add, window, steps, pads)


def pool_nd(x, kind, pool_size, strides, padding="VALID"):
    """Max (``kind="max"``) or mean (``"average"``) of each ``pool_size`` window.

    Args:
      x: (batch, *spatial, channels), 1 to 3 spatial axes.
      pool_size, strides: one int per spatial axis.
      padding: 'VALID' or 'SAME'.

    Returns:
      (batch, *spatial', channels); differentiable to any order (average: floating inputs).
    """
    x = x.value() if isinstance(x, Variable) else x if isinstance(x, Tensor) else Tensor(to_array(x))
    rank = x.ndim - 2
    pool_size, strides, padding = tuple(pool_size), tuple(strides), str(padding).upper()
    if not 1 <= rank <= 3 or len(pool_size) != rank or len(strides) != rank:
        raise ValueError(f"pool_nd: input must be (batch, *spatial, channels) with 1 to 3 spatial axes and one "
                         f"pool_size and stride per spatial axis; received shape {x.shape}, pool_size={pool_size}, "
                         f"strides={strides}")
    if padding not in ("VALID", "SAME"):
        raise ValueError(f"pool_nd: padding must be 'VALID' or 'SAME', received {padding!r}")
    if kind not in ("max", "average"):
        raise ValueError(f"pool_nd: kind must be 'max' or 'average', received {kind!r}")
    if kind == "average" and not jnp.issubdtype(x.dtype, jnp.floating):
        raise TypeError(f"pool_nd: average pooling expects a floating-point input, received dtype {x.dtype.name}")
    forward = _max if kind == "max" else _average

    def fn(a):
        return (forward(a, pool_size, strides, padding),)
    return call_jax(fn, [x], name=f"{kind}_pool{rank}d", key=("pool_nd", kind, pool_size, strides, padding))[0]


def _adaptive_axis(a, axis, out, kind):
    """Window i of ``out`` along ``axis`` covers [floor(i n / out), ceil((i + 1) n / out))."""
    n = a.shape[axis]
    reduce = jnp.max if kind == "max" else jnp.mean
    pieces = []
    for i in range(out):
        start, stop = (i * n) // out, -((-(i + 1) * n) // out)
        pieces.append(reduce(lax.slice_in_dim(a, start, stop, axis=axis), axis=axis, keepdims=True))
    return jnp.concatenate(pieces, axis=axis)


def adaptive_pool_nd(x, kind, output_size):
    """Max or mean pooling to a fixed spatial size (PyTorch's and Keras's adaptive pooling):
    along each spatial axis of length n, output i pools [floor(i n / out), ceil((i + 1) n / out)).

    Args:
      x: (batch, *spatial, channels), channels_last.
      kind: 'max' or 'average'.
      output_size: one int per spatial axis.
    """
    x = x.value() if isinstance(x, Variable) else x if isinstance(x, Tensor) else Tensor(to_array(x))
    output_size = tuple(int(n) for n in output_size)
    if len(output_size) != x.ndim - 2 or min(output_size) < 1:
        raise ValueError(f"adaptive_pool_nd: output_size needs one positive int per spatial axis of the input "
                         f"(shape {x.shape}), received {output_size}")
    if kind not in ("max", "average"):
        raise ValueError(f"adaptive_pool_nd: kind must be 'max' or 'average', received {kind!r}")

    def fn(a):
        for axis, out in enumerate(output_size, start=1):
            a = _adaptive_axis(a, axis, out, kind)
        return (a,)
    return call_jax(fn, [x], name=f"adaptive_{kind}_pool", key=("adaptive_pool_nd", kind, output_size))[0]
