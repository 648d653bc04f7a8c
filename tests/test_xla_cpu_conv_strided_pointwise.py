"""Strided 1x1 convolutions (a ResNet's projection shortcuts) run as the stride-1 convolution of
every stride-th pixel: forward, input and filter gradients and the bias+ReLU forward against
``lax.conv_general_dilated`` and its ``jax.vjp``, with odd sizes and unequal strides, on both of
XLA:CPU's convolution libraries; and no strided convolution is left in the program."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from minikeras.xla_cpu import conv

CASES = [((2, 8, 8, 16), (1, 1, 16, 32), (2, 2), "VALID"),
         ((2, 9, 7, 5), (1, 1, 5, 16), (2, 3), "SAME"),
         ((1, 5, 6, 32), (1, 1, 32, 16), (3, 2), "VALID")]


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
        np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-5)
    jaxpr = str(jax.make_jaxpr(ours)(x, w, b, dy))
    assert f"window_strides={tuple(strides)}" not in jaxpr


def test_other_convolutions_keep_their_formulation():
    x, w = jnp.ones((1, 8, 8, 16)), jnp.ones((3, 3, 16, 16))
    jaxpr = str(jax.make_jaxpr(lambda x, w: conv.conv2d_forward(x, w, (2, 2), "SAME", eigen=True))(x, w))
    assert "window_strides=(2, 2)" in jaxpr  # a strided 3x3 convolution stays one
