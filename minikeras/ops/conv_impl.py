"""2-D convolution and its two VJPs, formulated for XLA:CPU's fast paths.

    conv2d_forward(x, w, strides, padding, dilations)                   -> y
    conv2d_input_grad(dy, w, input_shape, strides, padding, dilations)  -> dx
    conv2d_filter_grad(x, dy, filter_shape, strides, padding, dilations) -> dw

x and y are NHWC, w is HWIO; ``strides`` and ``dilations`` are 2-tuples (ints are accepted);
``padding`` is 'SAME', 'VALID' (TensorFlow semantics: SAME gives out = ceil(in / stride) with the
odd pad at the bottom/right) or explicit ((top, bottom), (left, right)). Each function is exactly
the math of ``lax.conv_general_dilated`` (resp. its transpose in x / in w), so any of the three
can serve as another's gradient rule; all shape logic is static, so they trace under ``jax.jit``.

On the CPU backend (checked at trace time) each picks a formulation by shape; elsewhere it is the
plain ``lax.conv_general_dilated`` and the transposes jax derives from it. ``method=`` forces one
formulation (for benchmarks and tests); see ``FORWARD_METHODS`` etc.

Why (measured with jax 0.10, XLA:CPU sending convolutions to YNNPACK):
  * a convolution whose padding is all zero runs 3-4x slower than the same convolution with any
    non-zero padding, so VALID convolutions get one extra zero row and the extra output row is
    sliced off (the slice fuses into the consumer);
  * the filter gradient as XLA writes it (a convolution with a 24x24 "kernel" and a 3x3 output)
    runs at a few percent of GEMM speed, and is catastrophic with padding; as im2col patches
    times dy (one GEMM contracting over batch*rows*cols) it runs near GEMM speed;
  * the strided input gradient (an lhs-dilated convolution) misses the fast path entirely;
    split by output phase it is s*s stride-1 convolutions that hit it;
  * with 1-4 input channels a convolution is a handful of multiply-adds per output, which XLA
    fuses into one elementwise loop faster than any convolution or GEMM call.
"""
import math

import jax
import jax.numpy as jnp
from jax import lax

DIMENSION_NUMBERS = ("NHWC", "HWIO", "NHWC")

FORWARD_METHODS = ("xla", "padded", "taps", "im2col", "s2d")
INPUT_GRAD_METHODS = ("xla", "padded", "d2s")
FILTER_GRAD_METHODS = ("xla", "im2col", "taps", "chunked")

