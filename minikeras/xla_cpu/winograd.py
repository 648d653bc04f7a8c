"""A 3x3 stride-1 convolution as Winograd's minimal filtering F(2x2, 3x3): ``forward`` (which with
``transposed`` is also the input gradient) and ``filter_grad``.

``forward(x, w, pads)`` equals ``lax.conv_general_dilated(x, w, (1, 1), pads)`` (NHWC x HWIO) up to
float32 rounding, with 16 multiplications per 2x2 output tile and input channel where the direct
convolution takes 36: the input is cut into overlapping 4x4 tiles (a stride of 2), each tile and
each 3x3 filter go through a fixed linear map into 16 "frequencies" (``B^T d B``, ``G g G^T``:
additions, subtractions and halvings only), the convolution becomes 16 independent matrix
products ``[tiles, C_in] @ [C_in, C_out]``, one per frequency, and a last linear map
(``A^T m A``) takes each tile's 16 products back to its 2x2 outputs (Lavin and Gray, "Fast
Algorithms for Convolutional Neural Networks", 2016; cuDNN's and oneDNN's Winograd
convolutions are this algorithm).

On the CPU the native kernel (``winograd_native``) runs it block by block of tiles in the core's
cache; elsewhere (or where it does not apply) ``jax_forward`` writes it as jax ops: the 16 products
are batched GEMMs at XLA's GEMM speed and the transforms elementwise passes XLA fuses with the
producer of ``x`` (a BatchNormalization and ReLU) and the consumer of the result, whose memory
traffic outweighs the saving where the channels are few. ``filter_grad`` is the transpose of the
forward pass in the filter: the input and the output cotangent transformed, each frequency's
product summed over the tiles. ``xla_cpu.conv`` takes these where its ``winograd_applies`` says
(``tuning.CONV_WINOGRAD_*``, measured with ``benchmarks/winograd.py``).

F(2x2, 3x3) is the numerically mild member of the family: its transforms' coefficients are 0,
+-1 and +-1/2, so its results lie as near the exact convolution as a direct float32 convolution's
(about 1e-6 of the output's scale on ResNet50's layers; the tests bound them); larger tiles
(F(4x4, 3x3)) would save more multiplications but lose digits.
"""
import jax.numpy as jnp
from jax import lax

from minikeras.xla_cpu import tuning, winograd_native

TILE = 2  # outputs per tile side
WINDOW = 4  # inputs per tile side: TILE + 3 - 1


def applies(x_shape, w_shape, strides, pads, dilations):
    """Whether ``forward`` computes this convolution: a 3x3 filter, stride 1, no dilation, pads
    of 0 to 2 on each side (SAME, VALID, and the input gradient of either as a convolution), and
    at least one output."""
    return (tuple(w_shape[:2]) == (3, 3) and tuple(strides) == (1, 1) and tuple(dilations) == (1, 1)
            and all(0 <= p <= 2 for pair in pads for p in pair) and len(x_shape) == 4
            and all(x_shape[1 + i] + pads[i][0] + pads[i][1] - 2 >= 1 for i in range(2)))


def _input_frequencies(d0, d1, d2, d3):
    """``B^T [d0 d1 d2 d3]``: the input transform along one axis."""
    return d0 - d2, d1 + d2, d2 - d1, d1 - d3


def _filter_frequencies(g0, g1, g2):
    """``G [g0 g1 g2]``: the filter transform along one axis."""
    outer = g0 + g2
    return g0, 0.5 * (outer + g1), 0.5 * (outer - g1), g2


def _output_values(m0, m1, m2, m3):
    """``A^T [m0 m1 m2 m3]``: the output transform along one axis."""
    return m0 + m1 + m2, m1 - m2 - m3


def _filter_values(u0, u1, u2, u3):
    """``G^T [u0 u1 u2 u3]``: the filter transform's transpose along one axis."""
    middle = 0.5 * (u1 + u2)
    return u0 + middle, 0.5 * (u1 - u2), middle + u3


