"""Convolutions over 1 to 3 axes (groups, dilation, depthwise, separable, transposed, channels_first),
3-D and adaptive pooling, and PReLU: values and first and second derivatives against jax
formulas (``lax.conv_general_dilated``, ``lax.conv_transpose``, ``lax.reduce_window``), and
Keras 3's argument errors."""
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import rand
from jax import lax
from layer_reference import check_layer

import minikeras as mk
from minikeras.layers.convolutional.conv_transpose import transpose_padding

L = mk.layers
SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def conv_ref(rank, strides=1, padding="VALID", dilation=1, groups=1, channels_first=False):
    s = SPATIAL[rank]
    io = ("NC" + s, s + "IO", "NC" + s) if channels_first else ("N" + s + "C", s + "IO", "N" + s + "C")
    strides = (strides,) * rank if isinstance(strides, int) else strides
    dilation = (dilation,) * rank if isinstance(dilation, int) else dilation

    def fn(x, k, b=None):
        y = lax.conv_general_dilated(x, k, strides, padding, rhs_dilation=dilation, dimension_numbers=io,
                                     feature_group_count=groups)
        if b is None:
            return y
        return y + (b.reshape((-1,) + (1,) * rank) if channels_first else b)
    return fn


@pytest.mark.parametrize("make, fn, shape", [
    (lambda: L.Conv3D(4, 2, strides=(1, 2, 1), padding="same", groups=2),
     conv_ref(3, (1, 2, 1), "SAME", groups=2), (2, 3, 4, 3, 2)),
    (lambda: L.Conv3D(2, (2, 1, 2), dilation_rate=(2, 1, 1), data_format="channels_first"),
     conv_ref(3, dilation=(2, 1, 1), channels_first=True), (1, 3, 4, 3, 3)),
    (lambda: L.Conv2D(4, 3, groups=2, padding="same", data_format="channels_first"),
     conv_ref(2, padding="SAME", groups=2, channels_first=True), (2, 4, 5, 4)),
    (lambda: L.Conv2D(6, 2, groups=3, dilation_rate=2), conv_ref(2, dilation=2, groups=3), (2, 6, 5, 3)),
    (lambda: L.Conv1D(4, 3, strides=2, groups=2, data_format="channels_first"),
     conv_ref(1, strides=2, groups=2, channels_first=True), (2, 4, 9)),
    # one channel per group: run as a depthwise convolution (ConvNeXt's 7x7 Conv2D)
    (lambda: L.Conv2D(3, 7, padding="same", groups=3), conv_ref(2, padding="SAME", groups=3), (2, 8, 8, 3)),
    (lambda: L.Conv3D(4, 2, strides=(2, 1, 1), groups=2, data_format="channels_first"),
     conv_ref(3, (2, 1, 1), groups=2, channels_first=True), (1, 2, 5, 3, 4)),
], ids=["conv3d_groups", "conv3d_channels_first", "conv2d_groups_cf", "conv2d_groups_dilated", "conv1d_groups_cf",
        "conv2d_group_per_channel", "conv3d_group_per_channel_multiplier_2_cf"])
def test_convolutions_match_lax_to_second_order(make, fn, shape):
    check_layer(make(), fn, rand(*shape, seed=1))


def test_depthwise_and_separable_match_lax():
    x = rand(2, 5, 6, 3, seed=2)

    def depthwise(x, k, b):
        flat = k.reshape(k.shape[:2] + (1, -1))
        return conv_ref(2, strides=2, padding="SAME", groups=3)(x, flat, b)
    check_layer(L.DepthwiseConv2D(3, strides=2, depth_multiplier=2, padding="same"), depthwise, x)

    def separable(x, dk, pk, b):
        mid = conv_ref(2, dilation=2, groups=3)(x, dk.reshape(dk.shape[:2] + (1, -1)))
        return conv_ref(2)(mid, pk, b)
    check_layer(L.SeparableConv2D(4, 2, dilation_rate=2, depth_multiplier=2), separable, x)

    def depthwise1d(x, k):
        return conv_ref(1, channels_first=True, groups=3)(x, k.reshape((k.shape[0], 1, -1)))
    check_layer(L.DepthwiseConv1D(2, use_bias=False, data_format="channels_first"), depthwise1d, rand(2, 3, 6, seed=3))


@pytest.mark.parametrize("rank, strides, padding, output_padding, dilation", [
    (3, (2, 1, 2), "same", None, 1), (3, 1, "valid", None, (1, 2, 1)), (1, 3, "valid", 1, 1), (1, 2, "same", None, 1)])
