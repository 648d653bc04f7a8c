"""N-D convolution with groups and dilation: ``conv_nd``, ``conv_nd_transpose``, ``depthwise_conv_nd``.

What ``nn_conv``'s 2-D ops do not take (1 or 3 spatial axes, ``groups`` / depthwise
convolution, strides with dilation in transposed convolutions) runs on
``lax.conv_general_dilated``, channels_last (``N...C`` inputs, ``...IO`` kernels).
As in ``nn_conv``, a convolution is three primitives whose gradient rules call each other:

    conv(x, w)                 -> d/dx: input_grad(g, w)   d/dw: filter_grad(x, g)
    input_grad(dy, w)          -> d/ddy: conv(g, w)        d/dw: filter_grad(g, dy)
    filter_grad(x, dy)         -> d/dx: input_grad(dy, g)  d/ddy: conv(x, g)

The two gradients' forwards are ``jax.vjp`` of the convolution (it is linear in each
argument, so the point the vjp is taken at does not matter), so derivatives of every order
are those of ``lax.conv_general_dilated``.

A depthwise convolution is three primitives of its own with the same rules, on Keras's depthwise
kernel (*kernel_spatial, channels, multiplier): their forwards are ``xla_cpu.depthwise``'s, which
on the CPU are sums of shifted slices that XLA fuses, an order of magnitude faster than its
grouped convolution, and elsewhere the grouped convolution; both are exactly its math.
"""
import jax
import jax.numpy as jnp
from jax import lax

from minikeras.ops.convert import binary_args
from minikeras.ops.primitive import Primitive
from minikeras.xla_cpu import depthwise

_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def _dimension_numbers(rank):
    s = _SPATIAL[rank]
    return ("N" + s + "C", s + "IO", "N" + s + "C")


def _conv(x, w, strides, padding, dilations, groups):
    return lax.conv_general_dilated(x, w, window_strides=strides, padding=padding, rhs_dilation=dilations,
                                    dimension_numbers=_dimension_numbers(x.ndim - 2), feature_group_count=groups)


def _input_grad(dy, w, input_shape, conv):
    _, pullback = jax.vjp(lambda x: _conv(x, w, **conv), jnp.zeros(input_shape, dy.dtype))
    return pullback(dy)[0]


def _filter_grad(x, dy, filter_shape, conv):
    _, pullback = jax.vjp(lambda w: _conv(x, w, **conv), jnp.zeros(filter_shape, dy.dtype))
    return pullback(dy)[0]


# 'padding' is 'SAME', 'VALID' or a tuple of (low, high) pairs, one per spatial axis.
_conv_nd = Primitive(
    "conv_nd",
    lambda x, w, *, strides, padding, dilations, groups: _conv(x, w, strides, padding, dilations, groups))
_conv_nd_input_grad = Primitive(
    "conv_nd_backprop_input",
    lambda dy, w, *, input_shape, strides, padding, dilations, groups: _input_grad(
        dy, w, input_shape, {"strides": strides, "padding": padding, "dilations": dilations, "groups": groups}))
_conv_nd_filter_grad = Primitive(
    "conv_nd_backprop_filter",
    lambda x, dy, *, filter_shape, strides, padding, dilations, groups: _filter_grad(
        x, dy, filter_shape, {"strides": strides, "padding": padding, "dilations": dilations, "groups": groups}))


@_conv_nd.defgrad
def _(g, out, x, w, **conv):
    return (_conv_nd_input_grad(g, w, input_shape=tuple(x.shape), **conv),
            _conv_nd_filter_grad(x, g, filter_shape=tuple(w.shape), **conv))


@_conv_nd_input_grad.defgrad
def _(g, out, dy, w, *, input_shape, **conv):
    return _conv_nd(g, w, **conv), _conv_nd_filter_grad(g, dy, filter_shape=tuple(w.shape), **conv)


@_conv_nd_filter_grad.defgrad
def _(g, out, x, dy, *, filter_shape, **conv):
    return _conv_nd_input_grad(dy, g, input_shape=tuple(x.shape), **conv), _conv_nd(x, g, **conv)


_depthwise_nd = Primitive(
    "depthwise_conv_nd",
    lambda x, w, *, strides, padding, dilations: depthwise.depthwise_forward(x, w, strides, padding, dilations))
_depthwise_nd_input_grad = Primitive(
    "depthwise_conv_nd_backprop_input",
    lambda dy, w, *, input_shape, strides, padding, dilations: depthwise.depthwise_input_grad(
        dy, w, input_shape, strides, padding, dilations))
_depthwise_nd_filter_grad = Primitive(
    "depthwise_conv_nd_backprop_filter",
    lambda x, dy, *, filter_shape, strides, padding, dilations: depthwise.depthwise_filter_grad(
        x, dy, filter_shape, strides, padding, dilations))


@_depthwise_nd.defgrad
def _(g, out, x, w, **conv):
    return (_depthwise_nd_input_grad(g, w, input_shape=tuple(x.shape), **conv),
            _depthwise_nd_filter_grad(x, g, filter_shape=tuple(w.shape), **conv))


@_depthwise_nd_input_grad.defgrad
def _(g, out, dy, w, *, input_shape, **conv):
    return _depthwise_nd(g, w, **conv), _depthwise_nd_filter_grad(g, dy, filter_shape=tuple(w.shape), **conv)


