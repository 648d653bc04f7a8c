"""ReLU, LeakyReLU, ELU, Softmax layers: jnp references to second order, Keras's defaults and errors."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import rand
from layer_reference import check_layer

import minikeras as mk

L = mk.layers
# away from the kinks (0, thresholds, caps), where the second derivative is defined
X = rand(3, 4, seed=1)
X = np.where(np.abs(X) < 0.05, 0.3, X).astype(np.float32)


def keras_relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    out = jnp.where(x >= max_value, max_value, x) if max_value is not None else x
    return jnp.where(x > threshold, out, negative_slope * (x - threshold))


@pytest.mark.parametrize("layer, fn", [
    (lambda: L.ReLU(), lambda x: jnp.maximum(x, 0)),
    (lambda: L.ReLU(max_value=0.8, negative_slope=0.1, threshold=0.2),
     lambda x: keras_relu(x, 0.1, 0.8, 0.2)),
    (lambda: L.ReLU(max_value=6.0), lambda x: jnp.clip(x, 0, 6)),
    (lambda: L.LeakyReLU(), lambda x: jnp.where(x > 0, x, 0.3 * x)),
    (lambda: L.LeakyReLU(negative_slope=0.1), lambda x: jnp.where(x > 0, x, 0.1 * x)),
    (lambda: L.ELU(), lambda x: jax.nn.elu(x)),
    (lambda: L.ELU(alpha=0.5), lambda x: jax.nn.elu(x, 0.5)),
    (lambda: L.Softmax(), lambda x: jax.nn.softmax(x, axis=-1)),
    (lambda: L.Softmax(axis=0), lambda x: jax.nn.softmax(x, axis=0)),
    (lambda: L.Softmax(axis=(0, 1)), lambda x: jax.nn.softmax(x, axis=(0, 1))),
], ids=["relu", "relu_options", "relu6", "leaky_relu", "leaky_relu_0.1", "elu", "elu_0.5", "softmax",
        "softmax_axis0", "softmax_axes"])
def test_matches_reference_to_second_order(layer, fn):
    out = check_layer(layer(), fn, X)
    assert out.shape == X.shape


def test_relu_options_avoid_kinks():
    x = np.array([[-1.0, 0.1, 0.5, 2.0]], np.float32)
    np.testing.assert_allclose(L.ReLU(max_value=0.8, negative_slope=0.1, threshold=0.2)(x),
                               [[-0.12, 0.1 * (0.1 - 0.2), 0.5, 0.8]], rtol=1e-6)


def test_softmax_mask_gives_zero_probability():
    x = rand(2, 4, seed=3)
    mask = np.array([[True, True, False, True], [False, False, False, False]])
    out = L.Softmax()(x, mask=mask).numpy()
    expected = np.where(mask, np.exp(x), 0)
    expected[0] /= expected[0].sum()
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="The `mask` must be broadcastable to `inputs`"):
        L.Softmax()(x, mask=np.ones((2, 3), bool))


def test_defaults_configs_and_errors():
    assert L.LeakyReLU().get_config()["negative_slope"] == 0.3
    assert L.LeakyReLU(alpha=0.1).negative_slope == 0.1
    assert {k: v for k, v in L.ReLU().get_config().items() if k in ("max_value", "negative_slope", "threshold")} \
        == {"max_value": None, "negative_slope": 0.0, "threshold": 0.0}
    assert L.ELU().get_config()["alpha"] == 1.0 and L.Softmax().get_config()["axis"] == -1
    with pytest.raises(ValueError, match="max_value of a ReLU layer cannot be a negative value. Received: "
                                         "max_value=-1"):
        L.ReLU(max_value=-1)
    with pytest.raises(ValueError, match="negative_slope of a ReLU layer cannot be None or a negative value"):
        L.ReLU(negative_slope=-1)
    with pytest.raises(ValueError, match="threshold of a ReLU layer cannot be None or a negative value"):
        L.ReLU(threshold=-1)
    with pytest.raises(ValueError, match="negative_slope value of a Leaky ReLU layer cannot be None or negative"):
        L.LeakyReLU(negative_slope=None)
    with pytest.raises(ValueError, match="axis 5 is out of bounds"):
        L.Softmax(axis=5)(np.zeros((1, 2), np.float32))
