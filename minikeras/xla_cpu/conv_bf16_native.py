"""bfloat16 conv2d and its two gradients on AVX512_BF16 (``conv_bf16_native.cc``, via XLA's FFI).

    if supported(kind, x_shape, w_shape, strides, pads, dilations, dtype) and available():
        y = forward(x, w, pads)                  # = conv(x, w) summed in float32, rounded to bfloat16
        y = forward_bias_relu(x, w, b, pads)     # = max(conv(x, w) + b, 0) in float32, rounded once
        dx = input_grad(dy, w, x_shape, pads)    # = the transpose of conv(., w) applied to dy, likewise
        dw = filter_grad(x, dy, w_shape, pads)   # = the transpose of conv(x, .) applied to dy, likewise
        dw, db = filter_grad_and_bias(x, dy, w_shape, pads)  # and db = dy summed over all but its last axis

Each result is what the float32 convolution of the same (bfloat16) values gives, rounded to
bfloat16 once: only the order of the float32 sums differs. The kernels multiply pairs of
bfloat16 values (``vdpbf16ps``): the forward pass pairs input channels (the filter's are paired
here, a small copy XLA makes; an odd count gets one zero channel, x's and the filter's, so that a
first layer on 1 or 3 channels runs here too), which also computes the input gradient (dy
convolved with the flipped filter), and the filter gradient pairs columns of x and dy (the kernel pairs them per
image, as it pads). A CPU without AVX512_BF16 cannot run them: ``available()`` is False
there and ``minikeras.xla_cpu.conv`` widens bfloat16 convolutions to its float32 kernels.
"""
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.xla_cpu import low_precision, tuning
from minikeras.xla_cpu.native_build import register_targets, usable_cpus, why_unavailable

_SOURCE = "conv_bf16_native.cc"
_FORWARD = "minikeras_conv2d_bf16_forward"
_FILTER_GRAD = "minikeras_conv2d_bf16_filter_grad"
_FORWARD_BIAS_RELU = "minikeras_conv2d_bf16_forward_bias_relu"
_FILTER_GRAD_BIAS = "minikeras_conv2d_bf16_filter_grad_bias"
_ONE_CHANNEL_MAX_TAPS = 12  # the kernel's kFilterTapsMax
_SYMBOLS = {_FORWARD: "MinikerasConv2dBf16Forward", _FILTER_GRAD: "MinikerasConv2dBf16FilterGrad",
            _FORWARD_BIAS_RELU: "MinikerasConv2dBf16ForwardBiasRelu",
            _FILTER_GRAD_BIAS: "MinikerasConv2dBf16FilterGradBias"}


@functools.lru_cache(maxsize=None)
def available():
    """True when this CPU has AVX512_BF16 and the kernels are built and registered with XLA:CPU."""
    return "avx512_bf16" in low_precision.cpu_flags() and register_targets(_SOURCE, _SYMBOLS)


def unavailable_reason():
    """Why ``available()`` is False ('' when it is True or was not asked)."""
    if "avx512_bf16" not in low_precision.cpu_flags():
        return "the CPU lacks AVX512_BF16 (the 'avx512_bf16' flag of /proc/cpuinfo)"
    return why_unavailable(_SOURCE)


def supported(kind, x_shape, w_shape, strides, pads, dilations, dtype):
    """Whether the kernel of ``kind`` ('forward', 'input_grad' or 'filter_grad') computes this
    bfloat16 convolution: stride 1, undilated, concrete shapes, pads of at most the filter's size
    less one, the vectorized channels (output channels for the forward pass and the filter
    gradient, input channels for the input gradient) a multiple of 16, and the channels summed
    over in pairs by the input gradient (output channels) even, the filter gradient's input
    channels many, or one (a filter of at most 12 taps, all summed in registers); the forward pass takes an odd
    number of input channels (one zero channel is added; faster than the float32 'taps' loop
    for 1 and 3 channels where measured: benchmarks/LOG.md)."""
    kh, kw, c, o = w_shape
    (top, bottom), (left, right) = pads
    channels = {"forward": o % 16 == 0, "input_grad": c % 16 == 0 and o % 2 == 0,
                "filter_grad": o % 16 == 0 and (c >= tuning.BF16_CONV_NATIVE_FILTER_MIN_CHANNELS
                                                or (c == 1 and kh * kw <= _ONE_CHANNEL_MAX_TAPS))}[kind]
    return (jnp.dtype(dtype) == low_precision.BFLOAT16 and tuple(strides) == (1, 1) and tuple(dilations) == (1, 1)
            and len(x_shape) == 4 and all(type(d) is int for d in (*x_shape, *w_shape)) and channels
            and 0 <= top < kh and 0 <= bottom < kh and 0 <= left < kw and 0 <= right < kw
            and x_shape[1] + top + bottom >= kh and x_shape[2] + left + right >= kw)


