"""Conv2DTranspose and Conv1D against jax.lax references, to second order; shapes and errors."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import rand
from layer_reference import check_layer

import minikeras as mk
from minikeras.layers.convolutional.conv_transpose import transpose_padding

L = mk.layers


def conv_transpose_ref(kernel_size, strides, padding, output_padding=None, dilation=(1, 1)):
    pads = [transpose_padding(k, s, d, padding, None if output_padding is None else p)
            for k, s, d, p in zip(kernel_size, strides, dilation, output_padding or (None, None))]

    def fn(x, kernel, bias):
        y = jax.lax.conv_transpose(x, kernel, strides, pads, rhs_dilation=dilation,
                                   dimension_numbers=("NHWC", "HWIO", "NHWC"), transpose_kernel=True)
        return y + bias
    return fn


@pytest.mark.parametrize("args", [
    dict(kernel_size=(3, 3), strides=(2, 2), padding="same"),
    dict(kernel_size=(2, 3), strides=(3, 2), padding="valid"),
    dict(kernel_size=(3, 3), strides=(2, 2), padding="same", output_padding=(1, 0)),
    dict(kernel_size=(3, 2), strides=(1, 1), padding="same", dilation=(2, 2)),
])
def test_conv2d_transpose_matches_lax_conv_transpose(args):
    layer = L.Conv2DTranspose(2, args["kernel_size"], strides=args["strides"], padding=args["padding"],
                              output_padding=args.get("output_padding"), dilation_rate=args.get("dilation", (1, 1)),
                              bias_initializer="glorot_uniform")
    x = rand(2, 4, 3, 3, seed=1)
    out = check_layer(layer, conv_transpose_ref(**args), x)
    assert out.shape[1:] == layer.compute_output_shape((None, 4, 3, 3))[1:]


def test_conv2d_transpose_shapes_weights_and_errors():
    layer = L.Conv2DTranspose(8, 3, strides=2, padding="same")
    assert layer(np.ones((1, 7, 7, 4), np.float32)).shape == (1, 14, 14, 8)
    assert [(w.path, w.shape) for w in layer.weights] == [(f"{layer.name}/kernel", (3, 3, 8, 4)),
                                                          (f"{layer.name}/bias", (8,))]
    assert L.Conv2DTranspose(2, 2, strides=3)(np.ones((1, 4, 4, 1), np.float32)).shape == (1, 12, 12, 2)
    assert L.Convolution2DTranspose is L.Conv2DTranspose
    with pytest.raises(ValueError, match="Expected a strictly positive value. Received filters=0"):
        L.Conv2DTranspose(0, 3)
    with pytest.raises(ValueError, match="`output_padding` is 2 but `strides` is 2"):
        L.Conv2DTranspose(3, 2, strides=2, output_padding=2)
    with pytest.raises(ValueError, match="`strides > 1` not supported in conjunction with `dilation_rate > 1`"):
        L.Conv2DTranspose(3, 2, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        L.Conv2DTranspose(3, 2)(np.ones((1, 4, 4), np.float32))
    with pytest.raises(ValueError, match="expects inputs with 4 channels"):
        layer(np.ones((1, 7, 7, 3), np.float32))


def conv1d_ref(padding, strides=1, dilation=1, groups=1, kernel_size=3):
    def fn(x, kernel, bias):
        pad = [((kernel_size - 1) * dilation, 0)] if padding == "causal" else padding.upper()
        y = jax.lax.conv_general_dilated(x, kernel, (strides,), pad, rhs_dilation=(dilation,),
                                         dimension_numbers=("NWC", "WIO", "NWC"), feature_group_count=groups)
        return jnp.tanh(y + bias)
    return fn


@pytest.mark.parametrize("args", [
    dict(padding="valid"), dict(padding="same", strides=2), dict(padding="causal", dilation=2),
    dict(padding="valid", groups=2),
])
def test_conv1d_matches_lax_conv(args):
    layer = L.Conv1D(4, 3, strides=args.get("strides", 1), padding=args["padding"],
                     dilation_rate=args.get("dilation", 1), groups=args.get("groups", 1), activation="tanh",
                     bias_initializer="glorot_uniform")
    x = rand(2, 7, 4, seed=2)
    out = check_layer(layer, conv1d_ref(**args), x)
    assert out.shape[1:] == layer.compute_output_shape((None, 7, 4))[1:]


def test_conv1d_shapes_weights_and_errors():
    layer = L.Conv1D(8, 3, padding="causal")
    assert layer(np.ones((2, 10, 4), np.float32)).shape == (2, 10, 8)
    assert [w.shape for w in layer.weights] == [(3, 4, 8), (8,)]
    assert L.Conv1D(4, 3, groups=2)(np.ones((1, 5, 6), np.float32)).shape == (1, 3, 4)
    assert L.Convolution1D is L.Conv1D
    with pytest.raises(ValueError, match="one of {'same', 'causal', 'valid'}. Received: full"):
        L.Conv1D(3, 2, padding="full")
    with pytest.raises(ValueError, match="expected ndim=3, found ndim=2"):
        L.Conv1D(3, 2)(np.ones((1, 5), np.float32))
    with pytest.raises(ValueError, match="evenly divisible by the number of groups"):
        L.Conv1D(3, 2, groups=2)
    with pytest.raises(ValueError, match="input channels must be evenly divisible"):
        L.Conv1D(4, 2, groups=2)(np.ones((1, 5, 3), np.float32))