def test_transposed_convolutions_match_lax_conv_transpose(rank, strides, padding, output_padding, dilation):
    layer = {1: L.Conv1DTranspose, 3: L.Conv3DTranspose}[rank](
        3, 2, strides=strides, padding=padding, output_padding=output_padding, dilation_rate=dilation)
    s = (strides,) * rank if isinstance(strides, int) else strides
    d = (dilation,) * rank if isinstance(dilation, int) else dilation
    op = (None,) * rank if output_padding is None else (output_padding,) * rank
    pads = [transpose_padding(2, s[i], d[i], padding, op[i]) for i in range(rank)]
    dims = ("N" + SPATIAL[rank] + "C", SPATIAL[rank] + "IO", "N" + SPATIAL[rank] + "C")

    def fn(x, k, b):  # Keras's formula on JAX
        return lax.conv_transpose(x, k, s, pads, rhs_dilation=d, dimension_numbers=dims, transpose_kernel=True) + b
    check_layer(layer, fn, rand(*((2,) + (3,) * rank + (2,)), seed=4))


def test_pooling_3d_and_adaptive_pooling_match_reduce_window():
    x = rand(2, 4, 5, 3, 2, seed=5)

    def max3d(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1, 1), (1, 1, 2, 1, 1), "VALID")
    check_layer(L.MaxPooling3D((2, 2, 1), strides=(1, 2, 1)), max3d, x)

    def avg3d_same(x):
        window, steps = (1, 2, 2, 2, 1), (1, 2, 2, 2, 1)
        sums = lax.reduce_window(x, 0.0, lax.add, window, steps, "SAME")
        return sums / lax.reduce_window(jnp.ones_like(x), 0.0, lax.add, window, steps, "SAME")
    check_layer(L.AveragePooling3D(2, padding="same"), avg3d_same, x)

    def adaptive(x):  # 5 -> 2 windows [0, 3), [2, 5) along axis 2; 4 -> 2: [0, 2), [2, 4) along axis 1
        rows = jnp.stack([x[:, 0:2].mean(1), x[:, 2:4].mean(1)], 1)
        return jnp.stack([rows[:, :, 0:3].mean(2), rows[:, :, 2:5].mean(2)], 2)
    check_layer(L.AdaptiveAveragePooling2D(2), adaptive, x[..., 0, :])


def test_prelu_matches_formula():
    x = rand(2, 3, 4, seed=6)
    layer = L.PReLU(alpha_initializer=mk.initializers.Constant(0.25), shared_axes=[1])
    check_layer(layer, lambda x, a: jnp.maximum(x, 0) - a * jnp.maximum(-x, 0), x)
    assert layer.alpha.shape == (1, 4)


def test_compiled_training_step_over_3d_and_depthwise_layers():
    model = mk.Sequential([mk.Input((4, 6, 6, 2)), L.Conv3D(4, 3, padding="same", groups=2, activation="relu"),
                           L.MaxPooling3D((1, 2, 2)), L.Reshape((4, 3, 12)),
                           L.DepthwiseConv2D(2, data_format="channels_first"),
                           L.GlobalAveragePooling2D(data_format="channels_first"), L.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = rand(8, 4, 6, 6, 2, seed=7), rand(8, 2, seed=8)
    history = model.fit(x, y, batch_size=4, epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    assert history.history["loss"][1] < history.history["loss"][0]


def test_keras_argument_errors():
    with pytest.raises(ValueError, match="Invalid value for argument `filters`. Expected a strictly positive value. "
                                         "Received filters=0."):
        L.Conv3D(0, 3)
    with pytest.raises(ValueError, match="The number of filters must be evenly divisible by the number of groups. "
                                         "Received: groups=3, filters=4."):
        L.Conv2D(4, 3, groups=3)
    with pytest.raises(ValueError, match="The number of input channels must be evenly divisible by the number of "
                                         "groups. Received groups=2, but the input has 3 channels"):
        L.Conv3D(4, 1, groups=2)(np.zeros((1, 2, 2, 2, 3), np.float32))
    with pytest.raises(ValueError, match=r"The `kernel_size` argument must be a tuple of 3 integers. Received "
                                         r"kernel_size=\(2, 2\)"):
        L.Conv3D(2, (2, 2))
    with pytest.raises(ValueError, match="`strides > 1` not supported in conjunction with `dilation_rate > 1`"):
        L.SeparableConv2D(2, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="Invalid value for argument `depth_multiplier`. Expected a strictly "
                                         "positive value. Received depth_multiplier=0."):
        L.DepthwiseConv2D(3, depth_multiplier=0)
    with pytest.raises(ValueError, match="`output_padding` must be strictly less than `strides`"):
        L.Conv3DTranspose(2, 3, strides=2, output_padding=2)
    with pytest.raises(ValueError, match="The `data_format` argument must be one of"):
        L.Conv1D(2, 3, data_format="channels_middle")
    with pytest.raises(ValueError, match="Computed output size would be zero or negative"):
        L.Conv3D(2, 3)(np.zeros((1, 2, 4, 4, 1), np.float32))
    with pytest.raises(ValueError, match="Computed output size would be zero or negative"):
        L.MaxPooling3D(3)(np.zeros((1, 2, 4, 4, 1), np.float32))
    with pytest.raises(TypeError, match=r"`output_size` must be an integer or \(height, width\) tuple"):
        L.AdaptiveMaxPooling2D((1, 2, 3))
    with pytest.raises(ValueError, match="expected ndim=5, found ndim=4"):
        L.GlobalMaxPooling3D()(np.zeros((1, 2, 2, 2), np.float32))
