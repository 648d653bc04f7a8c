"""keras.models.clone_model as Keras 3.15 (each expectation below is what Keras 3 gives for the
same code): Sequential, functional (shared layers, ops, several inputs), call_function,
input_tensors, recursive, subclassed models, and its errors."""
import numpy as np
import pytest

from minikeras import keras

L = keras.layers
X = np.ones((2, 4), "float32")


@pytest.fixture
def sequential():
    model = keras.Sequential([keras.Input((4,), name="inp"), L.Dense(3, activation="relu"), L.Dense(1)], name="seq")
    model.compile("adam", "mse", metrics=["mae"])
    return model


@pytest.fixture
def functional():
    a, b = keras.Input((4,), name="a"), keras.Input((2,), name="b")
    shared = L.Dense(2, name="d")  # made first, called first from the second branch's output
    h = shared(a)
    out = L.Concatenate(name="cat")([shared(L.Dense(4, name="e")(a)), h, b])
    return keras.Model([a, b], L.Dense(1, name="head")(out + 1.0), name="fm")


def test_sequential(sequential):
    clone = keras.models.clone_model(sequential)
    assert type(clone).__name__ == "Sequential" and clone.name == "seq" and clone.compiled
    assert [type(layer).__name__ for layer in clone.layers] == ["Dense", "Dense"]
    assert clone.layers[0] is not sequential.layers[0] and clone.inputs[0].name == "inp"
    assert not np.array_equal(clone.get_weights()[0], sequential.get_weights()[0])  # new weights
    clone.set_weights(sequential.get_weights())
    np.testing.assert_allclose(clone(X).numpy(), sequential(X).numpy())
    assert keras.models.clone_model(sequential, clone_function=lambda layer: layer).layers[0] is sequential.layers[0]


def test_functional_with_a_shared_layer_an_op_and_call_function(functional):
    calls = []

    def call_function(operation, *args, **kwargs):
        calls.append(operation.name)
        return operation(*args, **kwargs)

    clone = keras.models.clone_model(functional, call_function=call_function)
    assert type(clone).__name__ == "Functional" and clone.name == "fm"
    assert [layer.name for layer in clone.layers] == ["a", "e", "d", "b", "cat", "head"]
    # ``out + 1.0`` is a keras.ops.add node, named "add", "add_1", ... by how many came before, as in Keras
    assert calls[:4] == ["e", "d", "d", "cat"] and calls[4].startswith("add") and calls[5] == "head"
    clone.set_weights(functional.get_weights())  # the weights come in the model's order
    xs = [X, np.ones((2, 2), "float32")]
    np.testing.assert_allclose(clone(xs).numpy(), functional(xs).numpy(), rtol=1e-6)
    new_inputs = [keras.Input((4,), name="n1"), keras.Input((2,), name="n2")]
    assert [t.name for t in keras.models.clone_model(functional, input_tensors=new_inputs).inputs] == ["n1", "n2"]


def test_recursive_clones_nested_models_layer_by_layer(sequential):
    nested = keras.Sequential([keras.Input((4,)), sequential, L.Dense(2)])
    clone = keras.models.clone_model(nested, recursive=True)
    inner = clone.layers[0]
    assert type(inner).__name__ == "Sequential" and inner is not sequential
    assert inner.layers[0] is not sequential.layers[0]


class Sub(keras.Model):
    def __init__(self, units=2, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.dense = L.Dense(units)

    def call(self, x):
        return self.dense(x)

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def test_a_subclassed_model_is_rebuilt_from_its_config():
    model = Sub(3, name="sub")
    model(X)
    clone = keras.models.clone_model(model)
    assert type(clone) is Sub and clone.units == 3 and clone.name == "sub"
    with pytest.raises(ValueError, match="Arguments `clone_function` and `input_tensors` are only supported for "
                                         "Sequential models or Functional models. Received model of type 'Sub'"):
        keras.models.clone_model(model, clone_function=lambda layer: layer)


def test_errors_as_keras(sequential, functional):
    with pytest.raises(ValueError, match="`call_function` argument is not supported with Sequential models"):
        keras.models.clone_model(sequential, call_function=lambda op, *a, **k: op(*a, **k))
    with pytest.raises(ValueError, match=r"Unexpected keyword argument\(s\): \('foo',\)"):
        keras.models.clone_model(functional, foo=1)
    with pytest.raises(ValueError, match="All entries in `input_tensors` must be KerasTensors"):
        keras.models.clone_model(functional, input_tensors=[np.ones((1, 4))])
    with pytest.raises(ValueError, match="`input_tensors` must have the same structure as model.input"):
        keras.models.clone_model(functional, input_tensors=keras.Input((4,)))
    with pytest.raises(ValueError, match="Argument `input_tensors` must contain a single tensor"):
        keras.models.clone_model(sequential, input_tensors=[keras.Input((4,)), keras.Input((4,))])