def _threads(flops):
    return 1 if flops < tuning.CONV_NATIVE_THREAD_FLOPS else usable_cpus()


def forward(x, w, pads):
    """y (NHWC, bfloat16) of the stride-1 convolution of x (NHWC) with w (HWIO) and ``pads``."""
    return _forward_call(_FORWARD, x, w, (), pads)


def forward_bias_relu(x, w, b, pads):
    """``max(conv(x, w) + b, 0)`` (b: one bfloat16 value per output channel) with the bias and the
    ReLU applied to the float32 sums in registers, then rounded to bfloat16 once (Conv2D's
    ``activation="relu"``)."""
    return _forward_call(_FORWARD_BIAS_RELU, x, w, (b,), pads)


def _forward_call(target, x, w, bias, pads):
    if w.shape[2] % 2:  # the channels go in pairs: a zero channel adds nothing to the sums
        x = jnp.pad(x, ((0, 0), (0, 0), (0, 0), (0, 1)))
        w = jnp.pad(w, ((0, 0), (0, 0), (0, 1), (0, 0)))
    kh, kw, c, o = w.shape
    (top, bottom), (left, right) = pads
    paired = w.reshape(kh, kw, c // 2, 2, o).transpose(0, 1, 2, 4, 3)  # input channels in pairs
    out_shape = (x.shape[0], x.shape[1] + top + bottom - kh + 1, x.shape[2] + left + right - kw + 1, o)
    call = jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(out_shape, x.dtype), vmap_method="sequential")
    flops = 2 * math.prod(out_shape) * kh * kw * c
    return call(x, paired, *bias, pad_top=np.int64(top), pad_left=np.int64(left), threads=np.int64(_threads(flops)))


def input_grad(dy, w, input_shape, pads):
    """dx (``input_shape``, NHWC) of the stride-1 convolution with filter w (HWIO) and ``pads``, given dy:
    the forward pass of dy with the flipped filter (spatially reversed, I and O swapped)."""
    kh, kw = w.shape[:2]
    new_pads = tuple((k - 1 - lo, n - m + lo)
                     for k, (lo, _), n, m in zip((kh, kw), pads, input_shape[1:3], dy.shape[1:3]))
    return forward(dy, jnp.flip(w, (0, 1)).transpose(0, 1, 3, 2), new_pads)


def filter_grad(x, dy, filter_shape, pads):
    """dw (``filter_shape``, HWIO, bfloat16) of the stride-1 convolution of x (NHWC) with ``pads``, given dy."""
    kh, kw, c, o = filter_shape
    n, ho, wo = dy.shape[:3]
    (top, _), (left, _) = pads
    call = jax.ffi.ffi_call(_FILTER_GRAD, jax.ShapeDtypeStruct(tuple(filter_shape), x.dtype),
                            vmap_method="sequential")
    flops = 2 * n * ho * wo * kh * kw * c * o
    return call(x, dy, pad_top=np.int64(top), pad_left=np.int64(left), threads=np.int64(_threads(flops)))


def filter_grad_and_bias(x, dy, filter_shape, pads):
    """``(filter_grad(x, dy, filter_shape, pads), db)`` with db = dy summed over its images and
    pixels in float32, rounded to bfloat16 once (a Conv2D's bias gradient): the kernel sums dy
    while it reads it for the filter gradient, where XLA read it again for the sum."""
    kh, kw, c, o = filter_shape
    n, ho, wo = dy.shape[:3]
    (top, _), (left, _) = pads
    outs = (jax.ShapeDtypeStruct(tuple(filter_shape), x.dtype), jax.ShapeDtypeStruct((o,), x.dtype))
    call = jax.ffi.ffi_call(_FILTER_GRAD_BIAS, outs, vmap_method="sequential")
    flops = 2 * n * ho * wo * kh * kw * c * o
    dw, db = call(x, dy, pad_top=np.int64(top), pad_left=np.int64(left), threads=np.int64(_threads(flops)))
    return dw, db
