"""UpSampling2D, ZeroPadding2D, Cropping2D, RepeatVector, Permute: NumPy/JAX references to
second order, output shapes and Keras's argument errors."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import rand
from layer_reference import check_layer

import minikeras as mk

L = mk.layers
X = rand(2, 3, 4, 2, seed=1)


@pytest.mark.parametrize("layer, fn", [
    (lambda: L.UpSampling2D((2, 3)), lambda x: jnp.repeat(jnp.repeat(x, 2, axis=1), 3, axis=2)),
    (lambda: L.UpSampling2D(2, interpolation="bilinear"),
     lambda x: jax.image.resize(x, (2, 6, 8, 2), method="bilinear")),
    (lambda: L.ZeroPadding2D(((1, 2), (0, 3))), lambda x: jnp.pad(x, ((0, 0), (1, 2), (0, 3), (0, 0)))),
    (lambda: L.ZeroPadding2D(), lambda x: jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))),
    (lambda: L.Cropping2D(((1, 0), (2, 1))), lambda x: x[:, 1:, 2:3]),
    (lambda: L.Cropping2D(1), lambda x: x[:, 1:2, 1:3]),
    (lambda: L.Permute((3, 1, 2)), lambda x: jnp.transpose(x, (0, 3, 1, 2))),
], ids=["up_nearest", "up_bilinear", "zero_padding", "zero_padding_default", "cropping", "cropping_int",
        "permute"])
def test_matches_reference_to_second_order(layer, fn):
    layer = layer()
    out = check_layer(layer, fn, X)
    assert out.shape[1:] == tuple(layer.compute_output_shape((None,) + X.shape[1:])[1:])


def test_repeat_vector():
    x = rand(2, 4, seed=2)
    layer = L.RepeatVector(3)
    out = check_layer(layer, lambda x: jnp.broadcast_to(x[:, None], (2, 3, 4)), x)
    assert out.shape == (2, 3, 4) and layer.compute_output_shape((None, 4)) == (None, 3, 4)


def test_argument_errors_are_keras_s():
    with pytest.raises(ValueError, match=r"`padding` should have two elements. Received: padding=\(1, 2, 3\)"):
        L.ZeroPadding2D((1, 2, 3))
    with pytest.raises(ValueError, match=r"`cropping` should have two elements. Received: cropping=\(1, 2, 3\)"):
        L.Cropping2D((1, 2, 3))
    with pytest.raises(ValueError, match="Values in `cropping` argument should be smaller than the corresponding "
                                         r"spatial dimension of the input. Received: inputs.shape=\(1, 5, 5, 1\)"):
        L.Cropping2D(((3, 3), (0, 0)))(np.zeros((1, 5, 5, 1), np.float32))
    with pytest.raises(ValueError, match="Argument `n` should be a positive integer. Received: n=0"):
        L.RepeatVector(0)
    with pytest.raises(TypeError, match="Expected an integer value for `n`"):
        L.RepeatVector(2.0)
    with pytest.raises(ValueError, match=r"must be consecutive and start from 1. Received dims=\(0, 1\)"):
        L.Permute((0, 1))
    with pytest.raises(ValueError, match="expects inputs of rank 3"):
        L.Permute((2, 1))(np.zeros((1, 2, 3, 4), np.float32))
    with pytest.raises(ValueError, match="Invalid value for argument `interpolation`. Expected of one") as error:
        L.UpSampling2D(interpolation="cubic")
    expected = "('bilinear', 'nearest', 'lanczos3', 'lanczos5', 'bicubic'). Received: interpolation=cubic"
    assert expected in str(error.value)
    with pytest.raises(ValueError, match="expected ndim=2, found ndim=3"):
        L.RepeatVector(2)(np.zeros((1, 2, 3), np.float32))
