"""MaxPooling1D, AveragePooling1D, GlobalAveragePooling1D: jax.lax references to second order."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import rand
from layer_reference import check_layer

import minikeras as mk

L = mk.layers
X = rand(2, 7, 3, seed=1)  # distinct values: the max of each window is unique


def max_ref(k, s, padding):
    return lambda x: jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, k, 1), (1, s, 1), padding.upper())


def avg_ref(k, s, padding):
    def fn(x):
        sums = jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, k, 1), (1, s, 1), padding.upper())
        counts = jax.lax.reduce_window(jnp.ones_like(x), 0.0, jax.lax.add, (1, k, 1), (1, s, 1), padding.upper())
        return sums / counts
    return fn


@pytest.mark.parametrize("k, s, padding", [(2, None, "valid"), (3, 2, "same"), (3, 1, "valid")])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pooling1d_matches_reduce_window(kind, k, s, padding):
    cls, ref = (L.MaxPooling1D, max_ref) if kind == "max" else (L.AveragePooling1D, avg_ref)
    layer = cls(k, s, padding=padding)
    out = check_layer(layer, ref(k, s or k, padding), X)
    assert out.shape == layer.compute_output_shape(X.shape)


def test_global_average_pooling1d():
    out = check_layer(L.GlobalAveragePooling1D(), lambda x: jnp.mean(x, axis=1), X)
    assert out.shape == (2, 3)
    assert L.GlobalAveragePooling1D(keepdims=True)(X).shape == (2, 1, 3)
    mask = np.array([[1, 1, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1]], bool)
    np.testing.assert_allclose(L.GlobalAveragePooling1D()(X, mask=mask),
                               [X[0, :2].mean(0), X[1].mean(0)], rtol=1e-6)


def test_defaults_aliases_and_errors():
    config = L.MaxPooling1D().get_config()
    assert (config["pool_size"], config["strides"], config["padding"]) == ((2,), (2,), "valid")
    assert L.MaxPool1D is L.MaxPooling1D and L.AvgPool1D is L.AveragePooling1D
    assert L.GlobalAvgPool1D is L.GlobalAveragePooling1D
    with pytest.raises(ValueError, match="`padding` must be either 'valid' or 'same'. Received: padding=full"):
        L.MaxPooling1D(padding="full")
    with pytest.raises(ValueError, match="expected ndim=3, found ndim=4"):
        L.AveragePooling1D()(np.zeros((1, 2, 3, 4), np.float32))
    with pytest.raises(ValueError, match=r"Computed output size would be zero or negative. Received: "
                                         r"`inputs.shape=\(1, 3, 2\)`"):
        L.MaxPooling1D(4)(np.zeros((1, 3, 2), np.float32))
