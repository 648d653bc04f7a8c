"""The jax forwards of ``keras.ops.nn``: pure functions of arrays, static parameters as
keywords (``keras_op.jax_forward`` records each as one op and differentiates it with
``jax.vjp``). They compute what Keras 3's JAX backend computes, so results agree with it to
the bit where the formulas do."""
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, nn as jnn

from minikeras.backend import epsilon
from minikeras.ops.activation_forwards import hard_shrink, soft_shrink, sparsemax, tanh_shrink, threshold  # noqa: F401
from minikeras.ops.ctc import ctc_loss_forward as ctc_loss  # noqa: F401 - keras.ops.nn.ctc_loss's forward
from minikeras.xla_cpu import depthwise


def spatial(value, rank, what):
    """An int or a sequence as a tuple of ``rank`` ints."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * rank
    value = tuple(int(v) for v in value)
    if len(value) != rank:
        raise ValueError(f"The `{what}` argument must be an int or a tuple of {rank} ints. Received: {what}={value}")
    return value


def pair(value):
    return (int(value),) * 2 if isinstance(value, (int, np.integer)) else tuple(int(v) for v in value)


def squareplus(x, *, b):
    return jnn.squareplus(x, b=b)


def leaky_relu(x, *, negative_slope):
    return jnn.leaky_relu(x, negative_slope=negative_slope)


def elu(x, *, alpha):
    return jnn.elu(x, alpha=alpha)


def celu(x, *, alpha):
    return jnn.celu(x, alpha=alpha)


def gelu(x, *, approximate):
    return jnn.gelu(x, approximate)


def glu(x, *, axis):
    return jnn.glu(x, axis=axis)


def over_axes(x, *, normalizer, axis):
    """``normalizer(x, axis=-1)`` over one axis, or over several (flattened together)."""
    fn = normalizer
    if not isinstance(axis, tuple):
        return fn(x, axis=axis)
    axis = tuple(a % x.ndim for a in axis)
    keep = [a for a in range(x.ndim) if a not in axis]
    moved = jnp.transpose(x, keep + list(axis))
    flat = fn(moved.reshape([x.shape[a] for a in keep] + [-1]), axis=-1).reshape(moved.shape)
    order = keep + list(axis)
    return jnp.transpose(flat, sorted(range(x.ndim), key=order.__getitem__))


def _window(values, data_format):
    return (1,) + values + (1,) if data_format == "channels_last" else (1, 1) + values


def pool(x, *, kind, pool_size, strides, padding, data_format):
    window, step = _window(pool_size, data_format), _window(strides, data_format)
    if kind == "max_pool":
        return lax.reduce_window(x, -jnp.inf, lax.max, window, step, padding.upper())
    total = lax.reduce_window(x, 0.0, lax.add, window, step, padding.upper())
    if padding == "valid":
        return total / math.prod(pool_size)
    ones = jnp.ones([n if w != 1 else 1 for n, w in zip(x.shape, window)], x.dtype)
    return total / lax.reduce_window(ones, 0.0, lax.add, window, step, padding.upper())


def _adaptive_axis(x, axis, out, kind):
    """Adaptive pooling along one axis: window i covers [floor(i n / out), ceil((i+1) n / out)).
    Windows have two sizes; both pools are taken in full and the windows gathered."""
    n = x.shape[axis]
    small = math.ceil(n / out)
    big = small + 1
    starts = np.floor(np.arange(out) * n / out).astype(np.int32)
    ends = np.ceil(np.arange(1, out + 1) * n / out).astype(np.int32)
    is_big = (ends - starts) == big
    gather = np.where(is_big, starts + n - small + 1, starts).astype(np.int32)
    pools = []
    for size in (small, big):
        window = [1] * x.ndim
        window[axis] = size
        if kind == "adaptive_max_pool":
            pools.append(lax.reduce_window(x, -jnp.inf, lax.max, window, [1] * x.ndim, "valid"))
        else:
            pools.append(lax.reduce_window(x, 0.0, lax.add, window, [1] * x.ndim, "valid") / size)
    return jnp.take(jnp.concatenate(pools, axis=axis), gather, axis=axis)


def adaptive_pool(x, *, kind, output_size, data_format):
    first = 1 if data_format == "channels_last" else 2
    for i, out in enumerate(output_size):
        x = _adaptive_axis(x, first + i, out, kind)
    return x


def _dimension_numbers(rank, data_format):
    n = rank + 2
    if data_format == "channels_last":
        spec = (0, n - 1) + tuple(range(1, n - 1))
    else:
        spec = (0, 1) + tuple(range(2, n))
    return lax.ConvDimensionNumbers(lhs_spec=spec, rhs_spec=(n - 1, n - 2) + tuple(range(n - 2)), out_spec=spec)


def conv(x, kernel, *, strides, padding, data_format, dilation):
    rank = x.ndim - 2
    channels = x.shape[-1] if data_format == "channels_last" else x.shape[1]
    x = x.astype(kernel.dtype)
    out = lax.conv_general_dilated(x, kernel, strides, padding.upper(), rhs_dilation=dilation,
                                   dimension_numbers=_dimension_numbers(rank, data_format),
                                   feature_group_count=channels // kernel.shape[-2])
    if out.size == 0 and x.size != 0:
        raise ValueError("The convolution operation resulted in an empty output. This can happen if the input is "
                         "too small for the given kernel size, strides, dilation rate, and padding mode. "
                         f"Received inputs.shape={x.shape}, kernel.shape={kernel.shape}")
    return out


def depthwise_conv(x, kernel, *, strides, padding, data_format, dilation):
    # xla_cpu.depthwise: fused shifted slices on the CPU (XLA's grouped convolution is an order of
    # magnitude slower there), the grouped convolution elsewhere; jax differentiates either
    channels_first = data_format != "channels_last"
    if channels_first:
        x = jnp.moveaxis(x, 1, -1)
    y = depthwise.depthwise_forward(x, kernel.astype(x.dtype), tuple(strides), padding.upper(), tuple(dilation))
    return jnp.moveaxis(y, -1, 1) if channels_first else y


def separable_conv(x, depthwise_kernel, pointwise_kernel, *, strides, padding, data_format, dilation):
    y = depthwise_conv(x, depthwise_kernel, strides=strides, padding=padding, data_format=data_format,
                       dilation=dilation)
    return conv(y, pointwise_kernel, strides=(1,) * len(strides), padding="valid", data_format=data_format,
                dilation=dilation)


def transpose_padding(kernel_size, stride, dilation, padding, output_padding):
    """Keras's transposed-convolution padding as jax's (left, right) for one spatial axis."""
    size = (kernel_size - 1) * dilation + 1
    if padding == "valid":
        extra = max(size, stride) - size if output_padding is None else output_padding
        return size - 1, size - 1 + extra
    total = stride + size - 2 if output_padding is None else size + size % 2 - 2 + output_padding
    left = min(total // 2 + total % 2, size - 1)
    return left, total - left


def conv_transpose(x, kernel, *, strides, pads, data_format, dilation):
    return lax.conv_transpose(x, kernel, strides, padding=list(pads), rhs_dilation=dilation,
                              dimension_numbers=_dimension_numbers(x.ndim - 2, data_format), transpose_kernel=True)


def one_hot(x, *, num_classes, axis, dtype):
    return jnn.one_hot(x, num_classes, axis=axis, dtype=dtype)


def multi_hot(x, *, num_classes, axis, dtype):
    return jnp.max(jnn.one_hot(x.astype(jnp.int32), num_classes, axis=axis, dtype=dtype),
                   axis=1 if x.ndim > 1 else 0)


def binary_crossentropy(target, output, *, from_logits):
    if from_logits:
        return -target * jnn.log_sigmoid(output) - (1.0 - target) * jnn.log_sigmoid(-output)
    output = jnp.clip(output, epsilon(), 1.0 - epsilon())
    return -(target * jnp.log(output) + (1.0 - target) * jnp.log(1.0 - output))


def _log_probabilities(output, from_logits, axis):
    if from_logits:
        return jnn.log_softmax(output, axis=axis)
    output = output / jnp.sum(output, axis, keepdims=True)
    return jnp.log(jnp.clip(output, epsilon(), 1.0 - epsilon()))


def categorical_crossentropy(target, output, *, from_logits, axis):
    return -jnp.sum(target * _log_probabilities(output, from_logits, axis), axis=axis)


def sparse_categorical_crossentropy(target, output, *, from_logits, axis):
    target = target.astype(jnp.int32)
    if target.ndim == output.ndim and target.shape[-1] == 1:
        target = jnp.squeeze(target, axis=-1)
    log_prob = _log_probabilities(output, from_logits, axis)
    return -jnp.sum(jnn.one_hot(target, output.shape[axis], axis=axis) * log_prob, axis=axis)


def ctc_greedy_decode(inputs, sequence_lengths, *, merge_repeated, mask_index):
    inputs = inputs.astype(jnp.result_type(inputs.dtype, jnp.float32))
    batch, max_time, classes = inputs.shape
    if mask_index is None:
        mask_index = classes - 1
    indices = jnp.argmax(inputs, axis=-1)
    scores = jnp.max(inputs, axis=-1)
    beyond = jnp.arange(max_time)[None, :] >= sequence_lengths.astype(jnp.int32)[:, None]
    indices = jnp.where(beyond, mask_index, indices)
    scores = jnp.where(beyond, 0.0, scores)
    if merge_repeated:
        repeated = jnp.pad(indices[:, 1:] == indices[:, :-1], ((0, 0), (1, 0)))
        indices = jnp.where(repeated, mask_index, indices)
    blank = indices == mask_index
    indices = jnp.where(blank, -1, indices)
    order = jnp.argsort(jnp.where(blank, max_time, jnp.arange(max_time)[None, :]), axis=-1)
    indices = jnp.take_along_axis(indices, order, axis=-1)
    return indices[None], -jnp.sum(scores, axis=1)[:, None]


def _merge_log_scores(inverse, scores):
    """Scores of paths that became equal, added in probability space."""
    top = jnp.max(scores)
    total = jnp.zeros_like(scores).at[inverse].add(jnp.exp(scores - top))
    return jnp.log(total) + top


def _unique_paths(paths, size):
    paths, inverse = jnp.unique(paths, return_inverse=True, size=size, axis=0, fill_value=-1)
    return paths, inverse.reshape(-1)


def ctc_beam_search_decode(inputs, sequence_lengths, *, beam_width, top_paths, mask_index):
    """Prefix beam search in log space. Each beam is kept twice: ending in a label (``emit``)
    and ending in a blank (``blank``); a repeated label only extends an emitting beam after a
    blank. Classes are flipped first so that ties break as TensorFlow's decoder does."""
    inputs = inputs.astype(jnp.result_type(inputs.dtype, jnp.float32))
    batch, max_time, classes = inputs.shape
    if mask_index is None:
        mask_index = classes - 1
    logp = jnp.flip(jnn.log_softmax(inputs), axis=2)
    blank = classes - mask_index - 1
    beyond = jnp.arange(max_time)[None, :] >= sequence_lengths.astype(jnp.int32)[:, None]
    n_first = min(classes, beam_width)
    width = 2 * beam_width
    first = jnp.argsort(logp[:, 0], axis=1)[:, -n_first:]
    paths = jnp.full((batch, width, max_time), -1, jnp.int32)
    paths = paths.at[:, :n_first, 0].set(jnp.where(first == blank, -1, first))
    scores = jnp.full((batch, width), -jnp.inf, logp.dtype).at[:, :n_first].set(
        jnp.take_along_axis(logp[:, 0], first, axis=1))
    masked = paths[:, :, 0] == -1
    extension = jnp.tile(jnp.arange(classes).at[blank].set(-1), width)
    rows = jnp.arange(width * classes)

    def extend(paths, scores, masked, step_logp):
        paths = jnp.repeat(paths, classes, axis=0)
        scores = jnp.repeat(scores, classes)
        was_masked = jnp.repeat(masked, classes)
        tail = jnp.argmax(paths == -1, axis=1)
        last = jnp.where(tail == 0, -1, paths[rows, tail - 1])
        label = jnp.where(~was_masked & (last == extension), -1, extension)
        paths = paths.at[rows, tail].set(label)
        return paths, scores + jnp.tile(step_logp, width), extension == -1

    def prune(paths, scores, masked):
        paths, inverse = _unique_paths(paths, width * classes)
        emit = _merge_log_scores(inverse, jnp.where(masked, -jnp.inf, scores))
        blanked = _merge_log_scores(inverse, jnp.where(masked, scores, -jnp.inf))
        best = jnp.argsort(jnp.logaddexp(emit, blanked))[-beam_width:]
        paths = jnp.tile(paths[best], (2, 1))
        scores = jnp.concatenate([emit[best], blanked[best]])
        masked = jnp.concatenate([jnp.zeros(beam_width, bool), jnp.ones(beam_width, bool)])
        return paths, scores, masked

    def step(state, x):
        step_logp, done = x
        new = prune(*extend(*state, step_logp))
        return jax.tree_util.tree_map(lambda a, b: jnp.where(done, a, b), state, new), None

    def one(paths, scores, masked, logp, beyond):
        (paths, scores, masked), _ = lax.scan(step, (paths, scores, masked), (logp[1:], beyond[1:]))
        paths, inverse = _unique_paths(paths, width * classes)
        scores = _merge_log_scores(inverse, scores)
        best = jnp.argsort(scores)[-top_paths:][::-1]
        return paths[best], scores[best]

    paths, scores = jax.vmap(one)(paths, scores, masked, logp, beyond)
    paths = jnp.where(paths == -1, -1, classes - paths - 1)
    return jnp.transpose(paths, (1, 0, 2)), scores