def _output_frequencies(y0, y1):
    """``A [y0 y1]``: the output transform's transpose along one axis."""
    return y0, y0 + y1, y0 - y1, -y1


def filter_transform(w):
    """(3, 3, C_in, C_out) -> (16, C_in, C_out): ``G g G^T`` for every filter."""
    rows = _filter_frequencies(w[0], w[1], w[2])  # 4 x (3, C_in, C_out)
    return jnp.stack([f for r in rows for f in _filter_frequencies(r[0], r[1], r[2])])


def input_transform(x, pads, tiles_hw):
    """(N, H, W, C) -> (16, N * tiles_h * tiles_w, C): ``B^T d B`` for every 4x4 input tile."""
    n, h, w, c = x.shape
    th, tw = tiles_hw
    # 2 * tiles + 2 rows and columns of padded input hold every tile (the last ones read zeros
    # past the convolution's own padding where the output size is odd)
    xp = jnp.pad(x, ((0, 0), (pads[0][0], 2 * th + 2 - h - pads[0][0]), (pads[1][0], 2 * tw + 2 - w - pads[1][0]),
                     (0, 0)))
    # tile i's rows are 2i .. 2i + 3: pairs i and i + 1 of the padded rows
    blocks = xp.reshape(n, th + 1, 2, tw + 1, 2, c)
    rows = _input_frequencies(blocks[:, :-1, 0], blocks[:, :-1, 1], blocks[:, 1:, 0], blocks[:, 1:, 1])
    frequencies = [f for r in rows  # r: (N, th, tw + 1, 2, C)
                   for f in _input_frequencies(r[:, :, :-1, 0], r[:, :, :-1, 1], r[:, :, 1:, 0], r[:, :, 1:, 1])]
    return jnp.stack(frequencies).reshape(WINDOW * WINDOW, n * th * tw, c)


def output_transform(m, batch, tiles_hw, out_hw):
    """(16, N * tiles_h * tiles_w, C_out) -> (N, out_h, out_w, C_out): ``A^T m A`` per tile."""
    th, tw = tiles_hw
    m = m.reshape(WINDOW, WINDOW, batch, th, tw, m.shape[-1])
    rows = _output_values(m[0], m[1], m[2], m[3])  # 2 x (4, N, th, tw, C)
    y = jnp.stack([jnp.stack(_output_values(r[0], r[1], r[2], r[3]), axis=3) for r in rows], axis=2)
    return y.reshape(batch, TILE * th, TILE * tw, m.shape[-1])[:, :out_hw[0], :out_hw[1]]


def output_transform_transposed(dy, tiles_hw):
    """(N, out_h, out_w, C) -> (16, N * tiles_h * tiles_w, C): ``A dy A^T`` for every 2x2 tile of
    ``dy`` (zeros past its edge), the transpose of ``output_transform``."""
    n, h, w, c = dy.shape
    th, tw = tiles_hw
    blocks = jnp.pad(dy, ((0, 0), (0, TILE * th - h), (0, TILE * tw - w), (0, 0))).reshape(n, th, TILE, tw, TILE, c)
    rows = _output_frequencies(blocks[:, :, 0], blocks[:, :, 1])  # 4 x (N, th, tw, 2, C)
    frequencies = [f for r in rows for f in _output_frequencies(r[:, :, :, 0], r[:, :, :, 1])]
    return jnp.stack(frequencies).reshape(WINDOW * WINDOW, n * th * tw, c)


def filter_transform_transposed(u):
    """(16, C_in, C_out) -> (3, 3, C_in, C_out): ``G^T u G``, the transpose of ``filter_transform``."""
    u = u.reshape(WINDOW, WINDOW, *u.shape[1:])
    rows = _filter_values(u[0], u[1], u[2], u[3])  # 3 x (4, C_in, C_out)
    return jnp.stack([jnp.stack(_filter_values(r[0], r[1], r[2], r[3])) for r in rows])


