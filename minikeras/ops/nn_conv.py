"""2-D convolution and pooling: ``conv2d``, ``conv2d_transpose``, ``max_pool2d``, ``avg_pool2d``.

Convolution is three primitives whose gradient rules call each other:

    conv2d(x, w)                  -> d/dx: backprop_input(g, w)   d/dw: backprop_filter(x, g)
    backprop_input(dy, w)         -> d/ddy: conv2d(g, w)          d/dw: backprop_filter(g, dy)
    backprop_filter(x, dy)        -> d/dx: backprop_input(dy, g)  d/ddy: conv2d(x, g)

(all three are bilinear, so each one's gradient is another of the three), which makes
derivatives of any order work with no special case. Pooling is built the same way:
max_pool2d's gradient scatters ``g`` to where each window's maximum was; that scatter's
gradient gathers from the same places, and the gather's gradient is the scatter again.

The primitives' kernels are ``minikeras.xla_cpu.conv``'s three functions (formulations that
hit XLA:CPU's fast paths, plain ``lax.conv_general_dilated`` elsewhere), ``reduce_window`` for
the pooling forwards (below), and ``minikeras.xla_cpu.pool``'s gradients. All work on NHWC
arrays with HWIO filters; 'NCHW' callers are transposed in the public functions.
"""
import jax.numpy as jnp
import numpy as np
from jax import lax

from minikeras.ops.array import transpose
from minikeras.ops.convert import binary_args
from minikeras.ops.math import where, zero_of_
from minikeras.ops.primitive import Primitive
from minikeras.ops.reduce import unbroadcast
from minikeras.symbolic import KerasTensor
from minikeras.tensor import Tensor, Variable, to_array
from minikeras.xla_cpu.conv import (
    bf16_native,
    conv2d_bias_relu_forward,
    conv2d_filter_and_bias_grad,
    conv2d_filter_grad,
    conv2d_forward,
    conv2d_input_grad,
    relu_masked,
)
from minikeras.xla_cpu.pool import avg_pool2d_grad, max_pool2d_grad, max_pool2d_grad_grad

_TO_NHWC, _TO_NCHW = (0, 2, 3, 1), (0, 3, 1, 2)


# -- pooling forwards (the gradients are minikeras.xla_cpu.pool's) -----------------------------
def _window(ksize, strides, padding):
    pads = padding if isinstance(padding, str) else ((0, 0),) + tuple(padding) + ((0, 0),)
    return (1,) + tuple(ksize) + (1,), (1,) + tuple(strides) + (1,), pads


def _max_pool_forward(x, ksize, strides, padding):
    window, steps, pads = _window(ksize, strides, padding)
    # a Python scalar init, so that jax sees a max-monoid reduction it can differentiate
    lowest = -float("inf") if jnp.issubdtype(x.dtype, jnp.floating) else int(jnp.iinfo(x.dtype).min)
    return lax.reduce_window(x, lowest, lax.max, window, steps, pads)


def _avg_pool_forward(x, ksize, strides, padding):
    """Window means; with 'SAME' padding, over the in-bounds elements only (as TensorFlow)."""
    window, steps, pads = _window(ksize, strides, padding)
    zero = 0.0
    sums = lax.reduce_window(x, zero, lax.add, window, steps, pads)
    if padding == "VALID":
        return sums / jnp.asarray(ksize[0] * ksize[1], x.dtype)
    ones = jnp.ones((1,) + tuple(x.shape[1:3]) + (1,), x.dtype)
    return sums / lax.reduce_window(ones, zero, lax.add, window, steps, pads)


# -- convolution primitives ---------------------------------------------------------------------
# 'padding' is 'SAME', 'VALID' or ((top, bottom), (left, right)); each kernel is exactly conv or
# one of its two transposes, so the three serve as each other's gradient rules.
_conv2d = Primitive(
    "conv2d",
    lambda x, w, *, strides, padding, dilations: conv2d_forward(x, w, strides, padding, dilations))
_conv2d_backprop_input = Primitive(
    "conv2d_backprop_input",
    lambda dy, w, *, input_shape, strides, padding, dilations:
        conv2d_input_grad(dy, w, input_shape, strides, padding, dilations))