def psnr(x1, x2, max_val):
    max_val = jnp.asarray(max_val, x2.dtype)
    return 20 * jnp.log10(max_val) - 10 * jnp.log10(jnp.mean(jnp.square(x1 - x2)))


def moments(x, *, axes, keepdims):
    dtype = x.dtype
    half = dtype in (jnp.float16, jnp.bfloat16)
    if half:
        x = x.astype(jnp.float32)
    mean = jnp.mean(x, axes, keepdims=True)
    variance = jnp.var(x, axis=axes, keepdims=True)
    if not keepdims:
        mean, variance = jnp.squeeze(mean, axes), jnp.squeeze(variance, axes)
    if half:
        limit = jnp.finfo(jnp.float16).max
        mean = jnp.clip(mean, -limit, limit).astype(dtype)
        variance = jnp.clip(variance, -limit, limit).astype(dtype)
    return mean, variance


def batch_normalization(x, mean, variance, *rest, axis, has_offset, has_scale, epsilon):
    shape = [1] * x.ndim
    shape[axis] = mean.shape[0]
    rest = list(rest)
    offset = rest.pop(0).reshape(shape) if has_offset else None
    scale = rest.pop(0).reshape(shape) if has_scale else None
    inv = lax.rsqrt(variance.reshape(shape) + epsilon)
    if scale is not None:
        inv = inv * scale
    shift = -mean.reshape(shape) * inv
    if offset is not None:
        shift = shift + offset
    return x * inv + shift


