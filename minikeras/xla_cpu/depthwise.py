"""Depthwise convolution and its two VJPs as sums of shifted slices, for XLA:CPU.

    depthwise_forward(x, w, strides, padding, dilations, *, method)                    -> y
    depthwise_input_grad(dy, w, input_shape, strides, padding, dilations, *, method)   -> dx
    depthwise_filter_grad(x, dy, filter_shape, strides, padding, dilations, *, method) -> dw

x is (batch, *spatial, channels) with 1 to 3 spatial axes, w Keras's depthwise kernel
(*kernel_spatial, channels, multiplier), y (batch, *spatial', channels * multiplier) with output
channel ``c * multiplier + m``; ``strides`` and ``dilations`` one int per spatial axis; ``padding``
'SAME', 'VALID' or one (low, high) pair per spatial axis. Each function is exactly the math of
``lax.conv_general_dilated(..., feature_group_count=channels)`` (resp. its transpose in x / in
w), so any of the three can serve as another's gradient rule, and each is differentiable jax code.

XLA:CPU runs a grouped convolution with one group per channel an order of magnitude slower than
a dense one (Eigen and YNNPACK alike: MobileNetV2's depthwise layers took most of its step). Yet a
depthwise convolution is only ``k*k`` multiply-adds per output, so it is written here as what it
is, and XLA fuses each into one elementwise loop ('taps'):

* forward: y = sum over taps t of ``slice_t(pad(x)) * w[t]``, ``slice_t`` the strided window
  of tap t (for a multiplier > 1 each slice is broadcast over it);
* input gradient: the forward's transpose, by phases: along an axis of stride s, x's elements
  ``m*s + r`` (phase r) take only the taps whose offset lines up with r, each a shifted slice of
  the padded output gradient times that tap's weights, summed over the multiplier; the phases are
  interleaved (a stack and a reshape that XLA fuses into the consumer). At stride 1 that is one
  phase with every tap, one loop as the forward pass. (As a stride-1 correlation of the output
  gradient dilated by the strides, a stride-2 layer computed every tap on the zeros between: 1.4-3.7x
  slower on MobileNetV2's stride-2 layers, and the dilated gradient was written out);
* filter gradient: for each tap the sum over batch and space of ``slice_t(pad(x)) * dy``, all
  taps in one variadic reduction over groups of consecutive rows (of batch * rows) that XLA fuses
  with the padding, windows and products (reading x and dy once; tap by tap, each window was a
  copy: 1.8x slower on 56x56x144; over all rows at once, XLA's reduction loop was 3-5x slower),
  then a small sum over the groups and columns; each keeps the channels innermost.

Off the CPU (``jax.default_backend()``) and with ``method="xla"`` they are the grouped
convolution and its ``jax.vjp``. ``formulation`` says which a call picks; ``tuning.DEPTHWISE_TAPS``
turns 'taps' off (benchmarks/depthwise_conv.py measured both).
"""
import itertools
import math

import jax
import jax.numpy as jnp
from jax import lax

from minikeras.xla_cpu import tuning
from minikeras.xla_cpu.materialize import materialize

METHODS = ("xla", "taps")
_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def formulation():
    """The method the three functions use by default here: 'taps' on the CPU backend (unless
    ``tuning.DEPTHWISE_TAPS`` is False), 'xla' elsewhere (a GPU's grouped convolution is fast)."""
    return "taps" if tuning.DEPTHWISE_TAPS and jax.default_backend() == "cpu" else "xla"


def explicit_padding(padding, in_spatial, kernel_spatial, strides, dilations):
    """One (low, high) pair per spatial axis for 'SAME', 'VALID' or explicit pairs (lax's rules)."""
    if not isinstance(padding, str):
        return tuple((int(lo), int(hi)) for lo, hi in padding)
    effective = [(k - 1) * d + 1 for k, d in zip(kernel_spatial, dilations)]
    return tuple(tuple(p) for p in lax.padtype_to_pads(in_spatial, effective, strides, padding.upper()))


