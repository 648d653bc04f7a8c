"""Keras 3.15's activations beyond the classic ones (celu, glu, hard_tanh, hard/soft/tanh shrink,
threshold, sparse_plus, sparse_sigmoid, squareplus, sparsemax): values and gradients against
Keras 3.15 on JAX (``fixtures/keras_activations_more/make_fixtures.py``), by name in layers, and
second order on the tape against ``jax.hessian``-free ``jax.grad`` of the gradient."""
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk
from minikeras import keras

DATA = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "keras_activations_more", "activations.npz"))
CASES = {  # as make_fixtures.py's
    "celu": ("celu", {}), "celu_alpha": ("celu", {"alpha": 0.5}), "glu": ("glu", {}),
    "glu_axis0": ("glu", {"axis": 0}), "hard_tanh": ("hard_tanh", {}), "hard_shrink": ("hard_shrink", {}),
    "hard_shrink_1": ("hard_shrink", {"threshold": 1.0}), "soft_shrink": ("soft_shrink", {}),
    "tanh_shrink": ("tanh_shrink", {}), "threshold": ("threshold", {"threshold": 0.3, "default_value": -1.0}),
    "sparse_plus": ("sparse_plus", {}), "sparse_sigmoid": ("sparse_sigmoid", {}), "squareplus": ("squareplus", {}),
    "squareplus_b": ("squareplus", {"b": 1.0}), "sparsemax": ("sparsemax", {}),
    "sparsemax_axis0": ("sparsemax", {"axis": 0}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_activation_matches_keras(name):
    fn, kwargs = CASES[name]
    f = getattr(keras.activations, fn)
    x = mk.Variable(DATA["x"])
    with mk.GradientTape() as tape:
        y = f(x, **kwargs)
        loss = mk.reduce_sum(y ** 2)
    np.testing.assert_allclose(y.numpy(), DATA[f"{name}/value"], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), DATA[f"{name}/grad"], rtol=1e-5, atol=1e-6)


def test_second_order_on_the_tape():
    x0 = DATA["x"][0]
    x = mk.Variable(x0)
    with mk.GradientTape() as outer:
        with mk.GradientTape() as inner:
            loss = mk.reduce_sum(keras.activations.celu(x, alpha=0.5) ** 3)
        g = inner.gradient(loss, x)
        g_sum = mk.reduce_sum(g)
    expected = jax.grad(lambda v: jnp.sum(jax.grad(lambda u: jnp.sum(jax.nn.celu(u, 0.5) ** 3))(v)))(x0)
    np.testing.assert_allclose(outer.gradient(g_sum, x).numpy(), expected, rtol=1e-5, atol=1e-6)


def test_by_name_in_a_layer_and_its_config():
    layer = mk.layers.Dense(4, activation="sparsemax")
    x = np.ones((2, 3), "float32")
    out = layer(x)
    np.testing.assert_allclose(out.numpy(), keras.activations.sparsemax(x @ layer.kernel.numpy()).numpy(), rtol=1e-6)
    assert layer.get_config()["activation"] == "sparsemax"
    assert keras.activations.get("squareplus") is keras.activations.squareplus
    assert mk.layers.Activation("celu").get_config()["activation"] == "celu"
