"""Model.host_split(): a model is cut once after its leading host layers, into a function the
trainer maps over the data on the host and a device model its compiled steps call; ``model(x)``
runs every layer. The two shapes the cut reaches into: a functional model calling a Sequential
that starts with a host layer (cut inside it), and a subclassed model (never cut: refused with
the reason). Numbers are checked against the same model run eagerly under a GradientTape."""
import numpy as np
import pytest

import minikeras as mk

X = np.array([[3, 5], [7, 9], [5, 5], [3, 3]])
Y = np.array([[1.0], [0.0], [1.0], [0.0]], dtype="float32")


def _lookup_embedding():
    return mk.Sequential([mk.layers.IntegerLookup(vocabulary=[3, 5, 7]), mk.layers.Embedding(4, 2),
                          mk.layers.Flatten()])


def _functional_over_sequential():
    mk.random.set_seed(1)
    inputs = mk.Input(shape=(2,), dtype="int32")
    return mk.Model(inputs, mk.layers.Dense(1)(_lookup_embedding()(inputs)))


def test_a_functional_model_calling_a_sequential_with_a_host_layer_is_cut_inside_it():
    model = _functional_over_sequential()
    host_fn, device = model.host_split()
    assert model.host_split() is model.host_split()  # made once
    assert host_fn is not None and device is not model
    assert [v.name for v in device.trainable_variables] == [v.name for v in model.trainable_variables]
    np.testing.assert_array_equal(host_fn(X), [[1, 2], [3, 0], [2, 2], [1, 1]])  # IntegerLookup's indices
    eager = model(X).numpy()  # every layer, eagerly
    np.testing.assert_allclose(model.predict(X, verbose=0), eager, rtol=1e-6)


def test_a_nested_sequential_called_with_a_training_flag_is_cut_too():
    mk.random.set_seed(2)
    inputs = mk.Input(shape=(2,), dtype="int32")
    dropped = mk.layers.Dropout(0.5)(_lookup_embedding()(inputs, training=False))
    model = mk.Model(inputs, mk.layers.Dense(1)(dropped))
    assert model.host_split()[0] is not None
    np.testing.assert_allclose(model.predict(X, verbose=0), model(X).numpy(), rtol=1e-6)


def test_fit_through_the_cut_matches_an_eager_gradient_step():
    model = _functional_over_sequential()
    with mk.GradientTape() as tape:
        loss = mk.reduce_mean(mk.square(model(X) - Y))
    grads = tape.gradient(loss, model.trainable_variables)
    expected = [v.numpy() - 0.1 * g.numpy() for v, g in zip(model.trainable_variables, grads)]
    model.compile(mk.optimizers.SGD(0.1), "mse")
    history = model.fit(X, Y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    np.testing.assert_allclose(history.history["loss"][0], float(loss.numpy()), rtol=1e-6)
    for variable, value in zip(model.trainable_variables, expected):
        np.testing.assert_allclose(variable.numpy(), value, rtol=1e-6, atol=1e-7)


def test_a_sequential_split_is_kept_until_its_layers_change():
    model = mk.Sequential([mk.Input(shape=(2,), dtype="int32"), mk.layers.IntegerLookup(vocabulary=[3, 5, 7]),
                           mk.layers.Embedding(4, 2)])
    first = model.host_split()
    assert model.host_split() is first and first[1].part_layers == model.layers[1:]
    model.add(mk.layers.Flatten())
    host_fn, device = model.host_split()
    assert device is not first[1] and len(device.part_layers) == 2
    np.testing.assert_allclose(device(host_fn(X)).numpy(), model(X).numpy())


class _HoldsLookup(mk.Model):
    def __init__(self):
        super().__init__()
        self.lookup = _lookup_embedding()
        self.out = mk.layers.Dense(1)

    def call(self, x):
        return self.out(self.lookup(x))


def test_a_subclassed_model_is_not_cut_and_its_host_layer_says_why():
    model = _HoldsLookup()
    assert model.host_split() == (None, model)
    assert model(X).shape == (4, 1)  # eagerly every layer runs
    model.compile("sgd", "mse")
    with pytest.raises(TypeError, match=r"subclassed model's call\(\) is Python code that cannot be cut"):
        model.fit(X, Y, epochs=1, verbose=0)