def _output_spatial(in_spatial, kernel_spatial, strides, pads, dilations):
    return tuple(max((n + lo + hi - (k - 1) * d - 1) // s + 1, 0)
                 for n, k, s, (lo, hi), d in zip(in_spatial, kernel_spatial, strides, pads, dilations))


def _accumulation_dtype(dtype):
    # bfloat16/float16 products are summed in float32, as the convolution accumulates them
    return jnp.float32 if jnp.dtype(dtype).itemsize < 4 else dtype


def _pad_spatial(x, pads, interior=None):
    """``x`` (batch, *spatial, ...) zero-padded on its spatial axes by ``pads`` (and ``interior``)."""
    interior = interior or (0,) * len(pads)
    config = ([(0, 0, 0)] + [(lo, hi, i) for (lo, hi), i in zip(pads, interior)]
              + [(0, 0, 0)] * (x.ndim - 1 - len(pads)))
    return lax.pad(x, jnp.zeros((), x.dtype), config)


def _window(xp, tap, dilations, strides, out_spatial):
    """The (batch, *out_spatial, ...) slice of padded ``xp`` that kernel tap ``tap`` reads."""
    rest = xp.shape[1 + len(tap):]
    start = [0] + [t * d for t, d in zip(tap, dilations)] + [0] * len(rest)
    limit = ([xp.shape[0]] + [t * d + (o - 1) * s + 1 for t, d, o, s in zip(tap, dilations, out_spatial, strides)]
             + list(rest))
    return lax.slice(xp, start, limit, (1, *strides) + (1,) * len(rest))


def _grouped(x, w, strides, pads, dilations):
    rank = x.ndim - 2
    s = _SPATIAL[rank]
    flat = w.reshape(w.shape[:-2] + (1, w.shape[-2] * w.shape[-1]))
    return lax.conv_general_dilated(x, flat, strides, pads, rhs_dilation=dilations,
                                    dimension_numbers=("N" + s + "C", s + "IO", "N" + s + "C"),
                                    feature_group_count=x.shape[-1])


def _check_method(method):
    method = formulation() if method is None else method
    if method not in METHODS:
        raise ValueError(f"depthwise convolution: `method` must be one of {METHODS}, received {method!r}")
    return method


def depthwise_forward(x, w, strides, padding, dilations, *, method=None):
    """y = the depthwise convolution of ``x`` with ``w`` (see the module docstring)."""
    method = _check_method(method)
    kernel, (channels, multiplier) = w.shape[:-2], w.shape[-2:]
    pads = explicit_padding(padding, x.shape[1:-1], kernel, strides, dilations)
    if method == "xla":
        return _grouped(x, w, strides, pads, dilations)
    out_spatial = _output_spatial(x.shape[1:-1], kernel, strides, pads, dilations)
    if 0 in out_spatial or x.size == 0:
        return jnp.zeros((x.shape[0], *out_spatial, channels * multiplier), x.dtype)
    acc = _accumulation_dtype(x.dtype)
    xp, wa = _pad_spatial(x, pads).astype(acc), w.astype(acc)
    y = None
    for tap in itertools.product(*map(range, kernel)):
        window = _window(xp, tap, dilations, strides, out_spatial)
        term = window * wa[tap][:, 0] if multiplier == 1 else window[..., None] * wa[tap]
        y = term if y is None else y + term
    if multiplier > 1:
        y = y.reshape(y.shape[:-2] + (channels * multiplier,))
    return y.astype(x.dtype)


def depthwise_input_grad(dy, w, input_shape, strides, padding, dilations, *, method=None):
    """dx = the transpose of ``depthwise_forward`` in x applied to ``dy``; ``input_shape`` is x's."""
    method = _check_method(method)
    kernel, (channels, multiplier) = w.shape[:-2], w.shape[-2:]
    in_spatial = tuple(input_shape[1:-1])
    pads = explicit_padding(padding, in_spatial, kernel, strides, dilations)
    if method == "xla":
        _, pullback = jax.vjp(lambda x: _grouped(x, w, strides, pads, dilations), jnp.zeros(input_shape, dy.dtype))
        return pullback(dy)[0]
    out_spatial = dy.shape[1:-1]
    if dy.size == 0:
        return jnp.zeros(input_shape, dy.dtype)
    acc = _accumulation_dtype(dy.dtype)
    g = dy.astype(acc) if multiplier == 1 else dy.reshape(dy.shape[:-1] + (channels, multiplier)).astype(acc)
    phases, lengths, grad_pads = _input_phases(in_spatial, out_spatial, kernel, strides, pads, dilations)
    gp = _pad_spatial(g, grad_pads)
    wa = w.astype(acc)
    rank = len(kernel)
    sums = {}
    for phase in itertools.product(*map(range, strides)):
        total = None
        for taps in itertools.product(*(phases[axis][r] for axis, r in enumerate(phase))):
            start = [0] + [e + lo for (_, e), (lo, _) in zip(taps, grad_pads)] + [0] * (gp.ndim - 1 - rank)
            limit = [gp.shape[0]] + [b + m for b, m in zip(start[1:], lengths)] + list(gp.shape[1 + rank:])
            weight = wa[tuple(i for i, _ in taps)]
            window = lax.slice(gp, start, limit)
            term = window * weight[:, 0] if multiplier == 1 else jnp.sum(window * weight, axis=-1)
            total = term if total is None else total + term
        sums[phase] = jnp.zeros((dy.shape[0], *lengths, channels), acc) if total is None else total
    dx = _interleave(sums, strides)
    dx = lax.slice(dx, (0,) * dx.ndim, (dx.shape[0], *in_spatial, channels))
    return dx.astype(dy.dtype)


def _input_phases(in_spatial, out_spatial, kernel, strides, pads, dilations):
    """The input gradient by phases: x's index ``q = m*s + r`` along an axis of stride s gets
    ``dy[m + e] * w[i]`` from each tap i with ``(r + lo - i*d) % s == 0``, ``e = (r + lo - i*d) // s``
    (from ``o*s = q + lo - i*d``). Returns, per axis, each phase's list of (i, e); per axis the
    phases' length ``ceil(n / s)``; and the padding of dy that keeps every ``m + e`` in range."""
    phases, lengths, grad_pads = [], [], []
    for n, o, k, s, (lo, _), d in zip(in_spatial, out_spatial, kernel, strides, pads, dilations):
        per_phase = [[(i, (r + lo - i * d) // s) for i in range(k) if (r + lo - i * d) % s == 0] for r in range(s)]
        length = -(-n // s)
        offsets = [e for taps in per_phase for _, e in taps] or [0]
        phases.append(per_phase)
        lengths.append(length)
        grad_pads.append((max(0, -min(offsets)), max(0, length - 1 + max(offsets) - (o - 1))))
    return phases, lengths, grad_pads


def _interleave(sums, strides):
    """{phase: (batch, *lengths, channels)} as one (batch, *(lengths * strides), channels) array
    whose index ``m*s + r`` along each axis holds phase r's element m."""
    rank = len(strides)

    def merged(axis, prefix):
        if axis == rank:
            return sums[prefix]
        parts = [merged(axis + 1, prefix + (r,)) for r in range(strides[axis])]
        if len(parts) == 1:
            return parts[0]
        stacked = jnp.stack(parts, axis=2 + axis)
        shape = stacked.shape
        return stacked.reshape(shape[:1 + axis] + (shape[1 + axis] * shape[2 + axis],) + shape[3 + axis:])

    return merged(0, ())


def depthwise_filter_grad(x, dy, filter_shape, strides, padding, dilations, *, method=None):
    """dw = the transpose of ``depthwise_forward`` in w applied to ``dy``; ``filter_shape`` is w's."""
    method = _check_method(method)
    kernel, (channels, multiplier) = tuple(filter_shape[:-2]), tuple(filter_shape[-2:])
    pads = explicit_padding(padding, x.shape[1:-1], kernel, strides, dilations)
    if method == "xla":
        _, pullback = jax.vjp(lambda w: _grouped(x, w, strides, pads, dilations), jnp.zeros(filter_shape, dy.dtype))
        return pullback(dy)[0]
    out_spatial = dy.shape[1:-1]
    if dy.size == 0:
        return jnp.zeros(filter_shape, dy.dtype)
    acc = _accumulation_dtype(x.dtype)
    xp = _pad_spatial(x, pads).astype(acc)
    # dy in a buffer of its own: else XLA fuses its producer (in MobileNetV2 BatchNormalization's
    # backward pass, reading three full-size arrays) into the reduction and computes it there
    # again (MobileNetV2's train_on_batch 1.09x)
    g = materialize(dy).reshape(dy.shape[:-1] + (channels, multiplier)).astype(acc)
    rows = x.shape[0] * math.prod(out_spatial[:-1])
    group = _row_group(rows)
    products = []
    for tap in itertools.product(*map(range, kernel)):
        window = _window(xp, tap, dilations, strides, out_spatial)
        product = window * g[..., 0] if multiplier == 1 else window[..., None] * g
        products.append(product.reshape(rows // group, group, out_spatial[-1], channels * multiplier))
    # one variadic reduction for all taps: XLA fuses the padding, the windows and the products into
    # it and reads x and dy once (summed one by one, each tap's window would be a copy). It sums
    # over groups of ``group`` consecutive rows, the middle axis: over all rows at once (the
    # leading axis) XLA's loop was 3-5x slower on MobileNetV2's largest layers. On narrow inputs
    # it sums each group's columns too (MobileNetV2's 7 and 14 wide layers 1.2-1.9x)
    narrow = x.shape[-2] <= tuning.DEPTHWISE_FILTER_SUM_COLUMNS_WIDTH
    sums = lax.reduce(tuple(products), tuple(jnp.zeros((), acc) for _ in products),
                      lambda a, b: tuple(u + v for u, v in zip(a, b)), (1, 2) if narrow else (1,))
    per_tap = jnp.stack(sums).reshape(len(sums), -1, channels * multiplier)
    return jnp.sum(per_tap, axis=1).reshape(filter_shape).astype(dy.dtype)


def _row_group(rows):
    """How many consecutive rows (of batch * output rows) the filter gradient's fused reduction
    sums before the small second sum: the largest divisor of ``rows`` up to
    ``tuning.DEPTHWISE_FILTER_ROW_GROUP``."""
    return max(d for d in range(1, min(rows, tuning.DEPTHWISE_FILTER_ROW_GROUP) + 1) if rows % d == 0)
