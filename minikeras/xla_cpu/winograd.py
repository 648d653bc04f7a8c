"""A 3x3 stride-1 convolution as Winograd's minimal filtering F(2x2, 3x3), in jax ops.

``forward(x, w, pads)`` equals ``lax.conv_general_dilated(x, w, (1, 1), pads)`` (NHWC x HWIO) up to
float32 rounding, with 16 multiplications per 2x2 output tile and input channel where the direct
convolution takes 36: the input is cut into overlapping 4x4 tiles (a stride of 2), each tile and
each 3x3 filter go through a fixed linear map into 16 "frequencies" (``B^T d B``, ``G g G^T``:
additions, subtractions and halvings only), the convolution becomes 16 independent matrix
products ``[tiles, C_in] @ [C_in, C_out]``, one per frequency, and a last linear map
(``A^T m A``) takes each tile's 16 products back to its 2x2 outputs (Lavin and Gray, "Fast
Algorithms for Convolutional Neural Networks", 2016; cuDNN's and oneDNN's Winograd
convolutions are this algorithm).

Where the channels are many, the 16 products are big GEMMs that run at XLA's GEMM speed, and the
transforms are elementwise passes that XLA fuses with the producer of ``x`` (a BatchNormalization
and ReLU) and with the consumer of the result: 2.25x fewer multiply-adds for a few memory passes.
With few channels the transforms' memory traffic outweighs the saving, so ``xla_cpu.conv`` takes
this formulation only where ``tuning.CONV_WINOGRAD_MIN_CHANNELS`` says (``benchmarks/winograd.py``).

F(2x2, 3x3) is the numerically mild member of the family: its transforms' coefficients are 0,
+-1 and +-1/2, so its results lie as near the exact convolution as a direct float32 convolution's
(about 1e-6 of the output's scale on ResNet50's layers; the tests bound them); larger tiles
(F(4x4, 3x3)) would save more multiplications but lose digits.
"""
import jax.numpy as jnp
from jax import lax

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


def forward(x, w, pads, transposed=False):
    """The convolution of ``x`` (N, H, W, C_in) with the 3x3 filter ``w`` (3, 3, C_in, C_out), stride
    1, ``pads`` ((top, bottom), (left, right)) each 0 to 2: (N, out_h, out_w, C_out).

    ``transposed``: ``w`` is (3, 3, C_out, C_in), the filter of a convolution whose input gradient
    this is, and the convolution runs with it spatially reversed and its channel axes swapped,
    without a transposed copy of it (the reversal reorders the filter transform's terms, the swap
    is the products' operand order)."""
    out_hw = tuple(x.shape[1 + i] + pads[i][0] + pads[i][1] - 2 for i in range(2))
    tiles_hw = tuple(-(-size // TILE) for size in out_hw)
    v = input_transform(x, pads, tiles_hw)
    u = filter_transform((w[::-1, ::-1] if transposed else w).astype(x.dtype))
    # one product per frequency, contracting the filter's C_out axis where it is transposed
    m = lax.dot_general(v, u, (((2,), (2 if transposed else 1,)), ((0,), (0,))))
    return output_transform(m, x.shape[0], tiles_hw, out_hw)
