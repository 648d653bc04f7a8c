"""conv2d and its input and filter gradients as native CPU kernels (``conv_native.cc``, via XLA's FFI).

    if supported(kind, x_shape, w_shape, strides, pads, dilations, dtype) and available():
        y = forward(x, w, pads)                    # = lax.conv_general_dilated(x, w, (1, 1), pads)
        y = forward(x, w, pads, strides)           # = lax.conv_general_dilated(x, w, strides, pads)
        y = forward_bias_relu(x, w, b, pads)       # = max(forward(x, w, pads) + b, 0), in one pass
        dw = filter_grad(x, dy, w_shape, pads)     # = the transpose of conv(x, .) applied to dy
        dx = input_grad(dy, w, x_shape, pads)      # = the transpose of conv(., w) applied to dy

XLA:CPU runs the two gradients through Eigen well below its GEMM speed; the kernels in
``conv_native.cc`` run them closer to it (``benchmarks/conv.py --methods``). They cover
undilated float32 convolutions whose padding is at most the filter's size less one on each side
and whose vectorized channels (input channels for the gradients, output channels for the forward
pass) are a multiple of 16: every 3x3 or 5x5 'SAME' or 'VALID' layer past the first of a typical
CNN. The gradients take stride 1 only; the forward pass any strides (the windows step over the
padded input in the kernel's loads; XLA's Eigen convolution runs a ResNet stem's 7x7 stride-2
layer well below it: ``benchmarks/strided_forward.py``). ``available()`` builds them on first
use (``native_build``); where it cannot, ``minikeras.xla_cpu.conv`` uses its XLA formulations,
with the same results up to float32 rounding (the sums run in another order). The results do not
depend on how the work was shared among threads: each image's output is computed whole, and the
filter gradient adds fixed parts of the batch in a fixed order.

The three calls are plain jax functions on the CPU backend but have no jax derivative rules of
their own: ``minikeras.xla_cpu.conv`` wraps them in ``jax.custom_vjp`` with the other
convolutions as rules. Under ``vmap`` they run once per batch element.
"""
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.xla_cpu import tuning
from minikeras.xla_cpu.low_precision import cpu_flags
from minikeras.xla_cpu.native_build import register_targets, usable_cpus, why_unavailable

_SOURCE = "conv_native.cc"
_FORWARD = "minikeras_conv2d_forward"
_FILTER_GRAD = "minikeras_conv2d_filter_grad"
_INPUT_GRAD = "minikeras_conv2d_input_grad"
_FORWARD_BIAS_RELU = "minikeras_conv2d_forward_bias_relu"
_SYMBOLS = {_FORWARD: "MinikerasConv2dForward", _FILTER_GRAD: "MinikerasConv2dFilterGrad",
            _INPUT_GRAD: "MinikerasConv2dInputGrad", _FORWARD_BIAS_RELU: "MinikerasConv2dForwardBiasRelu"}


@functools.lru_cache(maxsize=None)
def available():
    """True when the kernels are built for this machine and registered with XLA:CPU."""
    return register_targets(_SOURCE, _SYMBOLS)


def unavailable_reason():
    """Why ``available()`` is False ('' when it is True or was not asked)."""
    return why_unavailable(_SOURCE)


def few_channel_taps():
    """conv_native.cc's kFewTaps: the most filter columns times input channels whose filter gradient
    is vectorized over output channels (9 where the kernels are built with AVX-512, whose registers
    hold an RGB image's 3x3 taps; else 6)."""
    return 9 if "avx512f" in cpu_flags() else 6