_conv2d_backprop_filter = Primitive(
    "conv2d_backprop_filter",
    lambda x, dy, *, filter_shape, strides, padding, dilations:
        conv2d_filter_grad(x, dy, filter_shape, strides, padding, dilations))


@_conv2d.defgrad
def _(g, out, x, w, **conv):
    return (_conv2d_backprop_input(g, w, input_shape=x.shape, **conv),
            _conv2d_backprop_filter(x, g, filter_shape=w.shape, **conv))


@_conv2d_backprop_input.defgrad
def _(g, out, dy, w, *, input_shape, **conv):
    return _conv2d(g, w, **conv), _conv2d_backprop_filter(g, dy, filter_shape=w.shape, **conv)


@_conv2d_backprop_filter.defgrad
def _(g, out, x, dy, *, filter_shape, **conv):
    return _conv2d_backprop_input(dy, g, input_shape=x.shape, **conv), _conv2d(x, g, **conv)


# Conv2D's convolution, bias and ReLU as one op: on the CPU's native forward kernel the bias and
# ReLU are its epilogue (minikeras.xla_cpu.conv.conv2d_bias_relu_forward); the gradient masks g
# where the output is zero, then takes the three convolutions' and the bias' usual rules.
class _Conv2dBiasRelu(Primitive):
    """The op: the recorded rule is ``defgrad``'s; on arrays, where the bfloat16 filter-gradient
    kernel runs, that kernel also sums the bias gradient while it reads the masked cotangent
    (``conv2d_filter_and_bias_grad``: a float32 sum's order apart from ``unbroadcast``'s)."""

    def rule_on_arrays(self, g, out, inputs, params):
        x, w, _ = inputs
        conv = dict(params)
        if _on_bf16_kernels(x.shape, w.shape, g.dtype, conv):
            masked = relu_masked(g, out, materialized=True)
            fused = conv2d_filter_and_bias_grad(x, masked, w.shape, **conv)
            if fused is not None:
                return (conv2d_input_grad(masked, w, x.shape, **conv),) + tuple(fused)
        return super().rule_on_arrays(g, out, inputs, params)


def _on_bf16_kernels(x_shape, w_shape, dtype, conv):
    return any(bf16_native(kind, x_shape, w_shape, dtype=dtype, **conv) for kind in ("input_grad", "filter_grad"))


_conv2d_bias_relu = _Conv2dBiasRelu(
    "conv2d_bias_relu",
    lambda x, w, b, *, strides, padding, dilations: conv2d_bias_relu_forward(x, w, b, strides, padding, dilations))


# g masked where relu's output is zero; on the bfloat16 kernels in a buffer of its own (relu_masked)
_relu_mask = Primitive("relu_mask", lambda g, out, *, materialized: relu_masked(g, out, materialized))


@_relu_mask.defgrad
def _(gg, masked, g, out, *, materialized):
    return _relu_mask(gg, out, materialized=materialized), None


@_conv2d_bias_relu.defgrad
def _(g, out, x, w, b, **conv):
    if _on_bf16_kernels(x.shape, w.shape, g.dtype, conv):
        g = _relu_mask(g, out, materialized=True)
    else:
        g = where(out > 0, g, zero_of_(g))  # out > 0 exactly where relu's input is
    return (_conv2d_backprop_input(g, w, input_shape=x.shape, **conv),
            _conv2d_backprop_filter(x, g, filter_shape=w.shape, **conv),
            unbroadcast(g, b.shape))


# -- pooling primitives ---------------------------------------------------------------------------
_max_pool = Primitive(
    "max_pool2d", lambda x, *, ksize, strides, padding: _max_pool_forward(x, ksize, strides, padding))
# the gradient scatters each window's dy to the first maximum of that window in x; its
# transpose gathers g (shaped like x) there
_max_pool_grad_op = Primitive(
    "max_pool2d_grad",
    lambda x, dy, *, ksize, strides, padding: max_pool2d_grad(x, dy, ksize, strides, padding))
_max_pool_grad_grad_op = Primitive(
    "max_pool2d_grad_grad",
    lambda x, g, *, ksize, strides, padding: max_pool2d_grad_grad(x, g, ksize, strides, padding))


