"""Activations: values against NumPy formulas (Keras 3's), gradients against JAX, look-up by name."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special
from conftest import assert_close, check_grad, rand

import minikeras as mk
from minikeras import activations

X = np.array([[-3.0, -1.0, -0.5, 0.0], [0.25, 1.0, 2.5, 7.0]], np.float32)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


NUMPY = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "leaky_relu": lambda x: np.where(x > 0, x, 0.2 * x),
    "elu": lambda x: np.where(x > 0, x, np.exp(x) - 1),
    "selu": lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * (np.exp(x) - 1)),
    "sigmoid": _sigmoid,
    "tanh": np.tanh,
    "softplus": lambda x: np.log1p(np.exp(x)),
    "softsign": lambda x: x / (np.abs(x) + 1),
    "silu": lambda x: x * _sigmoid(x),
    "swish": lambda x: x * _sigmoid(x),
    "gelu": lambda x: 0.5 * x * (1 + scipy.special.erf(x / np.sqrt(2))),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "mish": lambda x: x * np.tanh(np.log1p(np.exp(x))),
    "exponential": np.exp,
    "linear": lambda x: x,
    "log_sigmoid": lambda x: -np.log1p(np.exp(-x)),
    "softmax": _softmax,
    "log_softmax": lambda x: np.log(_softmax(x)),
}


@pytest.mark.parametrize("name", sorted(NUMPY))
def test_values_match_formula(name):
    out = activations.get(name)(mk.constant(X))
    assert out.dtype == np.float32
    assert_close(out, NUMPY[name](X.astype(np.float64)), rtol=1e-5, atol=1e-6, what=name)


JAX = [
    ("relu", jax.nn.relu), ("elu", jax.nn.elu), ("selu", jax.nn.selu), ("sigmoid", jax.nn.sigmoid),
    ("softplus", jax.nn.softplus), ("silu", jax.nn.silu), ("gelu", lambda x: jax.nn.gelu(x, approximate=False)),
    ("leaky_relu", lambda x: jax.nn.leaky_relu(x, 0.2)), ("mish", lambda x: x * jnp.tanh(jax.nn.softplus(x))),
    ("softmax", jax.nn.softmax), ("log_softmax", jax.nn.log_softmax), ("tanh", jnp.tanh),
]


@pytest.mark.parametrize("name,reference", JAX, ids=[n for n, _ in JAX])
def test_gradients_match_jax(name, reference):
    x = rand(3, 5, seed=1) * 2  # away from the kinks at 0 with probability 1
    check_grad(activations.get(name), reference, x, order=1)


def test_relu_gradient_at_zero_is_zero_like_tensorflow():
    x = mk.constant([0.0, 1.0, -1.0])
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = mk.reduce_sum(activations.relu(x))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 1.0, 0.0])


def test_relu_options_follow_keras():
    x = np.array([-2.0, -0.5, 0.5, 1.5, 8.0], np.float32)
    np.testing.assert_allclose(activations.relu(x, max_value=1.0).numpy(), np.clip(x, 0, 1))
    np.testing.assert_allclose(activations.relu(x, negative_slope=0.1).numpy(), np.where(x > 0, x, 0.1 * x))
    np.testing.assert_allclose(activations.relu(x, threshold=1.0).numpy(), np.where(x > 1.0, x, 0.0))
    np.testing.assert_allclose(activations.relu(x, negative_slope=0.1, threshold=1.0, max_value=4.0).numpy(),
                               np.clip(np.where(x > 1, x, 0), 0, 4) - 0.1 * np.maximum(1.0 - x, 0), rtol=1e-6)


def test_gelu_approximate_and_elu_alpha():
    x = X.astype(np.float64)
    tanh_form = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    assert_close(activations.gelu(X, approximate=True), tanh_form, rtol=1e-5, atol=1e-6)
    assert_close(activations.elu(X, alpha=0.5), np.where(x > 0, x, 0.5 * (np.exp(x) - 1)), rtol=1e-5, atol=1e-6)


def test_softmax_is_stable_and_normalised_along_axis():
    logits = mk.constant([[1e4, 0.0, -1e4], [3.0, 3.0, 3.0]])
    probs = activations.softmax(logits)
    assert np.all(np.isfinite(probs.numpy()))
    np.testing.assert_allclose(probs.numpy().sum(-1), [1.0, 1.0], rtol=1e-6)
    along0 = activations.softmax(X, axis=0).numpy()
    np.testing.assert_allclose(along0, _softmax(X, axis=0), rtol=1e-5)
    with pytest.raises(ValueError, match="rank"):
        activations.softmax(mk.constant(1.0))


def test_activations_compile_under_mk_function():
    f = mk.function(lambda x: activations.gelu(x) + activations.softmax(x))
    assert_close(f(mk.constant(X)), NUMPY["gelu"](X) + _softmax(X), rtol=1e-5, atol=1e-6)


def test_get_and_serialize():
    assert activations.get(None) is activations.linear
    assert activations.get("swish") is activations.silu
    assert activations.get(activations.relu) is activations.relu
    custom = lambda x: x * 2  # noqa: E731
    assert activations.get(custom) is custom
    for name in ("relu", "softmax", "gelu", "tanh", "sigmoid", "linear"):
        fn = activations.get(name)
        assert activations.serialize(fn) == name
        assert activations.get(activations.serialize(fn)) is fn
    with pytest.raises(ValueError, match="Unknown activation function: 'relux'.*relu"):
        activations.get("relux")
    with pytest.raises(ValueError, match="Could not interpret"):
        activations.get(3)


def custom_activation(x):
    return mk.keras.ops.tanh(x) ** 2


def test_deserialize_finds_custom_objects_as_keras():
    """Keras 3.15: deserialize (a name or a dict) and get (a dict) look in custom_object_scope,
    custom_objects and the registered functions; get of a name takes built-ins only."""
    spec = {"module": "builtins", "class_name": "function", "config": "custom_activation",
            "registered_name": "function"}
    with pytest.raises(ValueError, match="Unknown activation function: 'custom_activation'"):
        mk.activations.deserialize("custom_activation")
    with mk.saving.custom_object_scope({"custom_activation": custom_activation}):
        assert mk.activations.deserialize("custom_activation") is custom_activation
        assert mk.activations.deserialize(spec) is custom_activation
        assert mk.activations.get(spec) is custom_activation
        with pytest.raises(ValueError, match="custom_activation"):
            mk.activations.get("custom_activation")
    assert mk.activations.deserialize(spec, custom_objects={"custom_activation": custom_activation}) is \
        custom_activation
    with pytest.raises(ValueError, match="custom_activation"):
        mk.activations.get(spec)

    @mk.saving.register_keras_serializable(package="activations_test")
    def registered_activation(x):
        return x

    assert mk.activations.deserialize("activations_test>registered_activation") is registered_activation
    assert mk.activations.deserialize("relu") is mk.activations.relu


def test_functional_config_with_custom_activation_in_scope():
    """keras.io's serialization guide: a functional model with a custom activation function
    rebuilt from its config inside custom_object_scope."""
    keras = mk.keras
    inputs = keras.Input((4,))
    outputs = keras.layers.Activation(custom_activation)(keras.layers.Dense(3)(inputs))
    model = keras.Model(inputs, outputs)
    config = model.get_config()
    with pytest.raises(ValueError, match="custom_activation"):
        keras.Model.from_config(config)
    with keras.saving.custom_object_scope({"custom_activation": custom_activation}):
        new_model = keras.Model.from_config(config)
    assert new_model.layers[-1].activation is custom_activation
    new_model.set_weights(model.get_weights())
    x = np.random.default_rng(0).normal(size=(2, 4)).astype("float32")
    np.testing.assert_allclose(new_model(x), np.tanh(x @ model.get_weights()[0] + model.get_weights()[1]) ** 2,
                               rtol=1e-5, atol=1e-6)