def normalize(x, *, axis, order, epsilon):
    if x.ndim == 0:
        x = x[None]
    if order == 2:
        inv_norm = lax.rsqrt(jnp.sum(jnp.square(x), axis=axis, keepdims=True))
        return x * jnp.minimum(inv_norm, 1.0 / epsilon)
    norm = jnp.linalg.norm(x, ord=order, axis=axis, keepdims=True)
    return x / jnp.maximum(norm, epsilon)


def rms_normalization(x, *scale, axis, epsilon):
    dtype = x.dtype
    x = x.astype(jnp.result_type(dtype, jnp.float32))
    if x.ndim == 0:
        x = x[None]
    out = x * lax.rsqrt(jnp.mean(jnp.square(x), axis=axis, keepdims=True) + epsilon)
    if scale:
        out = out * scale[0].astype(x.dtype)
    return out.astype(dtype)


def layer_normalization(x, *params, axes, has_gamma, has_beta, rms_scaling, epsilon):
    dtype = x.dtype
    x = x.astype(jnp.result_type(dtype, jnp.float32))
    params = list(params)
    gamma = params.pop(0).astype(x.dtype) if has_gamma else None
    beta = params.pop(0).astype(x.dtype) if has_beta else None
    shape = [1] * x.ndim
    for a in axes:
        shape[a] = x.shape[a]

    def broadcast(v):
        if v is not None and v.ndim != x.ndim and list(axes) != [x.ndim - 1]:
            return v.reshape(shape)
        return v

    if rms_scaling:
        out = x * lax.rsqrt(jnp.var(x, axis=axes, keepdims=True) + epsilon)
        if gamma is not None:
            out = out * broadcast(gamma)
        return out.astype(dtype)
    mean = jnp.mean(x, axes, keepdims=True)
    variance = jnp.var(x, axis=axes, keepdims=True)
    inv = lax.rsqrt(variance + epsilon)
    if gamma is not None:
        inv = inv * broadcast(gamma)
    shift = -mean * inv
    if beta is not None:
        shift = shift + broadcast(beta)
    return (x * inv + shift).astype(dtype)