@_max_pool.defgrad
def _(g, out, x, **pool):
    return _max_pool_grad_op(x, g, **pool)


# Where the maxima are is piecewise constant in x, so x gets no gradient from the two below.
@_max_pool_grad_op.defgrad
def _(g, out, x, dy, **pool):
    return None, _max_pool_grad_grad_op(x, g, **pool)


@_max_pool_grad_grad_op.defgrad
def _(g, out, x, gx, **pool):
    return None, _max_pool_grad_op(x, g, **pool)


_avg_pool = Primitive(
    "avg_pool2d", lambda x, *, ksize, strides, padding: _avg_pool_forward(x, ksize, strides, padding))
_avg_pool_grad_op = Primitive(
    "avg_pool2d_grad",
    lambda dy, *, input_shape, ksize, strides, padding: avg_pool2d_grad(dy, input_shape, ksize, strides, padding))


@_avg_pool.defgrad
def _(g, out, x, **pool):
    return _avg_pool_grad_op(g, input_shape=x.shape, **pool)


@_avg_pool_grad_op.defgrad
def _(g, out, dy, *, input_shape, **pool):
    return _avg_pool(g, **pool)


# -- argument checking --------------------------------------------------------------------------
def _data_format(data_format, op):
    fmt = "NHWC" if data_format is None else str(data_format).upper()
    if fmt not in ("NHWC", "NCHW"):
        raise ValueError(f"{op}: data_format must be 'NHWC' or 'NCHW', received {data_format!r}")
    return fmt


def _pair(value, what, op, data_format):
    """int | [n] | [h, w] | [1, h, w, 1] (in ``data_format`` order) -> (h, w), all >= 1."""
    if isinstance(value, (Tensor, Variable, np.ndarray)):
        value = np.asarray(value).tolist()
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        seq = [int(value)] * 2
    else:
        try:
            seq = [int(v) for v in value]
        except (TypeError, ValueError):
            raise TypeError(f"{op}: {what} must be an int or a list of 1, 2 or 4 ints, received {value!r}") from None
        if len(seq) == 1:
            seq = seq * 2
        elif len(seq) == 4:
            spatial = (1, 2) if data_format == "NHWC" else (2, 3)
            others = [seq[i] for i in range(4) if i not in spatial]
            if others != [1, 1]:
                raise ValueError(f"{op}: {what} {list(value)} must be 1 in the batch and depth dimensions "
                                 f"(data_format {data_format})")
            seq = [seq[i] for i in spatial]
        elif len(seq) != 2:
            raise ValueError(f"{op}: {what} must be an int or a list of 1, 2 or 4 ints, received {list(value)}")
    if min(seq) < 1:
        raise ValueError(f"{op}: {what} must be positive, received {value!r}")
    return tuple(seq)


def _padding(padding, op, data_format, explicit=True):
    """'SAME' | 'VALID' (any case) | explicit pairs -> 'SAME' | 'VALID' | ((top, bottom), (left, right))."""
    if isinstance(padding, str):
        if padding.upper() in ("SAME", "VALID"):
            return padding.upper()
    elif explicit and padding is not None:
        try:
            pairs = [tuple(int(p) for p in pair) for pair in padding]
        except (TypeError, ValueError):
            pairs = None
        if pairs is not None and all(len(p) == 2 for p in pairs) and len(pairs) in (2, 4):
            if len(pairs) == 4:
                spatial = (1, 2) if data_format == "NHWC" else (2, 3)
                if any(pairs[i] != (0, 0) for i in range(4) if i not in spatial):
                    raise ValueError(f"{op}: explicit padding {padding!r} must be [0, 0] in the batch and depth "
                                     f"dimensions")
                pairs = [pairs[i] for i in spatial]
            if min(min(p) for p in pairs) < 0:
                raise ValueError(f"{op}: explicit padding must be non-negative, received {padding!r}")
            return tuple(pairs)
    expected = "'SAME', 'VALID' or a list of 4 [before, after] pairs" if explicit else "'SAME' or 'VALID'"
    raise ValueError(f"{op}: padding must be {expected}, received {padding!r}")


