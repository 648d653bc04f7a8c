"""``keras.ops.nn``: Keras 3's neural-network ops (activations, softmax, losses, conv, pooling,
normalization, attention, ctc), with Keras 3's signatures, defaults and result dtypes.

Each runs as one recorded op whose forward is the jax computation Keras 3's JAX backend
does, so values, dtypes and errors are those of Keras on JAX, and gradients of every order
come from ``jax.vjp`` (``keras_op.jax_forward``). ``data_format`` defaults to
``"channels_last"``; ``"channels_first"`` is supported wherever Keras takes it.

    from minikeras import keras
    y = keras.ops.nn.softmax(logits)
    z = keras.ops.conv(images, kernel, strides=2, padding="same")
"""
import warnings

import jax.numpy as jnp
import numpy as np
from jax import nn as jnn

from minikeras.backend import epsilon as backend_epsilon
from minikeras.keras.ops import nn_forwards as fw
from minikeras.keras.ops.keras_op import jax_forward, keras_op
from minikeras.tensor import to_array


def _shape(x):
    return tuple(jnp.shape(to_array(x)))


def _data_format(data_format):
    data_format = "channels_last" if data_format is None else str(data_format).lower()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
                         f"Received: data_format={data_format}")
    return data_format


def _activation(name, fn):
    @keras_op(name)
    def op(x):
        return jax_forward(name, fn, x)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Keras 3's ``keras.ops.{name}(x)``, elementwise."
    return op


relu = _activation("relu", jnn.relu)
relu6 = _activation("relu6", jnn.relu6)
sigmoid = _activation("sigmoid", jnn.sigmoid)
sparse_sigmoid = _activation("sparse_sigmoid", jnn.sparse_sigmoid)
softplus = _activation("softplus", jnn.softplus)
softsign = _activation("softsign", jnn.soft_sign)
sparse_plus = _activation("sparse_plus", jnn.sparse_plus)
silu = _activation("silu", jnn.silu)
swish = silu
log_sigmoid = _activation("log_sigmoid", jnn.log_sigmoid)
hard_sigmoid = _activation("hard_sigmoid", jnn.hard_sigmoid)
hard_silu = _activation("hard_silu", jnn.hard_silu)
hard_swish = hard_silu
selu = _activation("selu", jnn.selu)
hard_tanh = _activation("hard_tanh", jnn.hard_tanh)
tanh_shrink = _activation("tanh_shrink", fw.tanh_shrink)


@keras_op("squareplus")
def squareplus(x, b=4):
    """``(x + sqrt(x**2 + b)) / 2``."""
    return jax_forward("squareplus", fw.squareplus, x, b=b)


@keras_op("leaky_relu")
def leaky_relu(x, negative_slope=0.2):
    """``x`` where positive, else ``negative_slope * x``."""
    return jax_forward("leaky_relu", fw.leaky_relu, x, negative_slope=negative_slope)


@keras_op("elu")
def elu(x, alpha=1.0):
    """``x`` where positive, else ``alpha * (exp(x) - 1)``."""
    return jax_forward("elu", fw.elu, x, alpha=alpha)


@keras_op("celu")
def celu(x, alpha=1.0):
    """``max(x, 0) + alpha * min(0, exp(x / alpha) - 1)``."""
    return jax_forward("celu", fw.celu, x, alpha=alpha)


@keras_op("gelu")
def gelu(x, approximate=True):
    """The Gaussian error linear unit (tanh approximation unless ``approximate=False``)."""
    return jax_forward("gelu", fw.gelu, x, approximate=bool(approximate))


@keras_op("glu")
def glu(x, axis=-1):
    """The gated linear unit: ``a * sigmoid(b)`` of ``x``'s halves along ``axis`` (even size)."""
    shape = _shape(x)
    if shape and shape[axis] % 2:
        raise ValueError(f"axis size must be divisible by 2. Received: x.shape={shape} with axis={axis}")
    return jax_forward("glu", fw.glu, x, axis=axis)


