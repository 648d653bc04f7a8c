"""``BaseConv.convolution_op``: Keras 3's hook for a custom convolution in Conv1D/2D/3D."""
import jax
import numpy as np
import pytest

import minikeras as mk
from minikeras.keras import layers, ops


def reference_conv(x, kernel, strides, padding, channels_first=False):
    """jax.lax's convolution: the value the hook must give."""
    spec = ("NCHW", "HWIO", "NCHW") if channels_first else ("NHWC", "HWIO", "NHWC")
    return np.asarray(jax.lax.conv_general_dilated(x, kernel, strides, padding, dimension_numbers=spec))


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_default_convolution_op_is_the_convolution_without_bias_or_activation(data_format):
    rng = np.random.default_rng(0)
    shape = (2, 7, 6, 3) if data_format == "channels_last" else (2, 3, 7, 6)
    x = rng.normal(size=shape).astype("float32")
    layer = layers.Conv2D(4, 3, strides=2, padding="same", activation="relu", data_format=data_format,
                          bias_initializer="ones")
    y = np.asarray(layer(x))
    kernel = rng.normal(size=(3, 3, 3, 4)).astype("float32")
    np.testing.assert_allclose(np.asarray(layer.convolution_op(x, kernel)),
                               reference_conv(x, kernel, (2, 2), "SAME", data_format == "channels_first"),
                               rtol=1e-5, atol=1e-5)
    linear = reference_conv(x, np.asarray(layer.kernel), (2, 2), "SAME", data_format == "channels_first")
    bias = np.ones((1, 4, 1, 1) if data_format == "channels_first" else (4,), "float32")
    np.testing.assert_allclose(y, np.maximum(linear + bias, 0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_an_overridden_convolution_op_is_what_call_convolves_then_bias_and_activation(data_format):
    class DoubledKernelConv2D(layers.Conv2D):
        def convolution_op(self, inputs, kernel):
            return super().convolution_op(inputs, 2.0 * kernel)

    rng = np.random.default_rng(1)
    shape = (2, 5, 5, 2) if data_format == "channels_last" else (2, 2, 5, 5)
    x = rng.normal(size=shape).astype("float32")
    layer = DoubledKernelConv2D(3, 3, activation="tanh", data_format=data_format,
                                bias_initializer="random_normal")
    y = np.asarray(layer(x))
    linear = reference_conv(x, 2.0 * np.asarray(layer.kernel), (1, 1), "VALID", data_format == "channels_first")
    bias = np.asarray(layer.bias).reshape((1, 3, 1, 1) if data_format == "channels_first" else (3,))
    np.testing.assert_allclose(y, np.tanh(linear + bias), rtol=1e-5, atol=1e-5)


def test_conv1d_convolution_op_and_gradient_through_an_override():
    class StandardizedConv1D(layers.Conv1D):
        def convolution_op(self, inputs, kernel):
            mean, var = ops.moments(kernel, axes=[0, 1], keepdims=True)
            return super().convolution_op(inputs, (kernel - mean) / ops.sqrt(var + 1e-10))

    x = np.random.default_rng(2).normal(size=(2, 9, 3)).astype("float32")
    layer = StandardizedConv1D(4, 3, use_bias=False)
    layer.build(x.shape)

    def standardized_output(kernel):
        kernel = (kernel - kernel.mean(axis=(0, 1), keepdims=True)) / jax.numpy.sqrt(
            kernel.var(axis=(0, 1), keepdims=True) + 1e-10)
        return jax.lax.conv_general_dilated(x, kernel, (1,), "VALID", dimension_numbers=("NWC", "WIO", "NWC"))

    kernel = np.asarray(layer.kernel)
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(mk.square(layer(x)))
    grad = tape.gradient(loss, layer.kernel)
    np.testing.assert_allclose(np.asarray(layer(x)), np.asarray(standardized_output(kernel)), rtol=1e-5, atol=1e-5)
    expected = jax.grad(lambda k: (standardized_output(k) ** 2).sum())(kernel)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(expected), rtol=1e-3, atol=1e-4)