def _output_size(op, in_hw, k_hw, strides, padding, dilations):
    """The spatial output shape; a ValueError if the window does not fit."""
    out = []
    for axis, (n, k, s, d) in enumerate(zip(in_hw, k_hw, strides, dilations)):
        effective = (k - 1) * d + 1
        if padding == "SAME":
            out.append(-(-n // s))
            continue
        lo, hi = (0, 0) if padding == "VALID" else padding[axis]
        size = (n + lo + hi - effective) // s + 1
        if size < 1:
            raise ValueError(f"{op}: computed output size would be {size} along spatial axis {axis}: input size {n} "
                             f"(padded by {lo + hi}) is smaller than the effective window size {effective} "
                             f"(window {k}, dilation {d}). Use padding='SAME' or a smaller window.")
        out.append(size)
    return tuple(out)


def _rank4(x, op, what):
    if x.ndim != 4:
        raise ValueError(f"{op}: {what} must be 4-dimensional, received shape {x.shape}")


def _float_pair(op, x, w):
    x, w = binary_args(op, x, w)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise TypeError(f"{op} expects floating-point input and filters, received dtype {x.dtype.name}")
    return x, w


# -- public ops -------------------------------------------------------------------------------------
def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):  # noqa: A002
    """2-D convolution (cross-correlation, as ``tf.nn.conv2d``).

    Args:
      input: [batch, height, width, in_channels] ('NHWC') or [batch, in_channels, height, width] ('NCHW').
      filters: [filter_height, filter_width, in_channels, out_channels].
      strides: an int or a list of 1, 2 or 4 ints (4: in ``data_format`` order, 1 for batch/depth).
      padding: 'SAME', 'VALID', or explicit [[0, 0], [top, bottom], [left, right], [0, 0]] pairs.
      data_format: 'NHWC' (default) or 'NCHW'.
      dilations: like ``strides``; spacing between filter taps (default 1).

    Returns:
      The output in ``data_format``; differentiable in ``input`` and ``filters`` to any order.
    """
    fmt, x, w, conv = _conv2d_args("conv2d", input, filters, strides, padding, data_format, dilations)
    y = _conv2d(x, w, **conv)
    return transpose(y, _TO_NCHW) if fmt == "NCHW" else y


def conv2d_bias_relu(input, filters, bias, strides, padding, dilations=None):  # noqa: A002
    """``relu(conv2d(input, filters, ...) + bias)`` (NHWC) as one op: what a Conv2D layer with a
    bias and ``activation="relu"`` computes, with the bias and ReLU fused into the convolution
    where it runs on minikeras' native kernels. Arguments as ``conv2d``; ``bias`` has one value
    per output channel."""
    _, x, w, conv = _conv2d_args("conv2d", input, filters, strides, padding, "NHWC", dilations)
    _, b = binary_args("conv2d", x, bias)
    if b.shape != (w.shape[3],):
        raise ValueError(f"conv2d: bias must have shape ({w.shape[3]},) (one value per output channel), received "
                         f"shape {b.shape}")
    return _conv2d_bias_relu(x, w, b, **conv)


def _conv2d_args(op, input, filters, strides, padding, data_format, dilations):  # noqa: A002
    """Checked ``conv2d`` arguments: (data format, NHWC x, w, {strides, padding, dilations})."""
    fmt = _data_format(data_format, op)
    x, w = _float_pair("Conv2D", input, filters)
    _rank4(x, op, "input")
    _rank4(w, op, "filters")
    strides = _pair(strides, "strides", op, fmt)
    dilations = _pair(1 if dilations is None else dilations, "dilations", op, fmt)
    padding = _padding(padding, op, fmt)
    if fmt == "NCHW":
        x = transpose(x, _TO_NHWC)
    if x.shape[3] != w.shape[2]:
        raise ValueError(f"{op}: input depth {x.shape[3]} must equal the filters' in_channels {w.shape[2]} (input "
                         f"shape {tuple(input.shape) if hasattr(input, 'shape') else x.shape}, filters shape {w.shape} "
                         "= [height, width, in_channels, out_channels])")
    _output_size(op, x.shape[1:3], w.shape[:2], strides, padding, dilations)
    return fmt, x, w, {"strides": strides, "padding": padding, "dilations": dilations}


def conv2d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NHWC",  # noqa: A002
                     dilations=None, name=None):
    """The gradient of ``conv2d`` with respect to its input (sometimes called deconvolution).

    Args:
      input: [batch, height, width, in_channels] (or NCHW).
      filters: [filter_height, filter_width, output_channels, in_channels].
      output_shape: the 4 ints of the result's shape, in ``data_format`` order; ``conv2d`` of
        that shape with the same arguments must give ``input``'s spatial shape.
      strides, padding, data_format, dilations: as in ``conv2d``.
    """
    op = "conv2d_transpose"
    fmt = _data_format(data_format, op)
    x, w = _float_pair("Conv2DBackpropInput", input, filters)
    _rank4(x, op, "input")
    _rank4(w, op, "filters")
    strides = _pair(strides, "strides", op, fmt)
    dilations = _pair(1 if dilations is None else dilations, "dilations", op, fmt)
    padding = _padding(padding, op, fmt)
    try:
        shape = tuple(int(n) for n in np.asarray(output_shape).reshape(-1).tolist())
    except (TypeError, ValueError):
        raise TypeError(f"{op}: output_shape must be 4 ints, received {output_shape!r}") from None
    if len(shape) != 4:
        raise ValueError(f"{op}: output_shape must have 4 entries, received {list(shape)}")
    if fmt == "NCHW":
        x = transpose(x, _TO_NHWC)
        shape = tuple(shape[i] for i in _TO_NHWC)
    if x.shape[3] != w.shape[3] or shape[3] != w.shape[2] or shape[0] != x.shape[0]:
        raise ValueError(f"{op}: filters of shape {w.shape} ([height, width, output_channels, in_channels]) do not "
                         f"fit input shape {x.shape} and output_shape {list(shape)} (NHWC)")
    expected = _output_size(op, shape[1:3], w.shape[:2], strides, padding, dilations)
    if expected != x.shape[1:3]:
        raise ValueError(f"{op}: conv2d of output_shape {list(shape)} would have spatial shape {expected}, but input "
                         f"has spatial shape {x.shape[1:3]}; adjust output_shape, strides or padding")
    y = _conv2d_backprop_input(x, w, input_shape=shape, strides=strides, padding=padding, dilations=dilations)
    return transpose(y, _TO_NCHW) if fmt == "NCHW" else y