def _attention_core(query, key, value, bias, mask, is_causal, scale):
    logits_dtype = jnp.promote_types(query.dtype, jnp.float32)
    logits = jnp.einsum("BTNH,BSNH->BNTS", query, key, preferred_element_type=logits_dtype)
    logits = logits * jnp.array(scale, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + bias).astype(logits.dtype)
    if mask is not None or is_causal:
        keep = jnp.ones_like(logits, dtype=bool)
        if mask is not None:
            keep = jnp.logical_and(keep, mask)
        if is_causal:
            keep = jnp.logical_and(keep, jnp.tril(jnp.ones(logits.shape[2:], bool))[None, None])
        logits = jnp.where(keep, logits, jnp.asarray(-0.7 * jnp.finfo(logits.dtype).max, logits.dtype))
    probs = jnn.softmax(logits.astype(jnp.float32), axis=-1).astype(key.dtype)
    return jnp.einsum("BNTS,BSNH->BTNH", probs, value)


def dot_product_attention(query, key, value, *rest, has_bias, has_mask, scale, is_causal):
    rest = list(rest)
    bias = rest.pop(0) if has_bias else None
    mask = rest.pop(0) if has_mask else None
    batch, time, heads, depth = query.shape
    kv_heads = key.shape[2]
    groups = heads // kv_heads
    scale = 1.0 / jnp.sqrt(key.shape[-1]) if scale is None else scale
    grouped_query = query.reshape(batch, time, kv_heads, groups, depth)

    def grouped(t, what):
        if t is None:
            return None
        while t.ndim < 4:
            t = jnp.expand_dims(t, 2 if t.ndim == 3 and t.shape[1] == heads else 1)
        tb, tn, tt, ts = t.shape
        if tn == 1:
            return jnp.broadcast_to(t[:, :, None], (tb, 1, groups, tt, ts))
        if tn != heads:
            raise ValueError(f"Expected `{what}` to have shape (B, 1, T, S) or (B, N, T, S) with N={heads} but got "
                             f"{t.shape}.")
        return t.reshape(tb, kv_heads, groups, tt, ts)

    per_group = jax.vmap(_attention_core, in_axes=(3, None, None, 2, 2, None, None), out_axes=3)
    out = per_group(grouped_query, key, value, grouped(bias, "bias"), grouped(mask, "mask"), is_causal, scale)
    return out.reshape(query.shape)


