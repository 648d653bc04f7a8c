"""2-D convolution and its two VJPs, formulated for XLA:CPU's fast paths.

    conv2d_forward(x, w, strides, padding, dilations, *, method, eigen)                    -> y
    conv2d_input_grad(dy, w, input_shape, strides, padding, dilations, *, method, eigen)   -> dx
    conv2d_filter_grad(x, dy, filter_shape, strides, padding, dilations, *, method, eigen) -> dw

x and y are NHWC, w is HWIO; ``strides`` and ``dilations`` are 2-tuples (ints are accepted);
``padding`` is 'SAME', 'VALID' (TensorFlow semantics: SAME gives out = ceil(in / stride) with the
odd pad at the bottom/right) or explicit ((top, bottom), (left, right)). Each function is exactly
the math of ``lax.conv_general_dilated`` (resp. its transpose in x / in w), so any of the three
can serve as another's gradient rule, and each is differentiable jax code; all shape logic is
static, so they trace under ``jax.jit``.

On the CPU backend (checked at trace time) each picks a formulation by shape and by ``eigen``
(``formulation`` says which); elsewhere it is the plain ``lax.conv_general_dilated`` and the
transposes jax derives from it. ``method=`` forces one of ``FORWARD_METHODS`` /
``INPUT_GRAD_METHODS`` / ``FILTER_GRAD_METHODS`` (benchmarks and tests use it).

First of all, a 3x3 stride-1 float32 convolution with enough channels (``winograd_applies``: 32
on the native Winograd kernel, 128 in jax ops; ResNet-20's and ResNet50's 3x3 layers but
the 16-channel ones) runs its forward pass and its input gradient as Winograd's F(2x2, 3x3)
('winograd', ``xla_cpu.winograd``: 2.25x fewer multiply-adds, within float32 rounding of the
direct convolution but not on its bits), and so does its filter gradient (on the native kernel up
to ``tuning.WINOGRAD_NATIVE_FILTER_GRAD_MAX_CHANNELS``, in jax ops where the native direct
gradient does not take the filter); the derivatives of each are the other two convolutions.
Then stride-1 float32 convolutions run on minikeras' own kernels ('native',
``conv_native``), built for the machine on first use: the input and filter gradients where the
input has a multiple of 16 channels, the forward pass where the output has (and its rows are at
least ``tuning.CONV_NATIVE_FORWARD_MIN_WIDTH`` wide, or ``CONV_NATIVE_NARROW_FORWARD_MIN_WIDTH``
with at most ``CONV_NATIVE_NARROW_FORWARD_MAX_CHANNELS`` output channels), and the filter
gradient of a layer with few input channels where the output has (an MNIST CNN's first layer:
faster than 'chunked', and fewer kernels for XLA to compile). They run closer to GEMM speed than
Eigen does on these shapes (``benchmarks/conv.py --methods``). They are differentiable in reverse
mode (``jax.custom_vjp``, with the other convolutions as rules), not in forward mode. Where they
cannot be built (no C++ compiler; ``MINIKERAS_NATIVE=0``) or do not apply, the rest holds. A
strided float32 1x1 convolution without padding (a ResNet's projection shortcut) is the stride-1
convolution of every stride-th pixel, so it runs as one, and its gradients as the stride-1 ones (the input gradient
spread back with zeros between): a stride-1 formulation beats any strided one. The gradients of
other strided convolutions run as one stride-1 gradient per input phase (rows ``ra::sh``,
columns ``rb::sw`` of the padded input against the filter taps ``w[ra::sh, rb::sw]``).
A stride-1 1x1 convolution without padding (a bottleneck's) is one matrix product: in minikeras'
programs its forward pass is XLA's own convolution (Eigen's GEMM) and its filter gradient
``x^T @ dy`` runs on ``matmul_native`` ('matmul'), both faster than the native convolution
kernels (``tuning.CONV_POINTWISE_AS_MATMUL``). The native gradient kernels stream the whole
filter through the cache, so they are kept to filters of at most
``tuning.CONV_NATIVE_GRAD_MAX_FILTER_BYTES`` (ResNet50's last stages take Eigen's formulations).

Which formulation is fastest depends on which library XLA:CPU gives the convolution to, which
``eigen`` says: True for XLA's own Eigen code, False for YNNPACK. By default it is the context
value ``minikeras.xla_cpu.compiler.convolutions_on_eigen``, True while ``xla_cpu.jit`` traces
one of the programs minikeras compiles (mk.function, fit), whose convolutions run on Eigen.
There ``formulation`` picks (the thresholds, and the command that measured each, are in
``xla_cpu.tuning``; the figures in benchmarks/LOG.md):
  * the plain convolution ('xla') for every forward pass not done as 'taps' (below): Eigen runs
    it on every core, close to GEMM speed, where a plain jax.jit program gets YNNPACK's one core;
  * for the filter gradient of layers with more than 4 input channels, the plain convolution's
    transpose summed over batch chunks of ``tuning.CONV_SPLIT_BYTES`` of x and dy ('split'; 'xla'
    when the batch is that small). Over the whole batch, Eigen's filter gradient is one GEMM with
    a tiny output and a huge contraction, which runs far below GEMM speed; per chunk it runs
    faster on layers with >= 16x16 outputs;
  * with 1-4 input channels and up to 5x5 taps, a convolution is a handful of multiply-adds per
    output, which XLA fuses into one elementwise loop faster than any convolution call
    ('taps'); likewise the input gradient of such a layer, and any strided input gradient, is a
    small matmul plus one fused scatter-add loop ('col2im'), and the filter gradient of such a
    layer is an im2col GEMM built per batch chunk ('chunked');
  * the stride-1 input gradient as a correlation of dy with the flipped filter ('padded').

Elsewhere -- eager ops (one small program per op), and jax code that calls these functions under
its own ``jax.jit`` -- convolutions run on YNNPACK, which is fast on other shapes:
  * a convolution with all-zero padding (VALID) runs several times slower than the same
    convolution with any padding, so it gets one extra zero row at the bottom and the extra
    output row is sliced off (the slice fuses into the consumer). Zero-padding a SAME input
    explicitly and convolving it that way ('prepadded') is faster again with a free second core
    (YNNPACK runs that path on both cores, the SAME-padded one on one) but costs more CPU time,
    so it is the choice only for big layers (``tuning.CONV_PREPAD_CHANNELS``,
    ``tuning.CONV_PREPAD_FLOPS``);
  * 'taps' and 'col2im' as above, for 3x3 kernels;
  * the strided input gradient jax derives is an lhs-dilated convolution, which misses the fast
    path; split by output phase it is s*s stride-1 convolutions that hit it;
  * the filter gradient jax derives is a convolution with a 24x24 "kernel" and a 3x3 output,
    which YNNPACK runs at a small fraction of GEMM speed. As im2col patches^T @ dy it is one
    GEMM; built per batch chunk ('chunked') the patches stay in cache and the program's
    temporaries stay small (glibc hands XLA large buffers as fresh pages on every call, and the
    page faults cost more than the copies).
"""
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from minikeras.xla_cpu import conv_bf16_native, conv_native, low_precision, matmul_native, tuning, winograd
from minikeras.xla_cpu.compiler import convolutions_on_eigen
from minikeras.xla_cpu.materialize import materialize

