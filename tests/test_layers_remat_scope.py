"""keras.RematScope: layers made inside it recompute their call (or their activation) in the
backward pass, with the gradients they have without it; the modes and Keras's error."""
import numpy as np
import pytest

import minikeras as mk
from minikeras import keras

X = np.random.default_rng(0).normal(size=(4, 8)).astype("float32")


class Counting(keras.layers.Dense):
    """A Dense that counts its calls and its activation's."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls = 0

    def call(self, inputs):
        self.calls += 1
        return super().call(inputs)


def grads_and_calls(make):
    mk.utils.set_random_seed(0)
    layer = make()
    layer(X)  # build
    layer.calls = 0
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(layer(X) ** 2)
    grads = tape.gradient(loss, layer.trainable_variables)
    return [g.numpy() for g in grads], layer.calls


@pytest.mark.parametrize("scope, recomputed", [
    (dict(mode="full"), True),
    (dict(mode="list_of_layers", layer_names=["chosen"]), True),
    (dict(mode="list_of_layers", layer_names=["other"]), False),
    (dict(mode="larger_than", output_size_threshold=15), True),   # 4 x 16 outputs
    (dict(mode="larger_than", output_size_threshold=64), False),
    (dict(mode=None), False),
])
def test_remat_scope_recomputes_the_chosen_layers_with_the_same_gradients(scope, recomputed):
    plain, plain_calls = grads_and_calls(lambda: Counting(16, activation="relu", name="chosen"))

    def make():
        with keras.RematScope(**scope):
            return Counting(16, activation="relu", name="chosen")

    remat, calls = grads_and_calls(make)
    assert plain_calls == 1 and calls == (2 if recomputed else 1)  # the backward pass ran the call again
    for a, b in zip(remat, plain):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_activations_mode_recomputes_only_the_activation():
    seen = []

    def noted_relu(x):
        seen.append(1)
        return mk.nn.relu(x)

    with keras.RematScope(mode="activations"):
        layer = Counting(16, activation=noted_relu)
    layer(X)
    seen.clear()
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(layer(X) ** 2)
    tape.gradient(loss, layer.trainable_variables)
    assert len(seen) == 2 and layer.calls == 2  # the build call, then one call; its activation ran twice


def test_scopes_nest_and_apply_where_layers_are_made():
    with keras.RematScope(mode="full"):
        outer = keras.layers.Dense(2)
        with keras.RematScope(mode=None):
            inner = keras.layers.Dense(2)
    after = keras.layers.Dense(2)
    assert outer.remat_mode.mode == "full" and inner.remat_mode.mode is None and after.remat_mode is None
    model = keras.Sequential([keras.Input((8,)), outer, inner])
    model.compile("sgd", "mse")
    model.fit(X, np.zeros((4, 2), "float32"), verbose=0)
    with pytest.raises(ValueError, match="Invalid mode 'some'"):
        keras.RematScope(mode="some")
