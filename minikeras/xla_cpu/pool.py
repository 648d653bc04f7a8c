"""2-D max and average pooling (NHWC, TensorFlow arguments) and their gradients, fast on XLA:CPU.

    max_pool2d_forward(x, ksize, strides, padding)                  -> y
    max_pool2d_grad(x, dy, ksize, strides, padding, y=None)          -> dx
    max_pool2d_grad_grad(x, g, ksize, strides, padding, y=None)      -> dy-shaped
    avg_pool2d_forward(x, ksize, strides, padding)                  -> y
    avg_pool2d_grad(dy, input_shape, ksize, strides, padding)        -> dx

``ksize`` and ``strides`` are (height, width) pairs (ints are accepted); ``padding`` is 'SAME',
'VALID' or ((top, bottom), (left, right)). Max pooling pads with -inf; average pooling divides by
the number of in-bounds elements of each window (TensorFlow's SAME semantics).

Max-pool gradient semantics: each window sends its whole cotangent to ONE element, the first
maximum in row-major window order -- what XLA's select_and_scatter (select = ``>=``), hence
``jax.vjp`` of ``lax.reduce_window`` max, does; it matches jax exactly, ties included (tested).
``max_pool2d_grad_grad`` is the exact transpose of that linear map (the forward's JVP), so the
three serve as each other's gradient rules. (jax's own JVP of reduce_window max can pick another
of several tied maxima than its VJP does, so with ties it is not the transpose of jax's VJP.)
NaN inputs are not given XLA's exact (order-dependent) treatment.

Why: the forwards are ``lax.reduce_window`` (fast on XLA:CPU, and when fused with a preceding
bias/relu it beats a hand-written max of window taps, whose fused loop stops vectorizing); the
max-pool gradient is not: jax's select_and_scatter runs many times slower on CPU than the
elementwise form here (``benchmarks/pool_dropout.py``). When windows tile the input
(ksize == strides) the gradient is a reshape plus one fused pass that finds each window's first
maximum with a running maximum over its taps, elementwise (a reduce over the window axes is
slower, and comparing each tap with the forward's maxima reads the input once per tap); for
bfloat16 and float16, whose taps are widened to compare, each window's index is first written
once, in bytes, and the pass over dx reads it (XLA:CPU otherwise widens and compares the window
again for every element of dx); overlapping windows
use one strided slice per window tap and scatter back with interior-padded adds, which XLA also
fuses into one loop.
"""
import jax.numpy as jnp
import numpy as np
from jax import lax

from minikeras.xla_cpu.low_precision import keep_where
from minikeras.xla_cpu.materialize import materialize


def _pair(v):
    return (int(v), int(v)) if isinstance(v, int) else (int(v[0]), int(v[1]))