def supported(kind, x_shape, w_shape, strides, pads, dilations, dtype):
    """Whether the native kernel of ``kind`` ('forward', 'input_grad' or 'filter_grad') computes
    this convolution (shapes must be concrete). ``pads`` is explicit: ((top, bottom), (left, right)).

    The gradients are vectorized over input channels, the forward pass over output channels:
    that count must be a multiple of 16. The filter gradient of a layer with few input channels
    (``kw * C <= few_channel_taps()``, such as an MNIST CNN's first) is vectorized over output
    channels instead. The gradients take stride 1 only, the forward pass any strides
    (``tuning.CONV_NATIVE_STRIDED_FORWARD``).
    """
    kh, kw, c, o = w_shape
    (top, bottom), (left, right) = pads
    if tuple(strides) != (1, 1) and (kind != "forward" or not tuning.CONV_NATIVE_STRIDED_FORWARD or min(strides) < 1):
        return False
    if kind == "forward":
        vectors = o % 16 == 0
    elif kind == "filter_grad":  # over input channels, or over output channels where there are few
        vectors = c % 16 == 0 or (o % 16 == 0 and kw * c <= few_channel_taps())
    else:
        vectors = c % 16 == 0
    return (jnp.dtype(dtype) == jnp.float32 and tuple(dilations) == (1, 1)
            and all(type(d) is int for d in (*x_shape, *w_shape)) and len(x_shape) == 4 and vectors
            and 0 <= top < kh and 0 <= bottom < kh and 0 <= left < kw and 0 <= right < kw
            and x_shape[1] + top + bottom >= kh and x_shape[2] + left + right >= kw)


def _threads(x_shape, w_shape, out_hw):
    """All the CPUs this process may use, or 1 for a convolution too small to pay for threads."""
    flops = 2 * x_shape[0] * out_hw[0] * out_hw[1] * math.prod(w_shape)
    return 1 if flops < tuning.CONV_NATIVE_THREAD_FLOPS else usable_cpus()


def forward(x, w, pads, strides=(1, 1)):
    """y (NHWC) of the convolution of x (NHWC) with w (HWIO), ``pads`` and ``strides``."""
    return _forward_call(_FORWARD, (x, w), w.shape, pads, strides)


def forward_bias_relu(x, w, b, pads, strides=(1, 1)):
    """``max(forward(x, w, pads, strides) + b, 0)`` (b: one value per output channel), bit for bit,
    with the bias and the ReLU applied to each output tile while it is in registers: no second
    pass over the output (a Conv2D layer's ``activation="relu"``)."""
    return _forward_call(_FORWARD_BIAS_RELU, (x, w, b), w.shape, pads, strides)


def _forward_call(target, operands, w_shape, pads, strides):
    """A forward handler's call on ``operands`` (x first) for a filter of ``w_shape``."""
    x = operands[0]
    (top, bottom), (left, right) = pads
    sh, sw = strides
    out_shape = (x.shape[0], (x.shape[1] + top + bottom - w_shape[0]) // sh + 1,
                 (x.shape[2] + left + right - w_shape[1]) // sw + 1, w_shape[3])
    call = jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(out_shape, x.dtype), vmap_method="sequential")
    return call(*operands, pad_top=np.int64(top), pad_left=np.int64(left), stride_h=np.int64(sh),
                stride_w=np.int64(sw), threads=np.int64(_threads(x.shape, w_shape, out_shape[1:3])))


def filter_grad(x, dy, filter_shape, pads):
    """dw (``filter_shape``, HWIO) of the stride-1 convolution of x (NHWC) with ``pads``, given dy."""
    (top, _), (left, _) = pads
    call = jax.ffi.ffi_call(_FILTER_GRAD, jax.ShapeDtypeStruct(tuple(filter_shape), x.dtype),
                            vmap_method="sequential")
    return call(x, dy, pad_top=np.int64(top), pad_left=np.int64(left),
                threads=np.int64(_threads(x.shape, filter_shape, dy.shape[1:3])))


def input_grad(dy, w, input_shape, pads):
    """dx (``input_shape``, NHWC) of the stride-1 convolution with filter w (HWIO) and ``pads``, given dy."""
    (top, _), (left, _) = pads
    call = jax.ffi.ffi_call(_INPUT_GRAD, jax.ShapeDtypeStruct(tuple(input_shape), dy.dtype),
                            vmap_method="sequential")
    return call(dy, w, pad_top=np.int64(top), pad_left=np.int64(left),
                threads=np.int64(_threads(input_shape, w.shape, dy.shape[1:3])))
