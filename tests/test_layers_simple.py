"""Identity, Rescaling, Lambda, SpatialDropout2D."""
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import rand
from layer_reference import check_layer

import minikeras as mk

L = mk.layers
X = rand(2, 3, 3, 4, seed=1)


def test_identity_and_rescaling_to_second_order():
    check_layer(L.Identity(), lambda x: x, X)
    check_layer(L.Rescaling(0.5, offset=-1.0), lambda x: x * 0.5 - 1.0, X)
    check_layer(L.Rescaling([1.0, 2.0, 3.0, 4.0]), lambda x: x * jnp.array([1.0, 2.0, 3.0, 4.0]), X)


def test_rescaling_casts_integer_images_to_float():
    images = np.arange(12, dtype=np.uint8).reshape(1, 2, 2, 3)
    out = L.Rescaling(1 / 255)(images)
    assert out.dtype == mk.float32
    np.testing.assert_allclose(out, images / 255, rtol=1e-6)
    assert L.Rescaling(2.0).get_config()["offset"] == 0.0


def test_lambda():
    check_layer(L.Lambda(lambda x: mk.sin(x) * x), lambda x: jnp.sin(x) * x, X)
    layer = L.Lambda(lambda x, power: x ** power, arguments={"power": 3})
    np.testing.assert_allclose(layer(X), X ** 3, rtol=1e-6)
    assert layer.compute_output_shape((None, 3, 3, 4)) == (None, 3, 3, 4)
    assert L.Lambda(lambda x: x[:, 0], output_shape=(3, 4)).compute_output_shape((None, 3, 3, 4)) == (None, 3, 4)
    seen = {}
    L.Lambda(lambda x, training=None: seen.setdefault("training", training))(X, training=True)
    assert seen["training"] is True
    with pytest.raises(TypeError, match="`function` must be callable, received 3"):
        L.Lambda(3)


def test_spatial_dropout2d_drops_whole_channels():
    layer = L.SpatialDropout2D(0.5, seed=1)
    assert layer(X) is not None and np.array_equal(layer(X), X)  # inference: identity
    x = np.ones((4, 5, 5, 8), np.float32)
    out = layer(x, training=True).numpy()
    per_map = out.reshape(4, 25, 8)
    assert np.all(per_map.min(axis=1) == per_map.max(axis=1))  # each (example, channel) map is all 0 or all 2
    assert set(np.unique(out)) <= {0.0, 2.0} and 0 < (out == 0).mean() < 1
    xt = mk.constant(x)
    with mk.GradientTape() as tape:
        tape.watch(xt)
        y = layer(xt, training=True)
    np.testing.assert_array_equal(tape.gradient(y, xt), np.where(y.numpy() != 0, 2.0, 0.0))
    with pytest.raises(ValueError, match="Expected a float value between 0 and 1. Received: rate=1.5"):
        L.SpatialDropout2D(1.5)
