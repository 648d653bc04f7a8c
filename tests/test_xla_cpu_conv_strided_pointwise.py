"""Strided convolutions as stride-1 ones: a 1x1 filter (a ResNet's projection shortcut) on every
stride-th pixel, a larger one's gradients as one stride-1 gradient per input phase. Forward, input and
filter gradients and the bias+ReLU forward against ``lax.conv_general_dilated`` and its
``jax.vjp``, with odd sizes, unequal strides and SAME/VALID/explicit padding, on both of XLA:CPU's
convolution libraries; and no strided convolution is left in the program."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from minikeras.xla_cpu import conv

CASES = [((2, 8, 8, 16), (1, 1, 16, 32), (2, 2), "VALID"),
         ((2, 9, 7, 5), (1, 1, 5, 16), (2, 3), "SAME"),
         ((1, 5, 6, 32), (1, 1, 32, 16), (3, 2), "VALID"),
         ((2, 8, 8, 16), (3, 3, 16, 32), (2, 2), "SAME"),  # ResNet's downsampling 3x3
         ((2, 9, 7, 16), (3, 3, 16, 16), (2, 2), "SAME"),
         ((2, 11, 10, 8), (5, 4, 8, 16), (2, 3), "VALID"),
         ((1, 8, 9, 16), (2, 2, 16, 16), (2, 2), ((1, 0), (0, 1))),
         ((1, 12, 12, 32), (7, 7, 32, 16), (2, 2), "SAME")]


def reference(x, w, strides, padding):
    return lax.conv_general_dilated(x, w, strides, padding, dimension_numbers=conv.DIMENSION_NUMBERS,
                                    precision=lax.Precision.HIGHEST)


@pytest.mark.parametrize("eigen", [True, False])
@pytest.mark.parametrize("x_shape, w_shape, strides, padding", CASES)
def test_against_lax(x_shape, w_shape, strides, padding, eigen):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    b = rng.standard_normal(w_shape[-1]).astype(np.float32)
    y, vjp = jax.vjp(lambda x, w: reference(x, w, strides, padding), x, w)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    dx, dw = vjp(dy)

    @jax.jit
    def ours(x, w, b, dy):
        return (conv.conv2d_forward(x, w, strides, padding, eigen=eigen),
                conv.conv2d_bias_relu_forward(x, w, b, strides, padding, eigen=eigen),
                conv.conv2d_input_grad(dy, w, x.shape, strides, padding, eigen=eigen),
                conv.conv2d_filter_grad(x, dy, w.shape, strides, padding, eigen=eigen))

    got = ours(x, w, b, dy)
    for value, expected in zip(got, (y, np.maximum(y + b, 0), dx, dw)):
        # float32 sums in another order: the error scales with the sums' size, not each value's
        np.testing.assert_allclose(value, expected, rtol=1e-5, atol=2e-6 * np.abs(expected).max())
    pointwise = w_shape[:2] == (1, 1)  # its forward pass too; a larger filter's stays XLA's strided one

    def gradients(x, w, dy):
        return (conv.conv2d_input_grad(dy, w, x.shape, strides, padding, eigen=eigen),
                conv.conv2d_filter_grad(x, dy, w.shape, strides, padding, eigen=eigen))

    jaxpr = str(jax.make_jaxpr(ours)(x, w, b, dy) if pointwise else jax.make_jaxpr(gradients)(x, w, dy))
    assert f"window_strides={tuple(strides)}" not in jaxpr


def test_few_channels_keep_their_formulation():
    x, w = jnp.ones((1, 8, 8, 3)), jnp.ones((3, 3, 3, 16))
    jaxpr = str(jax.make_jaxpr(lambda x, w: conv.conv2d_input_grad(jnp.ones((1, 4, 4, 16)), w, x.shape, (2, 2),
                                                                   "SAME", eigen=True))(x, w))
    assert "conv_general_dilated" not in jaxpr or "window_strides=(1, 1)" not in jaxpr  # col2im, not phases