def _pool_args(op, input, ksize, strides, padding, data_format, explicit):  # noqa: A002
    fmt = _data_format(data_format, op)
    x = input if isinstance(input, (Tensor, Variable, KerasTensor)) else Tensor(to_array(input))
    _rank4(x, op, "input")
    ksize = _pair(ksize, "ksize", op, fmt)
    strides = _pair(strides, "strides", op, fmt)
    padding = _padding(padding, op, fmt, explicit=explicit)
    if fmt == "NCHW":
        x = transpose(x, _TO_NHWC)
    if not isinstance(padding, str) and any(lo >= k or hi >= k for (lo, hi), k in zip(padding, ksize)):
        raise ValueError(f"{op}: explicit padding {padding} must be smaller than the window {ksize}")
    _output_size(op, x.shape[1:3], ksize, strides, padding, (1, 1))
    return fmt, x, dict(ksize=ksize, strides=strides, padding=padding)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """The maximum of each ``ksize`` window (``tf.nn.max_pool2d``); padding never wins the max.

    ``ksize`` and ``strides`` are an int or a list of 1, 2 or 4 ints; ``padding`` is 'SAME',
    'VALID' or explicit pairs. The gradient goes to the first maximum of each window.
    """
    fmt, x, pool = _pool_args("max_pool2d", input, ksize, strides, padding, data_format, explicit=True)
    y = _max_pool(x, **pool)
    return transpose(y, _TO_NCHW) if fmt == "NCHW" else y


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """The mean of each ``ksize`` window (``tf.nn.avg_pool2d``); with 'SAME' padding the mean
    is over the in-bounds elements only, as in TensorFlow."""
    fmt, x, pool = _pool_args("avg_pool2d", input, ksize, strides, padding, data_format, explicit=False)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise TypeError(f"avg_pool2d expects a floating-point input, received dtype {x.dtype.name}")
    y = _avg_pool(x, **pool)
    return transpose(y, _TO_NCHW) if fmt == "NCHW" else y