def _geometry(in_hw, ksize, strides, padding):
    """(ksize, strides, explicit pads, output hw), all static."""
    ksize, strides = _pair(ksize), _pair(strides)
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            pads = ((0, 0), (0, 0))
        elif mode == "SAME":
            pads = []
            for n, k, s in zip(in_hw, ksize, strides):
                total = max((-(-n // s) - 1) * s + k - n, 0)
                pads.append((total // 2, total - total // 2))
            pads = tuple(pads)
        else:
            raise ValueError(f"padding must be 'SAME', 'VALID' or explicit pairs, got {padding!r}")
    else:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    out_hw = tuple((n + lo + hi - k) // s + 1 for n, (lo, hi), k, s in zip(in_hw, pads, ksize, strides))
    return ksize, strides, pads, out_hw


def _tiles(ksize, strides):
    return ksize == strides


def _to_tiles(x, pads, ksize, out_hw, value):
    """Pads/crops x to exactly out*k rows and cols and views it as (N, Ho, kh, Wo, kw, C)."""
    (kh, kw), (ho, wo) = ksize, out_hw
    (t, _), (l, _) = pads
    n, h, w, c = x.shape
    cfg = ((0, 0, 0), (t, ho * kh - h - t, 0), (l, wo * kw - w - l, 0), (0, 0, 0))
    return lax.pad(x, jnp.asarray(value, x.dtype), cfg).reshape(n, ho, kh, wo, kw, c)


def _tile_taps(x6):
    """The kh*kw window positions of a tiled view, each (N, Ho, 1, Wo, 1, C), row-major."""
    kh, kw = x6.shape[2], x6.shape[4]
    return [x6[:, :, a:a + 1, :, b:b + 1] for a in range(kh) for b in range(kw)]


def _comparable(x):
    """``x`` for finding maxima: bfloat16 and float16 widened to float32 first (exact, same order
    and ties). XLA:CPU computes narrow floats in float32 anyway, and where the widening is left
    to it, it converts each window tap apart and runs several times slower."""
    return x.astype(jnp.float32) if x.dtype in (jnp.bfloat16, jnp.float16) else x


def _first_max_index(taps):
    """Per window, the row-major index of its first maximum: a running maximum over the taps
    (strict ``>``, so the first of tied maxima stays), elementwise so that it fuses into its
    consumer as one pass over the input. (Comparing each tap with the window maxima instead
    reads the input once per tap and, under bfloat16, materialises each tap's conversion.)"""
    best, first = taps[0], np.int32(0)  # a NumPy scalar: no constant array is made while tracing
    for t in range(1, len(taps)):
        better = taps[t] > best
        best = jnp.where(better, taps[t], best)
        first = jnp.where(better, np.int32(t), first)
    return first


def _tile_order(kh, kw):
    return np.arange(kh * kw, dtype=np.int32).reshape(1, 1, kh, 1, kw, 1)  # NumPy: a constant, nothing to compile


def _from_tiles(t6, in_shape, pads):
    """The inverse of ``_to_tiles`` for a gradient: crop the pad, zero-fill what was cropped."""
    n, ho, kh, wo, kw, c = t6.shape
    (t, _), (l, _) = pads
    cfg = ((0, 0, 0), (-t, in_shape[1] + t - ho * kh, 0), (-l, in_shape[2] + l - wo * kw, 0), (0, 0, 0))
    return lax.pad(t6.reshape(n, ho * kh, wo * kw, c), jnp.zeros((), t6.dtype), cfg)


def _window_taps(xp, ksize, strides, out_hw):
    (kh, kw), (sh, sw), (ho, wo) = ksize, strides, out_hw
    n, _, _, c = xp.shape
    return [lax.slice(xp, (0, i, j, 0), (n, i + (ho - 1) * sh + 1, j + (wo - 1) * sw + 1, c), (1, sh, sw, 1))
            for i in range(kh) for j in range(kw)]


def _scatter_taps(parts, padded_hw, ksize, strides, out_hw):
    """Adds each tap's (N, Ho, Wo, C) contribution back at its window offset in the padded input."""
    (_, kw), (sh, sw), (ho, wo) = ksize, strides, out_hw
    total = None
    for t, part in enumerate(parts):
        i, j = divmod(t, kw)
        cfg = ((0, 0, 0),
               (i, padded_hw[0] - i - (ho - 1) * sh - 1, sh - 1),
               (j, padded_hw[1] - j - (wo - 1) * sw - 1, sw - 1),
               (0, 0, 0))
        placed = lax.pad(part, jnp.zeros((), part.dtype), cfg)
        total = placed if total is None else total + placed
    return total


def _lowest(dtype):
    return -jnp.inf if jnp.issubdtype(dtype, jnp.floating) else jnp.iinfo(dtype).min


# -- max pooling ------------------------------------------------------------------------------
def _reduce_window(x, init, op, ksize, strides, pads):
    # a Python scalar init, so that jax recognises the monoid and can differentiate it too
    init = float(init) if jnp.issubdtype(x.dtype, jnp.floating) else int(init)
    return lax.reduce_window(x, init, op, (1, *ksize, 1), (1, *strides, 1), ((0, 0), *pads, (0, 0)))


def max_pool2d_forward(x, ksize, strides, padding):
    """Window maxima of an NHWC array (padding counts as -inf)."""
    # reduce_window itself is fast; a hand-written max of window taps only wins standalone, and
    # when XLA fuses it with its neighbours (bias, relu, dropout) that loop stops vectorizing
    ksize, strides, pads, _ = _geometry(x.shape[1:3], ksize, strides, padding)
    return _reduce_window(x, _lowest(x.dtype), lax.max, ksize, strides, pads)


def _first_max_masks(taps, y):
    """For each tap (in window order), where it is the window's first maximum."""
    masks, taken = [], None
    for tap in taps:
        hit = tap == y
        if taken is None:
            masks.append(hit)
            taken = hit
        else:
            masks.append(hit & ~taken)
            taken = taken | hit
    return masks


def max_pool2d_grad(x, dy, ksize, strides, padding, y=None):
    """dx: each window's ``dy`` goes to its first maximum in ``x``; ``y`` (the forward output)
    saves recomputing it where windows overlap (tiling windows do not need it)."""
    ksize_, strides_, pads, out_hw = _geometry(x.shape[1:3], ksize, strides, padding)
    if _tiles(ksize_, strides_):
        first = _first_max_index(_tile_taps(_to_tiles(_comparable(x), pads, ksize_, out_hw, _lowest(x.dtype))))
        order = _tile_order(*ksize_)
        if x.dtype in (jnp.bfloat16, jnp.float16):
            # each window's index once, in bytes, rather than the widened running maximum again
            # for every element of dx (which XLA:CPU fuses in for float32 at no loss)
            index_dtype = np.int8 if order.size <= 127 else np.int32
            first, order = materialize(first.astype(index_dtype)), order.astype(index_dtype)
        dy = materialize(dy)  # the loop below reads each dy kh*kw times: compute it (a dropout's, say) once
        dx6 = keep_where(order == first, dy[:, :, None, :, None, :])
        return _from_tiles(dx6, x.shape, pads)
    if y is None:
        y = max_pool2d_forward(x, ksize, strides, padding)
    xp = lax.pad(x, jnp.asarray(_lowest(x.dtype), x.dtype), ((0, 0, 0), pads[0] + (0,), pads[1] + (0,), (0, 0, 0)))
    masks = _first_max_masks(_window_taps(xp, ksize_, strides_, out_hw), y)
    zero = jnp.zeros((), dy.dtype)
    dxp = _scatter_taps([jnp.where(m, dy, zero) for m in masks], xp.shape[1:3], ksize_, strides_, out_hw)
    (t, b), (l, r) = pads
    return dxp[:, t:t + x.shape[1], l:l + x.shape[2]]


def max_pool2d_grad_grad(x, g, ksize, strides, padding, y=None):
    """The transpose of ``max_pool2d_grad`` in ``dy`` (the forward's JVP): ``g`` (shaped like x)
    read at each window's first maximum."""
    ksize_, strides_, pads, out_hw = _geometry(x.shape[1:3], ksize, strides, padding)
    zero = jnp.zeros((), g.dtype)
    if _tiles(ksize_, strides_):
        first = _first_max_index(_tile_taps(_to_tiles(_comparable(x), pads, ksize_, out_hw, _lowest(x.dtype))))
        out = None
        for t, tap in enumerate(_tile_taps(_to_tiles(g, pads, ksize_, out_hw, 0))):
            term = jnp.where(first == t, tap, zero)
            out = term if out is None else out + term
        return out[:, :, 0, :, 0]
    if y is None:
        y = max_pool2d_forward(x, ksize, strides, padding)
    cfg = ((0, 0, 0), pads[0] + (0,), pads[1] + (0,), (0, 0, 0))
    xp = lax.pad(x, jnp.asarray(_lowest(x.dtype), x.dtype), cfg)
    gp = lax.pad(g, zero, cfg)
    masks = _first_max_masks(_window_taps(xp, ksize_, strides_, out_hw), y)
    out = None
    for m, tap in zip(masks, _window_taps(gp, ksize_, strides_, out_hw)):
        term = jnp.where(m, tap, zero)
        out = term if out is None else out + term
    return out


# -- average pooling --------------------------------------------------------------------------
def _window_counts(in_hw, ksize, strides, pads, out_hw, dtype):
    """(1, Ho, Wo, 1) in-bounds element counts per window: a constant (shapes are static)."""
    counts = []
    for n, k, s, (lo, _), o in zip(in_hw, ksize, strides, pads, out_hw):
        start = np.arange(o) * s - lo
        counts.append(np.minimum(start + k, n) - np.maximum(start, 0))
    return jnp.asarray(np.outer(counts[0], counts[1])[None, :, :, None], dtype)


def avg_pool2d_forward(x, ksize, strides, padding):
    """Window means over the in-bounds elements (TensorFlow semantics)."""
    ksize, strides, pads, out_hw = _geometry(x.shape[1:3], ksize, strides, padding)
    counts = _window_counts(x.shape[1:3], ksize, strides, pads, out_hw, x.dtype)
    return _reduce_window(x, 0, lax.add, ksize, strides, pads) / counts


def avg_pool2d_grad(dy, input_shape, ksize, strides, padding):
    """dx: each window's ``dy`` / count spread evenly over its in-bounds elements."""
    input_shape = tuple(input_shape)
    ksize, strides, pads, out_hw = _geometry(input_shape[1:3], ksize, strides, padding)
    share = dy / _window_counts(input_shape[1:3], ksize, strides, pads, out_hw, dy.dtype)
    if _tiles(ksize, strides):
        n, ho, wo, c = share.shape
        t6 = jnp.broadcast_to(share[:, :, None, :, None, :], (n, ho, ksize[0], wo, ksize[1], c))
        return _from_tiles(t6, input_shape, pads)
    padded_hw = (input_shape[1] + sum(pads[0]), input_shape[2] + sum(pads[1]))
    dxp = _scatter_taps([share] * (ksize[0] * ksize[1]), padded_hw, ksize, strides, out_hw)
    (t, _), (l, _) = pads
    return dxp[:, t:t + input_shape[1], l:l + input_shape[2]]