def filter_grad(x, dy, pads, product=None):
    """The filter gradient of ``forward(x, w, pads)`` for the output cotangent ``dy``: (3, 3, C_in,
    C_out), as the transpose of the forward pass in ``w``: the 16 products ``V_p^T dM_p``
    contracting the tiles, between the input transform and the transposed output and filter
    transforms. On the native kernel where it applies (``filter_grad_runs_natively``), else in
    jax ops, each frequency's product by ``product(a, b)`` (``a.T @ b`` for 2-D arrays; None:
    XLA's batched dot)."""
    if filter_grad_runs_natively(x.shape, dy.shape[3], x.dtype):
        return filter_transform_transposed(winograd_native.filter_grad(x, dy, pads))
    tiles_hw = tuple(-(-size // TILE) for size in dy.shape[1:3])
    v = input_transform(x, pads, tiles_hw)
    dm = output_transform_transposed(dy.astype(x.dtype), tiles_hw)
    if product is None:
        du = lax.dot_general(v, dm, (((1,), (1,)), ((0,), (0,))))
    else:
        du = jnp.stack([product(v[p], dm[p]) for p in range(WINDOW * WINDOW)])
    return filter_transform_transposed(du)


def forward(x, w, pads, transposed=False):
    """The convolution of ``x`` (N, H, W, C_in) with the 3x3 filter ``w`` (3, 3, C_in, C_out), stride
    1, ``pads`` ((top, bottom), (left, right)) each 0 to 2: (N, out_h, out_w, C_out).

    ``transposed``: ``w`` is (3, 3, C_out, C_in), the filter of a convolution whose input gradient
    this is, and the convolution runs with it spatially reversed and its channel axes swapped.

    On the native kernel (``winograd_native``) where it applies and ``tuning.WINOGRAD_NATIVE`` is
    on, else ``jax_forward``."""
    if runs_natively(x.shape, w.shape[2] if transposed else w.shape[3], x.dtype):
        if transposed:
            w = jnp.flip(w, (0, 1)).transpose(0, 1, 3, 2)
        return winograd_native.forward(x, filter_transform(w.astype(x.dtype)), pads, output_hw(x.shape, pads))
    return jax_forward(x, w, pads, transposed)


def runs_natively(x_shape, c_out, dtype):
    """Whether ``forward`` of an input of ``x_shape`` to ``c_out`` channels runs on the native kernel."""
    return tuning.WINOGRAD_NATIVE and winograd_native.supported(x_shape, c_out, dtype) and winograd_native.available()


def filter_grad_runs_natively(x_shape, c_out, dtype):
    """Whether ``filter_grad`` of an input of ``x_shape`` and ``c_out`` output channels runs on the
    native kernel: where ``forward`` would, up to ``tuning.WINOGRAD_NATIVE_FILTER_GRAD_MAX_CHANNELS``."""
    return (max(x_shape[3], c_out) <= tuning.WINOGRAD_NATIVE_FILTER_GRAD_MAX_CHANNELS
            and runs_natively(x_shape, c_out, dtype))


def output_hw(x_shape, pads):
    """The output's height and width for an input of ``x_shape`` (NHWC)."""
    return tuple(x_shape[1 + i] + pads[i][0] + pads[i][1] - 2 for i in range(2))


def jax_forward(x, w, pads, transposed=False):
    """``forward`` in jax ops: the transformed input and the products written out between XLA's
    fusions. With ``transposed`` the filter's reversal reorders the filter transform's terms and
    the channel swap is the products' operand order: no transposed copy of ``w``."""
    out_hw = output_hw(x.shape, pads)
    tiles_hw = tuple(-(-size // TILE) for size in out_hw)
    v = input_transform(x, pads, tiles_hw)
    u = filter_transform((w[::-1, ::-1] if transposed else w).astype(x.dtype))
    # one product per frequency, contracting the filter's C_out axis where it is transposed
    m = lax.dot_general(v, u, (((2,), (2 if transposed else 1,)), ((0,), (0,))))
    return output_transform(m, x.shape[0], tiles_hw, out_hw)