DIMENSION_NUMBERS = ("NHWC", "HWIO", "NHWC")

FORWARD_METHODS = ("xla", "padded", "prepadded", "taps", "im2col", "native", "winograd")
INPUT_GRAD_METHODS = ("xla", "padded", "prepadded", "col2im", "native", "winograd")
FILTER_GRAD_METHODS = ("xla", "split", "im2col", "taps", "chunked", "native", "matmul", "winograd")



# -- shapes and padding -----------------------------------------------------------------------
def _pair(v):
    return (int(v), int(v)) if isinstance(v, int) else (int(v[0]), int(v[1]))


def _effective(k, d):
    return (k - 1) * d + 1


def explicit_padding(padding, in_hw, filter_hw, strides=(1, 1), dilations=(1, 1)):
    """((top, bottom), (left, right)) for 'SAME' / 'VALID' / explicit ``padding`` (TF semantics)."""
    if not isinstance(padding, str):
        (t, b), (l, r) = padding
        return (int(t), int(b)), (int(l), int(r))
    mode = padding.upper()
    if mode == "VALID":
        return (0, 0), (0, 0)
    if mode != "SAME":
        raise ValueError(f"padding must be 'SAME', 'VALID' or explicit pairs, got {padding!r}")
    pads = []
    for n, k, s, d in zip(in_hw, filter_hw, _pair(strides), _pair(dilations)):
        total = max((-(-n // s) - 1) * s + _effective(k, d) - n, 0)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


def output_hw(in_hw, filter_hw, strides, pads, dilations):
    """Output (height, width) of a convolution with explicit ``pads``."""
    return tuple((n + lo + hi - _effective(k, d)) // s + 1
                 for n, k, s, (lo, hi), d in zip(in_hw, filter_hw, strides, pads, dilations))


def _normalize(x_shape, w_shape, strides, padding, dilations):
    strides, dilations = _pair(strides), _pair(dilations)
    pads = explicit_padding(padding, x_shape[1:3], w_shape[:2], strides, dilations)
    return strides, pads, dilations


def _on_cpu():
    return jax.default_backend() == "cpu"


def _negative(pads):
    return any(p < 0 for pair in pads for p in pair)


# -- which formulation ------------------------------------------------------------------------
def bf16_native(kind, x_shape, w_shape, strides=(1, 1), padding="VALID", dilations=(1, 1), dtype=jnp.bfloat16):
    """Whether the convolution of ``kind`` ('forward', 'input_grad', 'filter_grad') of bfloat16
    arrays runs on ``conv_bf16_native`` here (a CPU with AVX512_BF16 of one of
    ``tuning.BF16_CONV_NATIVE_VENDORS``, ``tuning.BF16_CONV_NATIVE``, shapes it takes); if not, a
    bfloat16 convolution on the CPU is widened to the float32 ones."""
    if not (tuning.BF16_CONV_NATIVE and jnp.dtype(dtype) == low_precision.BFLOAT16 and _on_cpu()
            and low_precision.cpu_vendor() in tuning.BF16_CONV_NATIVE_VENDORS
            and all(type(d) is int for d in (*x_shape, *w_shape))):
        return False
    strides, pads, dilations = _normalize(x_shape, w_shape, strides, padding, dilations)
    return (conv_bf16_native.supported(kind, x_shape, w_shape, strides, pads, dilations, dtype)
            and conv_bf16_native.available())


def formulation(kind, x_shape, w_shape, strides=(1, 1), padding="VALID", dilations=(1, 1), eigen=None,
                dtype=jnp.float32):
    """The method ``conv2d_<kind>`` uses by default for these shapes on the current backend.

    ``kind`` is 'forward', 'input_grad' or 'filter_grad'; ``x_shape`` is the convolution's input
    shape and ``w_shape`` its filter's, for every kind. Off CPU, or for a symbolic size (a None
    dimension of ``mk.function``'s input signature), the answer is always 'xla'.
    ``eigen``: whether XLA:CPU runs the program's convolutions on Eigen rather than YNNPACK;
    None (the default) reads ``convolutions_on_eigen``, True while ``xla_cpu.jit`` traces.
    ``dtype``: the arrays' dtype (the native gradient kernels take float32 only).

    >>> formulation("filter_grad", (128, 26, 26, 32), (3, 3, 32, 64), eigen=True)  # on CPU, native kernels built
    'native'
    >>> formulation("filter_grad", (128, 26, 26, 24), (3, 3, 24, 64), eigen=True)  # 24 % 16 != 0
    'split'
    """
    if not _on_cpu():
        return "xla"
    if not all(type(d) is int for d in x_shape):
        return "xla"  # a symbolic size: the tuned formulations need concrete ones
    if eigen is None:
        eigen = convolutions_on_eigen.get()
    strides, pads, dilations = _normalize(x_shape, w_shape, strides, padding, dilations)
    kh, kw, c_in, c_out = w_shape
    few_channels = c_in <= tuning.CONV_FEW_CHANNELS
    taps = few_channels and kh * kw <= (tuning.CONV_MAX_TAPS_EIGEN if eigen else tuning.CONV_MAX_TAPS_YNNPACK)
    pointwise = tuning.CONV_POINTWISE_AS_MATMUL and _pointwise(w_shape, strides, pads, dilations)
    if pointwise and kind == "forward" and eigen and not taps:
        return "xla"
    if pointwise and kind == "filter_grad" and matmul_filter_grad_applies(x_shape, w_shape, strides, pads, dilations,
                                                                           dtype):
        return "matmul"
    big_filter = kind != "forward" and _big_gradient_filter(w_shape)
    if winograd_applies(kind, x_shape, w_shape, strides, pads, dilations, dtype):
        return "winograd"
    if (tuning.NATIVE_KERNELS and not (kind == "forward" and taps) and not big_filter
            and conv_native.supported(kind, x_shape, w_shape, strides, pads, dilations, dtype)
            and (kind != "forward"
                 or _native_forward_rows(output_hw(x_shape[1:3], (kh, kw), strides, pads, dilations)[1], c_out,
                                         strides))
            and conv_native.available()):
        return "native"
    if kind == "forward":
        if taps:
            return "taps"
        if eigen:
            return "xla"
        out_hw = output_hw(x_shape[1:3], (kh, kw), strides, pads, dilations)
        flops = 2 * x_shape[0] * out_hw[0] * out_hw[1] * kh * kw * c_in * c_out
        big = c_in >= tuning.CONV_PREPAD_CHANNELS and flops >= tuning.CONV_PREPAD_FLOPS
        return "prepadded" if big or (few_channels and c_in > 1) else "padded"
    if kind == "input_grad":
        if few_channels or (eigen and strides != (1, 1)):
            return "col2im"
        if strides != (1, 1) and (dilations != (1, 1) or _negative(pads)):
            return "xla"
        return "padded"
    if kind == "filter_grad":
        if not eigen or few_channels:
            return "chunked"
        out_hw = output_hw(x_shape[1:3], (kh, kw), strides, pads, dilations)
        return "split" if _split_count(x_shape, (x_shape[0], *out_hw, c_out)) > 1 else "xla"
    raise ValueError(f"kind must be 'forward', 'input_grad' or 'filter_grad', got {kind!r}")


# -- building blocks --------------------------------------------------------------------------
def _native_forward_rows(out_width, c_out, strides=(1, 1)):
    """Whether output rows ``out_width`` wide fill the native forward kernel's register tiles well
    enough to beat XLA's convolution: wide rows always, narrower ones where there are few output
    channels and stride 1 (``tuning.CONV_NATIVE_*FORWARD*``)."""
    return out_width >= tuning.CONV_NATIVE_FORWARD_MIN_WIDTH or (
        tuple(strides) == (1, 1) and out_width >= tuning.CONV_NATIVE_NARROW_FORWARD_MIN_WIDTH
        and c_out <= tuning.CONV_NATIVE_NARROW_FORWARD_MAX_CHANNELS)


def _big_gradient_filter(w_shape):
    """Whether the native gradient kernels leave this filter to other formulations: they stream the
    filter through the cache, memory-bound beyond ``tuning.CONV_NATIVE_GRAD_MAX_FILTER_BYTES``."""
    return 4 * math.prod(w_shape) > tuning.CONV_NATIVE_GRAD_MAX_FILTER_BYTES


def winograd_applies(kind, x_shape, w_shape, strides, pads, dilations, dtype):
    """Whether ``formulation`` runs the ``kind`` ('forward', 'input_grad', 'filter_grad') of a
    convolution with these (explicit) pads as Winograd's F(2x2, 3x3) (``xla_cpu.winograd``): a
    float32 3x3 stride-1 convolution, the switch on, and at least
    ``tuning.CONV_WINOGRAD_NATIVE_MIN_CHANNELS`` input and output channels where the native kernels
    run it, ``tuning.CONV_WINOGRAD_MIN_CHANNELS`` where jax ops do (for the filter gradient only
    where the native gradient kernel does not take the filter either)."""
    if not (tuning.CONV_WINOGRAD and jnp.dtype(dtype) == jnp.float32
            and winograd.applies(x_shape, w_shape, strides, pads, dilations)):
        return False
    channels = min(w_shape[2], w_shape[3])
    if kind == "filter_grad":
        if winograd.filter_grad_runs_natively(x_shape, w_shape[3], dtype):
            return channels >= tuning.CONV_WINOGRAD_NATIVE_MIN_CHANNELS
        return _big_gradient_filter(w_shape) and channels >= tuning.CONV_WINOGRAD_MIN_CHANNELS
    if winograd.runs_natively(x_shape, w_shape[3], dtype):  # the input gradient's channels are the same two
        return channels >= tuning.CONV_WINOGRAD_NATIVE_MIN_CHANNELS
    return channels >= tuning.CONV_WINOGRAD_MIN_CHANNELS


def _pointwise(w_shape, strides, pads, dilations):
    """Whether this is a stride-1 1x1 convolution without padding: one matrix product over pixels."""
    return (tuple(w_shape[:2]) == (1, 1) and tuple(strides) == (1, 1) and tuple(dilations) == (1, 1)
            and pads == ((0, 0), (0, 0)))


def matmul_filter_grad_applies(x_shape, w_shape, strides, pads, dilations, dtype):
    """Whether the filter gradient of this convolution can run as ``x^T @ dy`` on ``matmul_native``
    (method 'matmul'): a stride-1 1x1 convolution without padding (explicit ``pads``) whose
    product that kernel takes (``matmul_native.supported``) and which could be built."""
    if not (_pointwise(w_shape, strides, pads, dilations) and all(type(d) is int for d in x_shape)):
        return False
    pixels = math.prod(x_shape[:3])
    return (matmul_native.supported((pixels, w_shape[2]), (pixels, w_shape[3]), dtype)
            and matmul_native.available())


def _strided_pointwise(x_shape, w_shape, strides, pads, dilations, dtype):
    """Whether this is a strided float32 1x1 convolution without padding (a ResNet's projection
    shortcut): the stride-1 convolution of the input's every ``stride``-th pixel, whose
    formulations (a GEMM, the native kernels) run far faster than a strided convolution's."""
    return (tuple(w_shape[:2]) == (1, 1) and tuple(strides) != (1, 1) and tuple(dilations) == (1, 1)
            and pads == ((0, 0), (0, 0)) and jnp.dtype(dtype) == jnp.float32 and _on_cpu()
            and all(type(d) is int for d in x_shape))


def _phased(x_shape, w_shape, strides, pads, dilations, dtype):
    """Whether the gradients of this strided float32 convolution run as ``sh * sw`` stride-1
    ones, one per input phase (``_phases``): a filter of at least the stride in each direction,
    more than ``tuning.CONV_FEW_CHANNELS`` input channels (fewer take 'col2im' and 'chunked'), no
    dilation, no cropping. Each phase's gradient then takes a stride-1 formulation (the native
    kernels), which beats the strided ones; the forward pass is not split so (Eigen ran the
    strided convolution faster than the phases' sum), it runs strided on the native kernel where
    ``formulation`` says so, else on XLA."""
    (kh, kw, c, _), (sh, sw) = w_shape, strides
    return (tuple(strides) != (1, 1) and tuple(dilations) == (1, 1) and (kh, kw) != (1, 1)
            and kh >= sh and kw >= sw and c > tuning.CONV_FEW_CHANNELS and not _negative(pads)
            and jnp.dtype(dtype) == jnp.float32 and _on_cpu() and all(type(d) is int for d in x_shape))


def _phases(padded_hw, filter_hw, strides):
    """``[(ra, rb, rows, cols), ...]``: for each phase (ra, rb) of a strided convolution of a
    padded input, the padded input's rows ``ra, ra + sh, ...`` and columns ``rb, rb + sw, ...``
    that its stride-1 convolution with the filter taps ``w[ra::sh, rb::sw]`` reads (as many as
    give the strided output's size)."""
    (hp, wp), (kh, kw), (sh, sw) = padded_hw, filter_hw, strides
    ho, wo = (hp - kh) // sh + 1, (wp - kw) // sw + 1
    return [(ra, rb, ho + -(-(kh - ra) // sh) - 1, wo + -(-(kw - rb) // sw) - 1)
            for ra in range(sh) for rb in range(sw)]


def _phase_input(xp, ra, rb, rows, cols, strides):
    sh, sw = strides
    n, _, _, c = xp.shape
    return lax.slice(xp, (0, ra, rb, 0), (n, ra + sh * (rows - 1) + 1, rb + sw * (cols - 1) + 1, c), (1, sh, sw, 1))


def _phased_input_grad(dy, w, input_shape, strides, pads, eigen):
    (top, bottom), (left, right) = pads
    n, h, w_in, c = input_shape
    hp, wp = h + top + bottom, w_in + left + right
    dxp = None
    for ra, rb, rows, cols in _phases((hp, wp), w.shape[:2], strides):
        part = conv2d_input_grad(dy, w[ra::strides[0], rb::strides[1]], (n, rows, cols, c), eigen=eigen)
        config = [(0, 0, 0), (ra, hp - ra - (rows - 1) * strides[0] - 1, strides[0] - 1),
                  (rb, wp - rb - (cols - 1) * strides[1] - 1, strides[1] - 1), (0, 0, 0)]
        part = lax.pad(part, jnp.zeros((), part.dtype), config)
        dxp = part if dxp is None else dxp + part
    return dxp[:, top:top + h, left:left + w_in, :]


def _phased_filter_grad(x, dy, filter_shape, strides, pads, eigen):
    xp = _pad_hw(x, pads)
    dw = jnp.zeros(filter_shape, x.dtype)
    for ra, rb, rows, cols in _phases(xp.shape[1:3], filter_shape[:2], strides):
        taps = (-(-(filter_shape[0] - ra) // strides[0]), -(-(filter_shape[1] - rb) // strides[1]))
        part = conv2d_filter_grad(_phase_input(xp, ra, rb, rows, cols, strides), dy, (*taps, *filter_shape[2:]),
                                  eigen=eigen)
        dw = dw.at[ra::strides[0], rb::strides[1]].set(part)
    return dw


def _subsample(x, strides):
    """Every ``strides``-th pixel of an NHWC array, from the first."""
    return x[:, ::strides[0], ::strides[1], :]


def _unsubsample(sampled, input_shape, strides):
    """The transpose of ``_subsample``: ``sampled``'s pixels at every ``strides``-th position of
    an array of ``input_shape``, zeros between (one pad with interior padding)."""
    (sh, sw), (ho, wo) = strides, sampled.shape[1:3]
    config = [(0, 0, 0), (0, input_shape[1] - (ho - 1) * sh - 1, sh - 1),
              (0, input_shape[2] - (wo - 1) * sw - 1, sw - 1), (0, 0, 0)]
    return lax.pad(sampled, jnp.zeros((), sampled.dtype), config)


def _pad_hw(x, pads):
    """Zero-pads (or, for negative amounts, crops) the two spatial axes of an NHWC array."""
    (t, b), (l, r) = pads
    if t == b == l == r == 0:
        return x
    return lax.pad(x, jnp.zeros((), x.dtype), ((0, 0, 0), (t, b, 0), (l, r, 0), (0, 0, 0)))


def _xla_conv(x, w, strides, pads, dilations):
    return lax.conv_general_dilated(x, w, strides, pads, rhs_dilation=dilations,
                                    dimension_numbers=DIMENSION_NUMBERS)


def _conv_fast(x, w, strides, pads, dilations, prepad):
    """``_xla_conv`` kept on YNNPACK's fast path (see the module docstring).

    With ``prepad`` the input is zero-padded explicitly and convolved with one extra bottom row;
    otherwise it keeps its own padding, and only all-zero padding gets the extra row.
    """
    if prepad or _negative(pads):
        x = _pad_hw(x, pads if prepad else tuple((min(lo, 0), min(hi, 0)) for lo, hi in pads))
        pads = ((0, 0), (0, 0)) if prepad else tuple((max(lo, 0), max(hi, 0)) for lo, hi in pads)
    out_hw = output_hw(x.shape[1:3], w.shape[:2], strides, pads, dilations)
    if any(p for pair in pads for p in pair):
        return _xla_conv(x, w, strides, pads, dilations)
    y = _xla_conv(x, w, strides, ((0, 1), (0, 0)), dilations)
    return y[:, :out_hw[0], :out_hw[1]]


def _taps(xp, filter_hw, strides, dilations, out_hw):
    """The strided windows of the padded input, one (N, Ho, Wo, C) array per filter tap (row-major)."""
    (kh, kw), (sh, sw), (dh, dw), (ho, wo) = filter_hw, strides, dilations, out_hw
    n, _, _, c = xp.shape
    return [lax.slice(xp, (0, i * dh, j * dw, 0),
                      (n, i * dh + (ho - 1) * sh + 1, j * dw + (wo - 1) * sw + 1, c), (1, sh, sw, 1))
            for i in range(kh) for j in range(kw)]


def _patches(xp, filter_hw, strides, dilations, out_hw):
    """im2col: (N*Ho*Wo, kh*kw*C) with columns ordered (i, j, c) like a reshaped HWIO filter."""
    taps = _taps(xp, filter_hw, strides, dilations, out_hw)
    p = taps[0] if len(taps) == 1 else jnp.concatenate(taps, axis=-1)
    return p.reshape(-1, p.shape[-1])


# -- forward ----------------------------------------------------------------------------------
def conv2d_forward(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1), *, method=None, eigen=None):
    """y = conv(x, w): NHWC x HWIO -> NHWC, exactly ``lax.conv_general_dilated``'s result.

    ``method``: one of ``FORWARD_METHODS``, or None for ``formulation("forward", ..., eigen)``
    (``eigen`` None: the context value ``convolutions_on_eigen``). bfloat16 arrays, with ``method``
    None, run on the bfloat16 kernels where ``bf16_native`` says so."""
    if method is None and bf16_native("forward", x.shape, w.shape, strides, padding, dilations, x.dtype):
        return _bf16_forward(x, w, _normalize(x.shape, w.shape, strides, padding, dilations)[1])
    if low_precision.conv_widened(x.dtype):
        return low_precision.conv_in_float32(
            lambda x, w: conv2d_forward(x, w, strides, padding, dilations, method=method, eigen=eigen), x, w)
    strides, pads, dilations = _normalize(x.shape, w.shape, strides, padding, dilations)
    if method is None and _strided_pointwise(x.shape, w.shape, strides, pads, dilations, x.dtype):
        return conv2d_forward(_subsample(x, strides), w, eigen=eigen)
    out_hw = output_hw(x.shape[1:3], w.shape[:2], strides, pads, dilations)
    if method is None:
        method = formulation("forward", x.shape, w.shape, strides, pads, dilations, eigen, x.dtype)
    if min(out_hw) <= 0 or method == "xla":
        return _xla_conv(x, w, strides, pads, dilations)
    if method in ("padded", "prepadded"):
        return _conv_fast(x, w, strides, pads, dilations, prepad=method == "prepadded")
    if method == "native":
        _check_native("forward", x.shape, w.shape, strides, pads, dilations, x.dtype)
        return _native_forward(x, w, tuple(strides), pads)
    if method == "winograd":
        _check_winograd(x.shape, w.shape, strides, pads, dilations)
        return _winograd_forward(x, w, pads)
    xp = _pad_hw(x, pads)
    kh, kw, c, o = w.shape
    if method == "taps":
        y = None
        for t, window in enumerate(_taps(xp, (kh, kw), strides, dilations, out_hw)):
            if c <= tuning.CONV_FEW_CHANNELS:  # broadcast multiply-adds: XLA fuses them all into one loop
                terms = [window[..., k:k + 1] * w[t // kw, t % kw, k] for k in range(c)]
            else:
                terms = [jnp.einsum("nhwc,co->nhwo", window, w[t // kw, t % kw])]
            for term in terms:
                y = term if y is None else y + term
        return y
    if method == "im2col":
        y = _patches(xp, (kh, kw), strides, dilations, out_hw) @ w.reshape(-1, o)
        return y.reshape(x.shape[0], *out_hw, o)
    raise ValueError(f"unknown forward method {method!r}; one of {FORWARD_METHODS}")


def conv2d_bias_relu_forward(x, w, b, strides=(1, 1), padding="VALID", dilations=(1, 1), *, method=None, eigen=None,
                             result_dtype=None):
    """``max(conv2d_forward(x, w, ...) + b, 0)``: a Conv2D layer with a bias and ``activation="relu"``.

    Where the forward pass runs natively the bias and the ReLU are its epilogue, applied to each
    output tile while it is in registers: bit for bit the same values, without two more passes
    over the output (and the gradient reads the stored output instead of recomputing it).
    Elsewhere they are jax ops, which XLA fuses with whatever it can; after 'taps' (multiply-adds
    XLA fuses into one loop) the result is materialized, so that the gradient reads it rather
    than computing the taps again (the MNIST CNN's first layer). ``method`` and ``eigen`` as for
    ``conv2d_forward``. ``result_dtype``: the dtype the result is rounded to (None: x's), in the
    same pass as the ReLU where XLA computes it (a bfloat16 layer widened to float32)."""
    if method is None and bf16_native("forward", x.shape, w.shape, strides, padding, dilations, x.dtype):
        return _bf16_forward_bias_relu(x, w, b.astype(x.dtype),
                                       _normalize(x.shape, w.shape, strides, padding, dilations)[1])
    if low_precision.conv_widened(x.dtype):
        dtype = x.dtype
        return low_precision.conv_in_float32(
            lambda x, w, b: conv2d_bias_relu_forward(x, w, b, strides, padding, dilations, method=method, eigen=eigen,
                                                     result_dtype=dtype), x, w, b)
    strides_, pads, dilations_ = _normalize(x.shape, w.shape, strides, padding, dilations)
    if method is None and _strided_pointwise(x.shape, w.shape, strides_, pads, dilations_, x.dtype):
        return conv2d_bias_relu_forward(_subsample(x, strides_), w, b, eigen=eigen, result_dtype=result_dtype)
    if method is None:
        method = formulation("forward", x.shape, w.shape, strides_, pads, dilations_, eigen, x.dtype)
    if method == "native" and min(output_hw(x.shape[1:3], w.shape[:2], strides_, pads, dilations_)) > 0 \
            and b.dtype == x.dtype:
        _check_native("forward", x.shape, w.shape, strides_, pads, dilations_, x.dtype)
        return _native_forward_bias_relu(x, w, b, tuple(strides_), pads).astype(result_dtype or x.dtype)
    result_dtype = x.dtype if result_dtype is None else result_dtype
    y = conv2d_forward(x, w, strides, padding, dilations, method=method, eigen=eigen)
    if method == "taps":
        # kept in a buffer of its own: XLA would compute the taps again inside the ReLU's gradient
        return materialize(jnp.maximum(y + b, 0).astype(result_dtype))
    return jnp.maximum(y + b, 0).astype(result_dtype)


# -- input gradient ---------------------------------------------------------------------------
def _xla_input_grad(dy, w, input_shape, strides, pads, dilations):
    def forward(x):
        return _xla_conv(x, w, strides, pads, dilations)
    return jax.linear_transpose(forward, jax.ShapeDtypeStruct(tuple(input_shape), dy.dtype))(dy)[0]


def _flipped(w):
    """The filter of the transposed convolution: spatially reversed, I and O swapped."""
    return jnp.flip(w, (0, 1)).transpose(0, 1, 3, 2)


def _correlation_pads(w_shape, pads, dilations, input_shape, dy_shape):
    """The pads of the stride-1 input gradient as a convolution of dy with the flipped filter:
    dx[h] = sum_i dy[h + top - i*d] w[i]."""
    return tuple((_effective(k, d) - 1 - lo, n - m + lo)
                 for k, d, (lo, _), n, m in zip(w_shape[:2], dilations, pads, input_shape[1:3], dy_shape[1:3]))


def _input_grad_stride1(dy, w, input_shape, pads, dilations, prepad):
    new_pads = _correlation_pads(w.shape, pads, dilations, input_shape, dy.shape)
    return _conv_fast(dy, _flipped(w), (1, 1), new_pads, dilations, prepad)


def _input_grad_phases(dy, w, input_shape, strides, pads, prepad):
    """Strided dx as s*s stride-1 correlations, one per phase of the padded input, interleaved.

    In padded coordinates u = s*a + r, dxp[u] = sum_q dy[a - q] w[s*q + r]: a full correlation of
    dy with the flipped sub-filter w[r::s].
    """
    (sh, sw), c = strides, w.shape[2]
    n, ho, wo = dy.shape[:3]
    (pt, _), (pl, _) = pads
    a_len, b_len = -(-(pt + input_shape[1]) // sh), -(-(pl + input_shape[2]) // sw)
    rows = []
    for rh in range(sh):
        cols = []
        for rw in range(sw):
            sub = w[rh::sh, rw::sw]
            if sub.shape[0] == 0 or sub.shape[1] == 0:  # a stride larger than the filter
                cols.append(jnp.zeros((n, a_len, b_len, c), dy.dtype))
                continue
            qh, qw = sub.shape[:2]
            sub_pads = ((qh - 1, a_len - ho), (qw - 1, b_len - wo))
            cols.append(_conv_fast(dy, _flipped(sub), (1, 1), sub_pads, (1, 1), prepad))
        rows.append(jnp.stack(cols, axis=3))  # (N, A, B, sw, C)
    dxp = jnp.stack(rows, axis=2).reshape(n, a_len * sh, b_len * sw, c)  # from (N, A, sh, B, sw, C)
    return dxp[:, pt:pt + input_shape[1], pl:pl + input_shape[2]]


def _input_grad_col2im(dy, w, input_shape, strides, pads, dilations):
    """dx as dy @ w^T (the gradient of every patch) scattered back tap by tap; the scatter is
    interior-padded adds, which XLA fuses into one loop."""
    kh, kw, c, o = w.shape
    n, ho, wo = dy.shape[:3]
    (sh, sw), (dh, dw) = strides, dilations
    hp, wp = input_shape[1] + sum(pads[0]), input_shape[2] + sum(pads[1])
    cols = (dy.reshape(-1, o) @ w.reshape(-1, o).T).reshape(n, ho, wo, kh * kw, c)
    dxp = None
    for t in range(kh * kw):
        i, j = divmod(t, kw)
        cfg = ((0, 0, 0), (i * dh, hp - i * dh - (ho - 1) * sh - 1, sh - 1),
               (j * dw, wp - j * dw - (wo - 1) * sw - 1, sw - 1), (0, 0, 0))
        placed = lax.pad(cols[:, :, :, t], jnp.zeros((), dy.dtype), cfg)
        dxp = placed if dxp is None else dxp + placed
    return _pad_hw(dxp, tuple((-lo, -hi) for lo, hi in pads))


def conv2d_input_grad(dy, w, input_shape, strides=(1, 1), padding="VALID", dilations=(1, 1), *,
                      method=None, eigen=None):
    """dx: the transpose of ``conv2d_forward`` in x applied to ``dy`` (x has ``input_shape``).

    ``method``: one of ``INPUT_GRAD_METHODS``, or None for ``formulation("input_grad", ...,
    eigen)`` (``eigen`` None: the context value ``convolutions_on_eigen``); bfloat16 as
    ``conv2d_forward``."""
    if method is None and bf16_native("input_grad", input_shape, w.shape, strides, padding, dilations, dy.dtype):
        return _bf16_input_grad(dy, w, tuple(input_shape),
                                _normalize(input_shape, w.shape, strides, padding, dilations)[1])
    if low_precision.conv_widened(dy.dtype):
        return low_precision.conv_in_float32(
            lambda dy, w: conv2d_input_grad(dy, w, input_shape, strides, padding, dilations, method=method,
                                            eigen=eigen), dy, w)
    input_shape = tuple(input_shape)
    strides, pads, dilations = _normalize(input_shape, w.shape, strides, padding, dilations)
    if method is None and _strided_pointwise(input_shape, w.shape, strides, pads, dilations, dy.dtype):
        sampled = conv2d_input_grad(dy, w, (*input_shape[:1], *dy.shape[1:3], input_shape[3]), eigen=eigen)
        return _unsubsample(sampled, input_shape, strides)
    if method is None and _phased(input_shape, w.shape, strides, pads, dilations, dy.dtype):
        return _phased_input_grad(dy, w, input_shape, strides, pads, eigen)
    if method is None:
        method = formulation("input_grad", input_shape, w.shape, strides, pads, dilations, eigen, dy.dtype)
    if min(dy.shape[1:3]) <= 0 or method == "xla":
        return _xla_input_grad(dy, w, input_shape, strides, pads, dilations)
    if method == "col2im":
        return _input_grad_col2im(dy, w, input_shape, strides, pads, dilations)
    if method == "native":
        _check_native("input_grad", input_shape, w.shape, strides, pads, dilations, dy.dtype)
        return _native_input_grad(dy, w, input_shape, pads)
    if method == "winograd":
        _check_winograd(input_shape, w.shape, strides, pads, dilations)
        return _winograd_input_grad(dy, w, input_shape, pads)
    if method not in ("padded", "prepadded"):
        raise ValueError(f"unknown input-gradient method {method!r}; one of {INPUT_GRAD_METHODS}")
    prepad = method == "prepadded"
    if strides == (1, 1):
        return _input_grad_stride1(dy, w, input_shape, pads, dilations, prepad)
    if dilations != (1, 1) or _negative(pads):  # (phases of a dilated filter: not worth the code)
        return _xla_input_grad(dy, w, input_shape, strides, pads, dilations)
    return _input_grad_phases(dy, w, input_shape, strides, pads, prepad)


# -- the native kernels (conv_native), differentiable --------------------------------------------
def _check_native(kind, x_shape, w_shape, strides, pads, dilations, dtype):
    if not conv_native.supported(kind, x_shape, w_shape, strides, pads, dilations, dtype):
        channels = {"forward": "output channels", "input_grad": "input channels",
                    "filter_grad": "input channels (or of 16 output channels, with kw * C <= "
                                   f"{conv_native.few_channel_taps()})"}[kind]
        strides_taken = "any strides" if kind == "forward" and tuning.CONV_NATIVE_STRIDED_FORWARD else "stride 1"
        raise ValueError(f"method 'native' takes undilated float32 convolutions ({strides_taken}) with a multiple "
                         f"of 16 {channels} and pads smaller than the filter; got x {tuple(x_shape)}, filter "
                         f"{tuple(w_shape)}, strides {strides}, pads {pads}, dilations {dilations}, {dtype}")
    if not conv_native.available():
        raise RuntimeError(f"method 'native': the native kernels are unavailable: {conv_native.unavailable_reason()}")


def _check_winograd(x_shape, w_shape, strides, pads, dilations):
    if not winograd.applies(x_shape, w_shape, strides, pads, dilations):
        raise ValueError(f"method 'winograd' takes 3x3 stride-1 undilated convolutions with pads of 0 to 2; got x "
                         f"{tuple(x_shape)}, filter {tuple(w_shape)}, strides {strides}, pads {pads}, dilations "
                         f"{dilations}")


def _with_rules(kernel, static_count, cotangents):
    """``kernel(a, b, *static)`` as a ``jax.custom_vjp`` whose cotangents for (a, b) are
    ``cotangents(*static, a, b, g)``."""
    wrapped = jax.custom_vjp(kernel, nondiff_argnums=tuple(range(2, 2 + static_count)))

    def forward(a, b, *static):
        return wrapped(a, b, *static), (a, b)

    def backward(*args):
        *static, (a, b), g = args
        return cotangents(*static, a, b, g)

    wrapped.defvjp(forward, backward)
    return wrapped


# Each of the three is bilinear, so its derivatives are the other two convolutions (as in
# minikeras.ops.nn_conv); these call the public functions, which pick the native kernels again
# where they apply, so every order of derivative runs on them.
_native_forward = _with_rules(  # (x, w, strides, pads)
    lambda x, w, strides, pads: conv_native.forward(x, w, pads, strides), 2,
    lambda strides, pads, x, w, g: (conv2d_input_grad(g, w, x.shape, strides, pads),
                                    conv2d_filter_grad(x, g, w.shape, strides, pads)))
_native_input_grad = _with_rules(  # (dy, w, input_shape, pads)
    conv_native.input_grad, 2,
    lambda input_shape, pads, dy, w, g: (conv2d_forward(g, w, (1, 1), pads),
                                         conv2d_filter_grad(g, dy, w.shape, (1, 1), pads)))
_native_filter_grad = _with_rules(  # (x, dy, filter_shape, pads)
    conv_native.filter_grad, 2,
    lambda filter_shape, pads, x, dy, g: (conv2d_input_grad(dy, g, x.shape, (1, 1), pads),
                                          conv2d_forward(x, g, (1, 1), pads)))


# Winograd's convolutions (xla_cpu.winograd, native or in jax ops) likewise: their gradients are the
# other convolutions' own, on their tuned formulations, rather than the transposes of the transforms.
_winograd_forward = _with_rules(  # (x, w, pads)
    lambda x, w, pads: winograd.forward(x, w, pads), 1,
    lambda pads, x, w, g: (conv2d_input_grad(g, w, x.shape, (1, 1), pads),
                           conv2d_filter_grad(x, g, w.shape, (1, 1), pads)))
_winograd_input_grad = _with_rules(  # (dy, w, input_shape, pads)
    lambda dy, w, input_shape, pads: winograd.forward(
        dy, w, _correlation_pads(w.shape, pads, (1, 1), input_shape, dy.shape), transposed=True), 2,
    lambda input_shape, pads, dy, w, g: (conv2d_forward(g, w, (1, 1), pads),
                                         conv2d_filter_grad(g, dy, w.shape, (1, 1), pads)))
_winograd_filter_grad = _with_rules(  # (x, dy, filter_shape, pads); the 16 products contract the tiles
    lambda x, dy, filter_shape, pads: winograd.filter_grad(x, dy, pads, matmul_native.matmul_tn), 2,
    lambda filter_shape, pads, x, dy, g: (conv2d_input_grad(dy, g, x.shape, (1, 1), pads),
                                          conv2d_forward(x, g, (1, 1), pads)))


# The bfloat16 kernels likewise: their rules are the public functions on bfloat16 arrays.
_bf16_forward = _with_rules(  # (x, w, pads)
    conv_bf16_native.forward, 1,
    lambda pads, x, w, g: (conv2d_input_grad(g, w, x.shape, (1, 1), pads),
                           conv2d_filter_grad(x, g, w.shape, (1, 1), pads)))
_bf16_input_grad = _with_rules(  # (dy, w, input_shape, pads)
    conv_bf16_native.input_grad, 2,
    lambda input_shape, pads, dy, w, g: (conv2d_forward(g, w, (1, 1), pads),
                                         conv2d_filter_grad(g, dy, w.shape, (1, 1), pads)))
_bf16_filter_grad = _with_rules(  # (x, dy, filter_shape, pads)
    conv_bf16_native.filter_grad, 2,
    lambda filter_shape, pads, x, dy, g: (conv2d_input_grad(dy, g, x.shape, (1, 1), pads),
                                          conv2d_forward(x, g, (1, 1), pads)))


@functools.partial(jax.custom_vjp, nondiff_argnums=(3, 4))
def _native_forward_bias_relu(x, w, b, strides, pads):
    return conv_native.forward_bias_relu(x, w, b, pads, strides)


def _native_forward_bias_relu_fwd(x, w, b, strides, pads):
    out = _native_forward_bias_relu(x, w, b, strides, pads)
    return out, (x, w, out)


def relu_masked(g, out, materialized=False):
    """relu's derivative applied to g (``out > 0`` exactly where relu's input is), in a buffer of
    its own when ``materialized`` (a bfloat16 layer whose gradients run on the bfloat16 kernels:
    XLA:CPU would otherwise write the masked g in float32 for the bias sum and round it to
    bfloat16 for the convolutions in a pass of its own, three passes over a float32 array where
    one bfloat16 write and one read do)."""
    g = low_precision.keep_where(out > 0, g)
    return materialize(g) if materialized else g


def _strided_bias_relu_cotangents(strides, pads, residuals, g):
    x, w, out = residuals
    g = jnp.where(out > 0, g, jnp.zeros((), g.dtype))  # relu's derivative: out > 0 exactly where conv + b > 0
    return (conv2d_input_grad(g, w, x.shape, strides, pads), conv2d_filter_grad(x, g, w.shape, strides, pads),
            jnp.sum(g, axis=(0, 1, 2)))


def _bias_relu_cotangents(pads, residuals, g):
    return _strided_bias_relu_cotangents((1, 1), pads, residuals, g)


_native_forward_bias_relu.defvjp(_native_forward_bias_relu_fwd, _strided_bias_relu_cotangents)


@functools.partial(jax.custom_vjp, nondiff_argnums=(3,))
def _bf16_forward_bias_relu(x, w, b, pads):
    return conv_bf16_native.forward_bias_relu(x, w, b, pads)


def _bf16_forward_bias_relu_fwd(x, w, b, pads):
    out = _bf16_forward_bias_relu(x, w, b, pads)
    return out, (x, w, out)


_bf16_forward_bias_relu.defvjp(_bf16_forward_bias_relu_fwd, _bias_relu_cotangents)


@functools.partial(jax.custom_vjp, nondiff_argnums=(2, 3))
def _bf16_filter_and_bias_grad(x, dy, filter_shape, pads):
    return conv_bf16_native.filter_grad_and_bias(x, dy, filter_shape, pads)


def _bf16_filter_and_bias_grad_fwd(x, dy, filter_shape, pads):
    return _bf16_filter_and_bias_grad(x, dy, filter_shape, pads), (x, dy)


def _bf16_filter_and_bias_grad_bwd(filter_shape, pads, residuals, cotangents):
    x, dy = residuals
    g_w, g_b = cotangents  # dw is bilinear in (x, dy); db = sum(dy) is linear in dy
    return (conv2d_input_grad(dy, g_w, x.shape, (1, 1), pads),
            conv2d_forward(x, g_w, (1, 1), pads) + g_b.astype(dy.dtype))


_bf16_filter_and_bias_grad.defvjp(_bf16_filter_and_bias_grad_fwd, _bf16_filter_and_bias_grad_bwd)


def conv2d_filter_and_bias_grad(x, dy, filter_shape, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    """``(conv2d_filter_grad(x, dy, filter_shape, ...), dy summed over all but its last axis)`` in
    one call of the bfloat16 filter-gradient kernel where ``bf16_native("filter_grad", ...)`` says
    it runs and ``tuning.BF16_CONV_BIAS_SUMS_IN_KERNEL``; None elsewhere (the caller takes the two
    separately). Both rounded to bfloat16 once, from float32 sums in another order than XLA's."""
    if not (tuning.BF16_CONV_BIAS_SUMS_IN_KERNEL
            and bf16_native("filter_grad", x.shape, filter_shape, strides, padding, dilations, x.dtype)
            and dy.dtype == x.dtype):
        return None
    return _bf16_filter_and_bias_grad(x, dy, tuple(filter_shape),
                                      _normalize(x.shape, filter_shape, strides, padding, dilations)[1])


# -- filter gradient --------------------------------------------------------------------------
def _xla_filter_grad(x, dy, filter_shape, strides, pads, dilations):
    def forward(w):
        return _xla_conv(x, w, strides, pads, dilations)
    return jax.linear_transpose(forward, jax.ShapeDtypeStruct(tuple(filter_shape), dy.dtype))(dy)[0]


def _split_count(x_shape, dy_shape, itemsize=4):
    """Batch chunks of about ``tuning.CONV_SPLIT_BYTES`` of x and dy for the split filter gradient."""
    n = x_shape[0]
    per_sample = (math.prod(x_shape[1:]) + math.prod(dy_shape[1:])) * itemsize
    return max(1, min(n, round(n * per_sample / tuning.CONV_SPLIT_BYTES)))


def _filter_grad_split(x, dy, filter_shape, strides, pads, dilations):
    """dw = the sum over batch chunks (at least 2, if the batch has 2 samples) of the plain
    filter gradient of each chunk. The chunks are unrolled: in a scan or fori_loop XLA:CPU runs
    these convolutions far slower."""
    n = x.shape[0]
    chunks = max(min(2, n), _split_count(x.shape, dy.shape, x.dtype.itemsize))
    bounds = [n * i // chunks for i in range(chunks + 1)]
    acc_dtype = jnp.promote_types(dy.dtype, jnp.float32)  # the sum over chunks in >= f32
    parts = [_xla_filter_grad(lax.slice_in_dim(x, a, b), lax.slice_in_dim(dy, a, b), filter_shape, strides, pads,
                              dilations).astype(acc_dtype) for a, b in zip(bounds, bounds[1:])]
    return sum(parts[1:], parts[0]).astype(dy.dtype)


_CONTRACT_ROWS = (((0,), (0,)), ((), ()))


def _batch_chunk(n, bytes_per_sample):
    """Samples per chunk: about ``tuning.CONV_CHUNK_BYTES`` of patches, as even as possible over n."""
    chunks = -(-n // max(1, min(n, tuning.CONV_CHUNK_BYTES // max(bytes_per_sample, 1))))
    return -(-n // chunks)


def _filter_grad_chunked(xp, dy, filter_shape, strides, dilations):
    """dw = sum over batch chunks of patches^T @ dy, the transposed patches built per chunk.

    x is transposed once to (chunks, C, B, H, W) so that each tap of a chunk is a plain strided
    copy and the taps stack along rows: patches^T (kh*kw*C, B*Ho*Wo) times dy (B*Ho*Wo, O) is a
    row-major GEMM (the orientation XLA:CPU runs fastest; contracting over the rows of both
    operands runs slower).
    """
    kh, kw, c, o = filter_shape
    n, ho, wo = dy.shape[:3]
    (sh, sw), (dh, dw) = strides, dilations
    b = _batch_chunk(n, ho * wo * kh * kw * c * xp.dtype.itemsize)
    if n % b:  # zero samples contribute nothing to dw
        extra = b - n % b
        xp = jnp.pad(xp, ((0, extra), (0, 0), (0, 0), (0, 0)))
        dy = jnp.pad(dy, ((0, extra), (0, 0), (0, 0), (0, 0)))
        n += extra
    hp, wp = xp.shape[1:3]
    xt = jnp.swapaxes(xp.reshape(n // b, b * hp * wp, c), 1, 2).reshape(n // b, c, b, hp, wp)
    ds = dy.reshape(n // b, b * ho * wo, o)

    acc_dtype = jnp.promote_types(dy.dtype, jnp.float32)  # the sum over chunks in >= f32

    def body(acc, chunk):
        xb, db = chunk
        taps = [lax.slice(xb, (0, 0, i * dh, j * dw), (c, b, i * dh + (ho - 1) * sh + 1, j * dw + (wo - 1) * sw + 1),
                          (1, 1, sh, sw)) for i in range(kh) for j in range(kw)]
        pt = jnp.concatenate(taps, axis=0).reshape(kh * kw * c, b * ho * wo)
        return acc + jnp.matmul(pt, db, preferred_element_type=acc_dtype), None

    acc, _ = lax.scan(body, np.zeros((kh * kw * c, o), acc_dtype), (xt, ds))  # NumPy zeros: nothing to compile
    return acc.astype(dy.dtype).reshape(filter_shape)


def conv2d_filter_grad(x, dy, filter_shape, strides=(1, 1), padding="VALID", dilations=(1, 1), *,
                       method=None, eigen=None):
    """dw: the transpose of ``conv2d_forward`` in w applied to ``dy`` (w has ``filter_shape``).

    ``method``: one of ``FILTER_GRAD_METHODS``, or None for ``formulation("filter_grad", ...,
    eigen)`` (``eigen`` None: the context value ``convolutions_on_eigen``); bfloat16 as
    ``conv2d_forward``."""
    if method is None and bf16_native("filter_grad", x.shape, filter_shape, strides, padding, dilations, x.dtype):
        return _bf16_filter_grad(x, dy, tuple(filter_shape),
                                 _normalize(x.shape, filter_shape, strides, padding, dilations)[1])
    if low_precision.conv_widened(x.dtype):
        return low_precision.conv_in_float32(
            lambda x, dy: conv2d_filter_grad(x, dy, filter_shape, strides, padding, dilations, method=method,
                                             eigen=eigen), x, dy)
    filter_shape = tuple(filter_shape)
    strides, pads, dilations = _normalize(x.shape, filter_shape, strides, padding, dilations)
    if method is None and _strided_pointwise(x.shape, filter_shape, strides, pads, dilations, x.dtype):
        return conv2d_filter_grad(_subsample(x, strides), dy, filter_shape, eigen=eigen)
    if method is None and _phased(x.shape, filter_shape, strides, pads, dilations, x.dtype):
        return _phased_filter_grad(x, dy, filter_shape, strides, pads, eigen)
    if method is None:
        method = formulation("filter_grad", x.shape, filter_shape, strides, pads, dilations, eigen, x.dtype)
    if min(dy.shape[1:3]) <= 0 or method == "xla":
        return _xla_filter_grad(x, dy, filter_shape, strides, pads, dilations)
    if method == "split":
        return _filter_grad_split(x, dy, filter_shape, strides, pads, dilations)
    if method == "matmul":
        if not matmul_filter_grad_applies(x.shape, filter_shape, strides, pads, dilations, x.dtype):
            raise ValueError(f"method 'matmul' takes stride-1 1x1 float32 convolutions without padding whose "
                             f"output channels are a multiple of 16, on the native matmul kernel; got x "
                             f"{tuple(x.shape)}, filter {filter_shape}, strides {strides}, pads {pads}")
        c, o = filter_shape[2:]
        return matmul_native.matmul_tn(x.reshape(-1, c), dy.reshape(-1, o)).reshape(filter_shape)
    if method == "native":
        _check_native("filter_grad", x.shape, filter_shape, strides, pads, dilations, x.dtype)
        return _native_filter_grad(x, dy, filter_shape, pads)
    if method == "winograd":
        _check_winograd(x.shape, filter_shape, strides, pads, dilations)
        return _winograd_filter_grad(x, dy, filter_shape, pads)
    kh, kw, c, o = filter_shape
    xp = _pad_hw(x, pads)
    if method == "chunked":
        return _filter_grad_chunked(xp, dy, filter_shape, strides, dilations)
    if method == "im2col":
        p = _patches(xp, (kh, kw), strides, dilations, dy.shape[1:3])
        return lax.dot_general(p, dy.reshape(-1, o), _CONTRACT_ROWS).reshape(filter_shape)
    if method == "taps":
        d = dy.reshape(-1, o)
        return jnp.stack([lax.dot_general(t.reshape(-1, c), d, _CONTRACT_ROWS)
                          for t in _taps(xp, (kh, kw), strides, dilations, dy.shape[1:3])]).reshape(filter_shape)
    raise ValueError(f"unknown filter-gradient method {method!r}; one of {FILTER_GRAD_METHODS}")