@_depthwise_nd_filter_grad.defgrad
def _(g, out, x, dy, *, filter_shape, **conv):
    return _depthwise_nd_input_grad(dy, g, input_shape=tuple(x.shape), **conv), _depthwise_nd(x, g, **conv)


def _tuple(value, rank, what, op):
    value = (value,) * rank if isinstance(value, int) else tuple(int(v) for v in value)
    if len(value) != rank or min(value) < 1:
        raise ValueError(f"{op}: `{what}` must be a positive int or {rank} positive ints, received {value!r}")
    return value


def _padding(padding, rank, op):
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "VALID"):
            raise ValueError(f"{op}: `padding` must be 'same', 'valid' or (low, high) pairs, received {padding!r}")
        return padding.upper()
    pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    if len(pads) != rank:
        raise ValueError(f"{op}: `padding` needs one (low, high) pair per spatial axis ({rank}), received {padding!r}")
    return pads


def _checked(op, x, w):
    x, w = binary_args(op, x, w)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise TypeError(f"{op} expects floating-point inputs and kernels, received dtype {x.dtype.name}")
    if x.ndim not in (3, 4, 5) or w.ndim != x.ndim:
        raise ValueError(f"{op}: inputs must be (batch, *spatial, channels) with 1 to 3 spatial axes and the kernel "
                         f"(*spatial, in_channels, out_channels) of the same rank; received input shape {x.shape} "
                         f"and kernel shape {w.shape}")
    return x, w


def conv_nd(x, kernel, strides=1, padding="VALID", dilations=1, groups=1):
    """Channels_last convolution over 1, 2 or 3 spatial axes, with channel groups.

    Args:
      x: (batch, *spatial, channels).
      kernel: (*kernel_spatial, channels // groups, out_channels); ``out_channels`` divisible by ``groups``.
      strides, dilations: an int or one per spatial axis.
      padding: 'SAME', 'VALID' or one (low, high) pair per spatial axis.
      groups: the input channels and the outputs are split into this many groups, convolved apart.

    Returns:
      (batch, *spatial', out_channels), differentiable in ``x`` and ``kernel`` to any order.
    """
    op = "conv_nd"
    x, w = _checked(op, x, kernel)
    rank = x.ndim - 2
    if x.shape[-1] != w.shape[-2] * groups or w.shape[-1] % groups:
        raise ValueError(f"{op}: input channels {x.shape[-1]} must equal the kernel's in_channels {w.shape[-2]} times "
                         f"groups={groups}, and out_channels {w.shape[-1]} be divisible by groups (input shape "
                         f"{x.shape}, kernel shape {w.shape})")
    return _conv_nd(x, w, strides=_tuple(strides, rank, "strides", op), padding=_padding(padding, rank, op),
                    dilations=_tuple(dilations, rank, "dilations", op), groups=int(groups))


def depthwise_conv_nd(x, kernel, strides=1, padding="VALID", dilations=1):
    """Each input channel convolved with its own ``multiplier`` filters (Keras's depthwise kernel
    (*kernel_spatial, channels, multiplier)); output channel ``c * multiplier + m``.

    Args and result as ``conv_nd``'s with ``groups`` = channels, differentiable to any order;
    on the CPU it runs as ``xla_cpu.depthwise``'s fused taps (see the module docstring).
    """
    op = "depthwise_conv_nd"
    x, w = _checked(op, x, kernel)
    rank = x.ndim - 2
    if w.shape[-2] != x.shape[-1]:
        raise ValueError(f"{op}: the kernel's channels {w.shape[-2]} must equal the input's "
                         f"{x.shape[-1]} (input shape {x.shape}, kernel shape {w.shape})")
    return _depthwise_nd(x, w, strides=_tuple(strides, rank, "strides", op), padding=_padding(padding, rank, op),
                         dilations=_tuple(dilations, rank, "dilations", op))


def conv_nd_transpose(x, kernel, output_spatial, strides=1, padding="VALID", dilations=1):
    """The gradient of ``conv_nd`` with respect to its input: a transposed convolution.

    Args:
      x: (batch, *spatial, in_channels).
      kernel: (*kernel_spatial, out_channels, in_channels), Keras's transposed-convolution layout.
      output_spatial: the result's spatial shape; ``conv_nd`` of it with the same arguments must
        give ``x``'s spatial shape.
      strides, padding, dilations: those of that ``conv_nd``.
    """
    op = "conv_nd_transpose"
    x, w = _checked(op, x, kernel)
    rank = x.ndim - 2
    if x.shape[-1] != w.shape[-1]:
        raise ValueError(f"{op}: input channels {x.shape[-1]} must equal the kernel's last axis (input shape "
                         f"{x.shape}, kernel shape {w.shape} = (*spatial, out_channels, in_channels))")
    shape = (x.shape[0],) + tuple(int(n) for n in output_spatial) + (w.shape[-2],)
    return _conv_nd_input_grad(x, w, input_shape=shape, strides=_tuple(strides, rank, "strides", op),
                               padding=_padding(padding, rank, op), dilations=_tuple(dilations, rank, "dilations", op),
                               groups=1)