@keras_op("hard_shrink")
def hard_shrink(x, threshold=0.5):
    """``x`` where ``|x| > threshold``, else 0."""
    return jax_forward("hard_shrink", fw.hard_shrink, x, threshold=threshold)


@keras_op("soft_shrink")
def soft_shrink(x, threshold=0.5):
    """``x`` moved ``threshold`` towards 0, 0 within ``[-threshold, threshold]``."""
    return jax_forward("soft_shrink", fw.soft_shrink, x, threshold=threshold)


@keras_op("threshold")
def threshold(x, threshold, default_value):
    """``x`` where ``x > threshold``, else ``default_value``."""
    return jax_forward("threshold", fw.threshold, x, threshold=threshold, default_value=default_value)


def _softmax_axis_warning(x, axis):
    shape = _shape(x)
    if isinstance(axis, int) and -len(shape) <= axis < len(shape) and shape[axis] == 1:
        warnings.warn(f"You are using a softmax over axis {axis} of a tensor of shape {shape}. This axis has size 1. "
                      "The softmax operation will always return the value 1, which is likely not what you "
                      "intended. Did you mean to use a sigmoid instead?", stacklevel=3)


@keras_op("softmax")
def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` along ``axis`` (an int or a tuple of axes)."""
    _softmax_axis_warning(x, axis)
    return jax_forward("softmax", fw.over_axes, x, normalizer=jnn.softmax, axis=axis)


@keras_op("log_softmax")
def log_softmax(x, axis=-1):
    """``x - logsumexp(x)`` along ``axis`` (an int or a tuple of axes)."""
    return jax_forward("log_softmax", fw.over_axes, x, normalizer=jnn.log_softmax, axis=axis)


@keras_op("sparsemax")
def sparsemax(x, axis=-1):
    """The Euclidean projection of ``x`` onto the probability simplex along ``axis``."""
    return jax_forward("sparsemax", fw.sparsemax, x, axis=axis)


# ----------------------------------------------------------------------------- pooling, conv


def _pool(name, inputs, pool_size, strides, padding, data_format):
    data_format = _data_format(data_format)
    padding = str(padding).lower()
    if padding not in ("same", "valid"):
        raise ValueError(f"Invalid padding '{padding}', must be 'same' or 'valid'.")
    rank = len(_shape(inputs)) - 2
    if rank < 1:
        raise ValueError(f"keras.ops.{name}: inputs must have rank 3 or more (batch, spatial..., channels), "
                         f"received shape {_shape(inputs)}")
    pool_size = fw.spatial(pool_size, rank, "pool_size")
    strides = pool_size if strides is None else fw.spatial(strides, rank, "strides")
    return jax_forward(name, fw.pool, inputs, kind=name, pool_size=pool_size, strides=strides, padding=padding,
                       data_format=data_format)


@keras_op("max_pool")
def max_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """Max pooling over the spatial axes of a rank 3, 4 or 5 ``inputs``."""
    return _pool("max_pool", inputs, pool_size, strides, padding, data_format)


@keras_op("average_pool")
def average_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """Average pooling; with ``padding="same"`` the padded positions are not counted."""
    return _pool("average_pool", inputs, pool_size, strides, padding, data_format)


def _adaptive(name, inputs, output_size, data_format):
    data_format = _data_format(data_format)
    rank = len(_shape(inputs)) - 2
    if rank not in (1, 2, 3):
        raise ValueError(f"{name} supports only 1D/2D/3D inputs")
    output_size = fw.spatial(output_size, rank, "output_size")
    return jax_forward(name, fw.adaptive_pool, inputs, kind=name, output_size=output_size, data_format=data_format)


@keras_op("adaptive_average_pool")
def adaptive_average_pool(inputs, output_size, data_format=None):
    """Average pooling to a fixed ``output_size`` (windows as PyTorch's adaptive pooling)."""
    return _adaptive("adaptive_average_pool", inputs, output_size, data_format)


@keras_op("adaptive_max_pool")
def adaptive_max_pool(inputs, output_size, data_format=None):
    """Max pooling to a fixed ``output_size``."""
    return _adaptive("adaptive_max_pool", inputs, output_size, data_format)


def _conv_args(name, inputs, kernel, strides, padding, data_format, dilation_rate):
    data_format = _data_format(data_format)
    padding = str(padding).lower()
    if padding not in ("same", "valid"):
        raise ValueError(f"The `padding` argument must be one of 'valid', 'same'. Received: padding={padding}")
    in_shape, k_shape = _shape(inputs), _shape(kernel)
    rank = len(in_shape) - 2
    if rank < 1 or len(k_shape) != rank + 2:
        raise ValueError(f"keras.ops.{name}: inputs of rank {len(in_shape)} (shape {in_shape}) need a kernel of rank "
                         f"{len(in_shape)}, received kernel shape {k_shape}")
    return (data_format, padding, fw.spatial(strides, rank, "strides"),
            fw.spatial(dilation_rate, rank, "dilation_rate"), in_shape, k_shape)


def _channels(shape, data_format):
    return shape[-1] if data_format == "channels_last" else shape[1]


@keras_op("conv")
def conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """N-D convolution; ``kernel`` is ``spatial + (in_channels / groups, out_channels)``."""
    data_format, padding, strides, dilation, in_shape, k_shape = _conv_args(
        "conv", inputs, kernel, strides, padding, data_format, dilation_rate)
    channels = _channels(in_shape, data_format)
    if channels % k_shape[-2]:
        raise ValueError("The number of input channels must be evenly divisible by kernel's in_channels. "
                         f"Received input channels {channels} and kernel in_channels {k_shape[-2]}. ")
    return jax_forward("conv", fw.conv, inputs, kernel, strides=strides, padding=padding, data_format=data_format,
                       dilation=dilation)


def _check_same_channels(in_shape, k_shape, data_format):
    channels = _channels(in_shape, data_format)
    if channels != k_shape[-2]:
        raise ValueError("The number of input channels must match the kernel's input channels. Received input "
                         f"channels {channels} (inputs.shape={in_shape}) and kernel input channels {k_shape[-2]} "
                         f"(kernel.shape={k_shape}).")


@keras_op("depthwise_conv")
def depthwise_conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """Depthwise convolution: ``kernel`` is ``spatial + (in_channels, channel_multiplier)``."""
    data_format, padding, strides, dilation, in_shape, k_shape = _conv_args(
        "depthwise_conv", inputs, kernel, strides, padding, data_format, dilation_rate)
    _check_same_channels(in_shape, k_shape, data_format)
    return jax_forward("depthwise_conv", fw.depthwise_conv, inputs, kernel, strides=strides, padding=padding,
                       data_format=data_format, dilation=dilation)


@keras_op("separable_conv")
def separable_conv(inputs, depthwise_kernel, pointwise_kernel, strides=1, padding="valid", data_format=None,
                   dilation_rate=1):
    """A depthwise convolution followed by a 1x1 (pointwise) convolution."""
    data_format, padding, strides, dilation, in_shape, k_shape = _conv_args(
        "separable_conv", inputs, depthwise_kernel, strides, padding, data_format, dilation_rate)
    _check_same_channels(in_shape, k_shape, data_format)
    return jax_forward("separable_conv", fw.separable_conv, inputs, depthwise_kernel, pointwise_kernel,
                       strides=strides, padding=padding, data_format=data_format, dilation=dilation)


@keras_op("conv_transpose")
def conv_transpose(inputs, kernel, strides=1, padding="valid", output_padding=None, data_format=None,
                   dilation_rate=1):
    """Transposed convolution; ``kernel`` is ``spatial + (out_channels, in_channels)``."""
    data_format, padding, strides, dilation, in_shape, k_shape = _conv_args(
        "conv_transpose", inputs, kernel, strides, padding, data_format, dilation_rate)
    channels = _channels(in_shape, data_format)
    if channels != k_shape[-1]:
        raise ValueError("The number of input channels must match the kernel's input channels (its last "
                         f"dimension). Received input channels {channels} (inputs.shape={in_shape}) and kernel "
                         f"input channels {k_shape[-1]} (kernel.shape={k_shape}).")
    rank = len(in_shape) - 2
    pads = []
    for i in range(rank):
        out_pad = output_padding if output_padding is None or isinstance(output_padding, int) else output_padding[i]
        pads.append(fw.transpose_padding(k_shape[i], strides[i], dilation[i], padding, out_pad))
    return jax_forward("conv_transpose", fw.conv_transpose, inputs, kernel, strides=strides, pads=tuple(pads),
                       data_format=data_format, dilation=dilation)


# ----------------------------------------------------------------------------- encodings


def _class_axis(name, shape, axis):
    if not -len(shape) - 1 <= axis <= len(shape):
        raise ValueError(f"axis must be -1 or between [0, {len(shape)}), but received {axis}.")


@keras_op("one_hot")
def one_hot(x, num_classes, axis=-1, dtype=None, sparse=False):
    """The one-hot encoding of integer ``x`` (float32 unless ``dtype``); -1 and out-of-range
    values encode as zeros."""
    if sparse:
        raise ValueError("keras.ops.one_hot: sparse=True is not supported by minikeras (no sparse tensors)")
    _class_axis("one_hot", _shape(x), axis)
    return jax_forward("one_hot", fw.one_hot, x, num_classes=int(num_classes), axis=axis,
                       dtype=np.dtype(dtype or "float32").name)


@keras_op("multi_hot")
def multi_hot(inputs, num_classes=None, axis=-1, dtype=None, sparse=False, **kwargs):
    """The multi-hot encoding of integer ``inputs`` (a batch of index lists, or one list)."""
    if num_classes is None and "num_tokens" in kwargs:
        num_classes = kwargs.pop("num_tokens")
    if num_classes is None:
        raise ValueError("Argument `num_classes` must be specified.")
    if sparse:
        raise ValueError("keras.ops.multi_hot: sparse=True is not supported by minikeras (no sparse tensors)")
    _class_axis("multi_hot", _shape(inputs), axis)
    return jax_forward("multi_hot", fw.multi_hot, inputs, num_classes=int(num_classes), axis=axis,
                       dtype=np.dtype(dtype or "float32").name)


# ----------------------------------------------------------------------------- losses


@keras_op("binary_crossentropy")
def binary_crossentropy(target, output, from_logits=False):
    """Elementwise binary cross-entropy (``output`` probabilities, or logits)."""
    if _shape(target) != _shape(output):
        raise ValueError("Arguments `target` and `output` must have the same shape. Received: "
                         f"target.shape={_shape(target)}, output.shape={_shape(output)}")
    return jax_forward("binary_crossentropy", fw.binary_crossentropy, target, output, from_logits=bool(from_logits))


@keras_op("categorical_crossentropy")
def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy of one-hot (or soft) ``target`` and ``output`` along ``axis``."""
    t, o = _shape(target), _shape(output)
    if t != o:
        raise ValueError(f"Arguments `target` and `output` must have the same shape. Received: target.shape={t}, "
                         f"output.shape={o}")
    if len(t) < 1:
        raise ValueError(f"Arguments `target` and `output` must be at least rank 1. Received: target.shape={t}, "
                         f"output.shape={o}")
    return jax_forward("categorical_crossentropy", fw.categorical_crossentropy, target, output,
                       from_logits=bool(from_logits), axis=axis)


@keras_op("sparse_categorical_crossentropy")
def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy of integer class ``target`` and ``output`` along ``axis``."""
    t, o = _shape(target), _shape(output)
    if len(o) < 1:
        raise ValueError(f"Argument `output` must be at least rank 1. Received: output.shape={o}")
    if len(t) == len(o) and t[-1] == 1:
        t = t[:-1]
    if t != o[:-1]:
        raise ValueError("Arguments `target` and `output` must have the same shape up until the last dimension: "
                         f"target.shape={_shape(target)}, output.shape={o}")
    return jax_forward("sparse_categorical_crossentropy", fw.sparse_categorical_crossentropy, target, output,
                       from_logits=bool(from_logits), axis=axis)


@keras_op("ctc_loss")
def ctc_loss(target, output, target_length, output_length, mask_index=0):
    """The CTC loss per sequence: ``target`` (batch, max_label) ints, ``output`` (batch, time,
    classes) logits, and the lengths of each."""
    t, o = _shape(target), _shape(output)
    if len(t) != 2:
        raise ValueError(f"Targets `target` is expected to be a tensor of rank 2. Received: target.shape={t}")
    if len(o) != 3:
        raise ValueError(f"Outputs `output` is expected to be a tensor of rank 3. Received: output.shape={o}")
    if t[0] != o[0]:
        raise ValueError(f"Arguments `target` and `output` must have the same first dimension. Received shapes: "
                         f"target.shape={t} and output.shape={o}")
    return jax_forward("ctc_loss", fw.ctc_loss, target, output, target_length, output_length,
                       mask_index=int(mask_index))


@keras_op("ctc_decode")
def ctc_decode(inputs, sequence_lengths, strategy="greedy", beam_width=100, top_paths=1, merge_repeated=True,
               mask_index=0):
    """Decodes CTC ``inputs`` (batch, time, classes): ``(paths, scores)``; paths are
    ``(top_paths, batch, time)`` ints with -1 after each sequence. ``strategy``: "greedy" or
    "beam_search"."""
    if strategy == "greedy":
        return jax_forward("ctc_decode", fw.ctc_greedy_decode, inputs, sequence_lengths,
                           merge_repeated=bool(merge_repeated), mask_index=mask_index)
    if strategy == "beam_search":
        return jax_forward("ctc_decode", fw.ctc_beam_search_decode, inputs, sequence_lengths,
                           beam_width=int(beam_width), top_paths=int(top_paths), mask_index=mask_index)
    raise ValueError(f"Invalid strategy {strategy}. Supported values are 'greedy' and 'beam_search'.")


@keras_op("psnr")
def psnr(x1, x2, max_val):
    """The peak signal-to-noise ratio of ``x1`` and ``x2`` (the same shape)."""
    if len(_shape(x1)) != len(_shape(x2)):
        raise ValueError("Inputs must have the same rank")
    if _shape(x1) != _shape(x2):
        raise ValueError(f"Input shapes {_shape(x1)} and {_shape(x2)} must match for PSNR calculation. ")
    return jax_forward("psnr", fw.psnr, x1, x2, max_val)


# ----------------------------------------------------------------------------- normalization


@keras_op("moments")
def moments(x, axes, keepdims=False, synchronized=False):
    """``(mean, variance)`` of ``x`` over ``axes`` (float16/bfloat16 computed in float32)."""
    if synchronized:
        raise NotImplementedError("Argument synchronized=True is not supported with JAX.")
    axes = tuple(axes) if isinstance(axes, (list, tuple)) else axes
    return jax_forward("moments", fw.moments, x, axes=axes, keepdims=bool(keepdims))


@keras_op("batch_normalization")
def batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3):
    """``(x - mean) / sqrt(variance + epsilon) * scale + offset``; ``mean`` etc. are vectors
    along ``axis``."""
    n = _shape(x)[axis]
    for what, v in (("mean", mean), ("variance", variance), ("offset", offset), ("scale", scale)):
        if v is not None and _shape(v) != (n,):
            raise ValueError(f"keras.ops.batch_normalization: `{what}` must be a vector of length {n} (x.shape="
                             f"{_shape(x)}, axis={axis}), received shape {_shape(v)}")
    args = [x, mean, variance] + [v for v in (offset, scale) if v is not None]
    return jax_forward("batch_normalization", fw.batch_normalization, *args, axis=axis,
                       has_offset=offset is not None, has_scale=scale is not None, epsilon=float(epsilon))


@keras_op("normalize")
def normalize(x, axis=-1, order=2, epsilon=None):
    """``x`` divided by its ``order``-norm along ``axis`` (at least ``epsilon``)."""
    if not isinstance(order, int) or not order >= 1:
        raise ValueError(f"Argument `order` must be an int >= 1. Received: order={order}")
    return jax_forward("normalize", fw.normalize, x, axis=axis, order=order,
                       epsilon=backend_epsilon() if epsilon is None else float(epsilon))


@keras_op("rms_normalization")
def rms_normalization(x, scale=None, axis=-1, epsilon=None):
    """``x / sqrt(mean(x**2, axis) + epsilon) * scale``, computed in at least float32."""
    axis = tuple(sorted(axis)) if isinstance(axis, (list, tuple)) else axis
    args = [x] if scale is None else [x, scale]
    return jax_forward("rms_normalization", fw.rms_normalization, *args, axis=axis,
                       epsilon=backend_epsilon() if epsilon is None else float(epsilon))


@keras_op("layer_normalization")
def layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None, **kwargs):
    """``(x - mean) / sqrt(variance + epsilon) * gamma + beta`` over ``axis``; with
    ``rms_scaling=True`` (a keyword) the mean is not subtracted and ``beta`` is ignored."""
    rms_scaling = bool(kwargs.pop("rms_scaling", False))
    if kwargs:
        raise TypeError(f"keras.ops.layer_normalization got unexpected keyword arguments {sorted(kwargs)}")
    axes = tuple(sorted([axis] if isinstance(axis, int) else axis))
    args = [x] + [v for v in (gamma, beta) if v is not None]
    return jax_forward("layer_normalization", fw.layer_normalization, *args, axes=axes,
                       has_gamma=gamma is not None, has_beta=beta is not None, rms_scaling=rms_scaling,
                       epsilon=backend_epsilon() if epsilon is None else float(epsilon))


# ----------------------------------------------------------------------------- attention, misc


@keras_op("dot_product_attention")
def dot_product_attention(query, key, value, bias=None, mask=None, scale=None, is_causal=False,
                          flash_attention=None, attn_logits_soft_cap=None):
    """Scaled dot-product attention of ``(batch, time, heads, depth)`` query, key and value
    (grouped query attention when key has fewer heads); ``mask`` is boolean, True to keep."""
    if attn_logits_soft_cap is not None:
        raise ValueError("attn_logits_soft_cap is only supported for JAX on TPU. Set attn_logits_soft_cap=None "
                         "when not using JAX on TPU.")
    if flash_attention:
        raise RuntimeError("Flash attention is not supported on this device (minikeras runs XLA's attention)")
    q, k, v = _shape(query), _shape(key), _shape(value)
    if len(q) != 4 or len(k) != 4 or len(v) != 4:
        raise ValueError("keras.ops.dot_product_attention expects 4D query, key and value (batch, time, heads, "
                         f"depth), received shapes {q}, {k} and {v}")
    if q[2] % k[2]:
        raise ValueError(f"keras.ops.dot_product_attention: the query's heads ({q[2]}, query.shape={q}) must be a "
                         f"multiple of the key's ({k[2]}, key.shape={k})")
    args = [query, key, value] + [t for t in (bias, mask) if t is not None]
    return jax_forward("dot_product_attention", fw.dot_product_attention, *args, has_bias=bias is not None,
                       has_mask=mask is not None, scale=None if scale is None else float(scale),
                       is_causal=bool(is_causal))


@keras_op("polar")
def polar(abs_, angle):
    """The complex number ``abs_ * (cos(angle) + i sin(angle))``."""
    return jax_forward("polar", fw.polar, abs_, angle)


@keras_op("unfold")
def unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of an NCHW image ``x``: ``(N, C * kh * kw, L)`` (``torch.nn.Unfold``)."""
    if len(_shape(x)) != 4:
        raise ValueError(f"Input must be a 4D tensor. Received: input.shape={_shape(x)}")
    return jax_forward("unfold", fw.unfold, x, kernel=fw.pair(kernel_size), dilation=fw.pair(dilation),
                       padding=fw.pair(padding), stride=fw.pair(stride))


@keras_op("fold")
def fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The inverse of ``unfold`` (overlaps summed): ``(N, C * kh * kw, L)`` to ``(N, C, H, W)``."""
    shape = _shape(x)
    if len(shape) != 3:
        raise ValueError(f"Input must be a 3D tensor. Received: input.shape={shape}")
    kh, kw = fw.pair(kernel_size)
    if shape[1] % (kh * kw):
        raise ValueError(f"Input channels ({shape[1]}) must be divisible by kernel_size product ({kh * kw}).")
    return jax_forward("fold", fw.fold, x, output_size=fw.pair(output_size), kernel=(kh, kw),
                       dilation=fw.pair(dilation), padding=fw.pair(padding), stride=fw.pair(stride))


def _block_op(name, x, block_size, data_format):
    shape = _shape(x)
    if len(shape) != 4:
        raise ValueError(f"Input tensor must be 4D. Received: x.shape={shape}")
    data_format = _data_format(data_format)
    return jax_forward(name, getattr(fw, name), x, block_size=int(block_size), data_format=data_format)


@keras_op("depth_to_space")
def depth_to_space(x, block_size, data_format="channels_last"):
    """Moves channel blocks to spatial blocks (pixel shuffle)."""
    shape = _shape(x)
    channels = _channels(shape, _data_format(data_format)) if len(shape) == 4 else 0
    if channels % (block_size ** 2):
        raise ValueError(f"Number of channels ({channels}) must be divisible by block_size**2 ({block_size ** 2}).")
    return _block_op("depth_to_space", x, block_size, data_format)


@keras_op("space_to_depth")
def space_to_depth(x, block_size, data_format="channels_last"):
    """Moves spatial blocks to channels (pixel unshuffle)."""
    shape = _shape(x)
    if len(shape) == 4:
        spatial = shape[1:3] if _data_format(data_format) == "channels_last" else shape[2:]
        if any(s % block_size for s in spatial):
            raise ValueError(f"Height ({spatial[0]}) and width ({spatial[1]}) must be divisible by block_size "
                             f"({block_size}).")
    return _block_op("space_to_depth", x, block_size, data_format)


__all__ = ["adaptive_average_pool", "adaptive_max_pool", "average_pool", "batch_normalization",
    "binary_crossentropy", "categorical_crossentropy", "celu", "conv", "conv_transpose", "ctc_decode", "ctc_loss",
    "depth_to_space", "depthwise_conv", "dot_product_attention", "elu", "fold", "gelu", "glu", "hard_shrink",
    "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "layer_normalization", "leaky_relu", "log_sigmoid",
    "log_softmax", "max_pool", "moments", "multi_hot", "normalize", "one_hot", "polar", "psnr", "relu", "relu6",
    "rms_normalization", "selu", "separable_conv", "sigmoid", "silu", "soft_shrink", "softmax", "softplus",
    "softsign", "space_to_depth", "sparse_categorical_crossentropy", "sparse_plus", "sparse_sigmoid", "sparsemax",
    "squareplus", "swish", "tanh_shrink", "threshold", "unfold"]