# at most this many input channels make the fused multiply-add loop win (see module docstring)
_FEW_CHANNELS = 4


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
        out = -(-n // s)
        total = max((out - 1) * s + _effective(k, d) - n, 0)
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


# -- the building blocks ----------------------------------------------------------------------
def _pad_hw(x, pads, value=0.0):
    """Pads (or, for negative amounts, crops) the two spatial axes of an NHWC array."""
    (t, b), (l, r) = pads
    if t == b == l == r == 0:
        return x
    return lax.pad(x, jnp.asarray(value, x.dtype), ((0, 0, 0), (t, b, 0), (l, r, 0), (0, 0, 0)))


def _xla_conv(x, w, strides, pads, dilations):
    return lax.conv_general_dilated(x, w, strides, pads, rhs_dilation=dilations,
                                    dimension_numbers=DIMENSION_NUMBERS)


def _conv_fast(x, w, strides, pads, dilations):
    """``_xla_conv`` kept on the fast path: no negative and never all-zero padding."""
    if any(p < 0 for pair in pads for p in pair):
        crop = tuple((min(lo, 0), min(hi, 0)) for lo, hi in pads)
        x = _pad_hw(x, crop)
        pads = tuple((max(lo, 0), max(hi, 0)) for lo, hi in pads)
    out_hw = output_hw(x.shape[1:3], w.shape[:2], strides, pads, dilations)
    if any(p for pair in pads for p in pair):
        return _xla_conv(x, w, strides, pads, dilations)
    # a zero-padded extra row (its output row, if any, is dropped) switches YNNPACK's fast path on
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


def _multiply_add(xp, w, strides, dilations, out_hw):
    """sum over taps and input channels of window * w[i, j, c]: one fused elementwise loop."""
    kh, kw, c_in, _ = w.shape
    y = None
    for t, window in enumerate(_taps(xp, (kh, kw), strides, dilations, out_hw)):
        for c in range(c_in):
            term = window[..., c:c + 1] * w[t // kw, t % kw, c]
            y = term if y is None else y + term
    return y


# -- which formulation ------------------------------------------------------------------------
def formulation(kind, x_shape, w_shape, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    """The method ``conv2d_<kind>`` uses by default for these shapes on the current backend.

    ``kind`` is 'forward', 'input_grad' or 'filter_grad'; the result is one of that kind's
    ``*_METHODS``. Off CPU it is always 'xla'.
    """
    if not _on_cpu():
        return "xla"
    strides, pads, dilations = _normalize(x_shape, w_shape, strides, padding, dilations)
    c_in = x_shape[-1]
    if kind == "forward":
        return "taps" if c_in <= _FEW_CHANNELS else "padded"
    if kind == "input_grad":
        if strides != (1, 1) and (dilations != (1, 1) or any(p < 0 for pair in pads for p in pair)):
            return "xla"
        return "padded"
    if kind == "filter_grad":
        return "chunked"
    raise ValueError(f"kind must be 'forward', 'input_grad' or 'filter_grad', got {kind!r}")


# -- forward ----------------------------------------------------------------------------------
def conv2d_forward(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1), *, method=None):
    """y = conv(x, w): NHWC x HWIO -> NHWC, exactly ``lax.conv_general_dilated``'s result."""
    strides, pads, dilations = _normalize(x.shape, w.shape, strides, padding, dilations)
    out_hw = output_hw(x.shape[1:3], w.shape[:2], strides, pads, dilations)
    if method is None:
        method = formulation("forward", x.shape, w.shape, strides, pads, dilations)
    if min(out_hw) <= 0 or method == "xla":
        return _xla_conv(x, w, strides, pads, dilations)
    if method == "padded":
        return _conv_fast(x, w, strides, pads, dilations)
    xp = _pad_hw(x, pads)
    if method == "taps":
        if x.shape[-1] <= _FEW_CHANNELS:
            return _multiply_add(xp, w, strides, dilations, out_hw)
        kh, kw = w.shape[:2]
        y = None
        for t, window in enumerate(_taps(xp, (kh, kw), strides, dilations, out_hw)):
            term = jnp.einsum("nhwc,co->nhwo", window, w[t // kw, t % kw])
            y = term if y is None else y + term
        return y
    if method == "im2col":
        p = _patches(xp, w.shape[:2], strides, dilations, out_hw)
        y = p @ w.reshape(-1, w.shape[-1])
        return y.reshape(x.shape[0], *out_hw, w.shape[-1])
    if method == "s2d":
        return _forward_space_to_depth(xp, w, strides, dilations, out_hw)
    raise ValueError(f"unknown forward method {method!r}; one of {FORWARD_METHODS}")


def _forward_space_to_depth(xp, w, strides, dilations, out_hw):
    """A strided convolution as a stride-1 one on space-to-depth input.

    x_s2d[n, a, b, (rh, rw, c)] = xp[n, sh*a + rh, sw*b + rw, c] and
    w_s2d[qh, qw, (rh, rw, c), o] = w[sh*qh + rh, sw*qw + rw, c, o] (zero past the filter).
    """
    (sh, sw), (kh, kw, c, o) = strides, w.shape
    if dilations != (1, 1):
        return _conv_fast(xp, w, strides, ((0, 0), (0, 0)), dilations)
    qh, qw = -(-kh // sh), -(-kw // sw)
    n, ho, wo = xp.shape[0], *out_hw
    a, b = ho + qh - 1, wo + qw - 1
    xp = _pad_hw(xp, ((0, a * sh - xp.shape[1]), (0, b * sw - xp.shape[2])))
    xs = xp.reshape(n, a, sh, b, sw, c).transpose(0, 1, 3, 2, 4, 5).reshape(n, a, b, sh * sw * c)
    wp = jnp.pad(w, ((0, qh * sh - kh), (0, qw * sw - kw), (0, 0), (0, 0)))
    ws = wp.reshape(qh, sh, qw, sw, c, o).transpose(0, 2, 1, 3, 4, 5).reshape(qh, qw, sh * sw * c, o)
    return _conv_fast(xs, ws, (1, 1), ((0, 0), (0, 0)), (1, 1))


# -- input gradient ---------------------------------------------------------------------------
def _xla_input_grad(dy, w, input_shape, strides, pads, dilations):
    def forward(x):
        return _xla_conv(x, w, strides, pads, dilations)
    return jax.linear_transpose(forward, jax.ShapeDtypeStruct(tuple(input_shape), dy.dtype))(dy)[0]


def _flipped(w):
    """The filter of the transposed convolution: spatially reversed, I and O swapped."""
    return jnp.flip(w, (0, 1)).transpose(0, 1, 3, 2)


def _input_grad_stride1(dy, w, input_shape, pads, dilations):
    # dx[h] = sum_i dy[h + top - i*d] w[i]: a correlation of dy with the flipped filter
    in_hw, out_hw = input_shape[1:3], dy.shape[1:3]
    new_pads = tuple((_effective(k, d) - 1 - lo, n - m + lo)
                     for k, d, (lo, _), n, m in zip(w.shape[:2], dilations, pads, in_hw, out_hw))
    return _conv_fast(dy, _flipped(w), (1, 1), new_pads, dilations)



def _input_grad_phases(dy, w, input_shape, strides, pads):
    """Strided dx as s*s stride-1 correlations, one per phase of the padded input, interleaved.

    In padded coordinates u = s*a + r, dxp[u] = sum_q dy[a - q] w[s*q + r]: a full correlation of
    dy with the flipped sub-filter w[r::s].
    """
    (sh, sw), (kh, kw, c, _) = strides, w.shape
    n, ho, wo = dy.shape[:3]
    (pt, _), (pl, _) = pads
    a_len = -(-(pt + input_shape[1]) // sh)
    b_len = -(-(pl + input_shape[2]) // sw)
    rows = []
    for rh in range(sh):
        cols = []
        for rw in range(sw):
            sub = w[rh::sh, rw::sw]
            if sub.shape[0] == 0 or sub.shape[1] == 0:
                cols.append(jnp.zeros((n, a_len, b_len, c), dy.dtype))
                continue
            qh, qw = sub.shape[:2]
            sub_pads = ((qh - 1, a_len - ho), (qw - 1, b_len - wo))
            cols.append(_conv_fast(dy, _flipped(sub), (1, 1), sub_pads, (1, 1)))
        rows.append(jnp.stack(cols, axis=3))  # (N, A, B, sw, C)
    dxp = jnp.stack(rows, axis=2).reshape(n, a_len * sh, b_len * sw, c)  # (N, A, sh, B, sw, C)
    return dxp[:, pt:pt + input_shape[1], pl:pl + input_shape[2]]


def _input_grad_depth_to_space(dy, w, input_shape, strides, pads):
    """Strided dx as one stride-1 convolution producing all s*s phases as channels."""
    (sh, sw), (kh, kw, c, o) = strides, w.shape
    n, ho, wo = dy.shape[:3]
    (pt, _), (pl, _) = pads
    qh, qw = -(-kh // sh), -(-kw // sw)
    a_len = -(-(pt + input_shape[1]) // sh)
    b_len = -(-(pl + input_shape[2]) // sw)
    # wd[q', p', o, (rh, rw, c)] = w[s*(Q-1-q') + r, ...]: every phase's flipped sub-filter
    wp = jnp.pad(w, ((0, qh * sh - kh), (0, qw * sw - kw), (0, 0), (0, 0)))
    wd = wp.reshape(qh, sh, qw, sw, c, o)[::-1, :, ::-1].transpose(0, 2, 5, 1, 3, 4)
    wd = wd.reshape(qh, qw, o, sh * sw * c)
    d = _conv_fast(dy, wd, (1, 1), ((qh - 1, a_len - ho), (qw - 1, b_len - wo)), (1, 1))
    dxp = d.reshape(n, a_len, b_len, sh, sw, c).transpose(0, 1, 3, 2, 4, 5)
    dxp = dxp.reshape(n, a_len * sh, b_len * sw, c)
    return dxp[:, pt:pt + input_shape[1], pl:pl + input_shape[2]]


def conv2d_input_grad(dy, w, input_shape, strides=(1, 1), padding="VALID", dilations=(1, 1), *,
                      method=None):
    """dx: the transpose of ``conv2d_forward`` in x applied to ``dy`` (x has ``input_shape``)."""
    input_shape = tuple(input_shape)
    strides, pads, dilations = _normalize(input_shape, w.shape, strides, padding, dilations)
    if method is None:
        method = formulation("input_grad", input_shape, w.shape, strides, pads, dilations)
    if min(dy.shape[1:3]) <= 0 or method == "xla":
        return _xla_input_grad(dy, w, input_shape, strides, pads, dilations)
    if strides == (1, 1) and method in ("padded", "d2s"):
        return _input_grad_stride1(dy, w, input_shape, pads, dilations)
    if dilations != (1, 1) or any(p < 0 for pair in pads for p in pair):
        return _xla_input_grad(dy, w, input_shape, strides, pads, dilations)
    if method == "padded":
        return _input_grad_phases(dy, w, input_shape, strides, pads)
    if method == "d2s":
        return _input_grad_depth_to_space(dy, w, input_shape, strides, pads)
    raise ValueError(f"unknown input-gradient method {method!r}; one of {INPUT_GRAD_METHODS}")


# -- filter gradient --------------------------------------------------------------------------
def _xla_filter_grad(x, dy, filter_shape, strides, pads, dilations):
    def forward(w):
        return _xla_conv(x, w, strides, pads, dilations)
    return jax.linear_transpose(forward, jax.ShapeDtypeStruct(tuple(filter_shape), dy.dtype))(dy)[0]


_CONTRACT_ROWS = (((0,), (0,)), ((), ()))


def conv2d_filter_grad(x, dy, filter_shape, strides=(1, 1), padding="VALID", dilations=(1, 1), *,
                       method=None):
    """dw: the transpose of ``conv2d_forward`` in w applied to ``dy`` (w has ``filter_shape``)."""
    filter_shape = tuple(filter_shape)
    strides, pads, dilations = _normalize(x.shape, filter_shape, strides, padding, dilations)
    if method is None:
        method = formulation("filter_grad", x.shape, filter_shape, strides, pads, dilations)
    if min(dy.shape[1:3]) <= 0 or method == "xla":
        return _xla_filter_grad(x, dy, filter_shape, strides, pads, dilations)
    kh, kw, c, o = filter_shape
    out_hw = dy.shape[1:3]
    xp = _pad_hw(x, pads)
    if method == "im2col":
        p = _patches(xp, (kh, kw), strides, dilations, out_hw)
        dw = lax.dot_general(p, dy.reshape(-1, o), _CONTRACT_ROWS)
        return dw.reshape(filter_shape)
    if method == "taps":
        d = dy.reshape(-1, o)
        dws = [lax.dot_general(t.reshape(-1, c), d, _CONTRACT_ROWS)
               for t in _taps(xp, (kh, kw), strides, dilations, out_hw)]
        return jnp.stack(dws).reshape(filter_shape)
    if method == "chunked":
        return _filter_grad_chunked(xp, dy, filter_shape, strides, dilations)
    raise ValueError(f"unknown filter-gradient method {method!r}; one of {FILTER_GRAD_METHODS}")


# patches of one batch chunk stay about this small: the GEMM still runs well, the chunk stays in
# cache, and the program's temporaries stay small (large temporaries are fresh pages each call)
_CHUNK_BYTES = 3 << 20


def _batch_chunk(n, bytes_per_sample):
    """Samples per chunk: about ``_CHUNK_BYTES`` of patches, as even as possible over n."""
    chunks = -(-n // max(1, min(n, _CHUNK_BYTES // max(bytes_per_sample, 1))))
    return -(-n // chunks)


def _filter_grad_chunked(xp, dy, filter_shape, strides, dilations):
    """dw = sum over batch chunks of patches^T @ dy, the transposed patches built per chunk.

    x is transposed once to (chunks, C, B, H, W) so that each tap of a chunk is a plain strided
    copy and the taps stack along rows: patches^T (kh*kw*C, B*Ho*Wo) times dy (B*Ho*Wo, O) is a
    plain row-major GEMM (the orientation XLA:CPU runs fastest; contracting over rows of both
    operands runs ~1.5x slower).
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
    xt = xp.reshape(n // b, b, hp, wp, c).transpose(0, 4, 1, 2, 3)
    ds = dy.reshape(n // b, b * ho * wo, o)

    def body(acc, chunk):
        xb, db = chunk
        taps = [lax.slice(xb, (0, 0, i * dh, j * dw), (c, b, i * dh + (ho - 1) * sh + 1, j * dw + (wo - 1) * sw + 1),
                          (1, 1, sh, sw)) for i in range(kh) for j in range(kw)]
        pt = jnp.concatenate(taps, axis=0).reshape(kh * kw * c, b * ho * wo)
        return acc + pt @ db, None

    acc, _ = lax.scan(body, jnp.zeros((kh * kw * c, o), dy.dtype), (xt, ds))
    return acc.reshape(filter_shape)