def polar(abs_, angle):
    return lax.complex(abs_ * jnp.cos(angle), abs_ * jnp.sin(angle))


def unfold(x, *, kernel, dilation, padding, stride):
    n = x.shape[0]
    if any(padding):
        x = jnp.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    patches = lax.conv_general_dilated_patches(x, filter_shape=kernel, window_strides=stride, padding="VALID",
                                               rhs_dilation=dilation, dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return patches.reshape(n, patches.shape[1], -1)


def fold(x, *, output_size, kernel, dilation, padding, stride):
    """col2im: a transposed convolution with the identity kernel scatters each block back."""
    (oh, ow), (kh, kw), (dh, dw), (ph, pw), (sh, sw) = output_size, kernel, dilation, padding, stride
    n, ckk, _ = x.shape
    c = ckk // (kh * kw)
    nh = (oh + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    nw = (ow + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    x = x.reshape(n, ckk, nh, nw)
    identity = jnp.flip(jnp.eye(ckk, dtype=x.dtype).reshape(ckk, c, kh, kw).transpose(2, 3, 0, 1), axis=(0, 1))
    out = lax.conv_transpose(x, identity, strides=(sh, sw), padding="VALID", rhs_dilation=(dh, dw),
                             dimension_numbers=("NCHW", "HWIO", "NCHW"))
    return out[:, :, ph:oh + ph, pw:ow + pw]


def depth_to_space(x, *, block_size, data_format):
    b = block_size
    if data_format == "channels_last":
        n, h, w, c = x.shape
        x = x.reshape(n, h, w, b, b, c // b ** 2).transpose(0, 1, 3, 2, 4, 5)
        return x.reshape(n, h * b, w * b, c // b ** 2)
    n, c, h, w = x.shape
    x = x.reshape(n, c // b ** 2, b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return x.reshape(n, c // b ** 2, h * b, w * b)


def space_to_depth(x, *, block_size, data_format):
    b = block_size
    if data_format == "channels_last":
        n, h, w, c = x.shape
        x = x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5)
        return x.reshape(n, h // b, w // b, c * b * b)
    n, c, h, w = x.shape
    x = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 1, 3, 5, 2, 4)
    return x.reshape(n, c * b * b, h // b, w // b)
