"""model.to_json / keras.models.model_from_json as Keras 3: the architecture with its build and
compile settings, in Keras 3's words, rebuilt with new weights."""
import json

import numpy as np

from minikeras import keras


def test_sequential_round_trip_compiled_as_it_was():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, kernel_constraint="non_neg")])
    model.compile("adam", "mse")
    text = model.to_json(indent=2)
    config = json.loads(text)
    assert (config["module"], config["class_name"]) == ("keras", "Sequential")
    assert config["compile_config"]["optimizer"]["class_name"] == "Adam"
    again = keras.models.model_from_json(text)
    assert type(again).__name__ == "Sequential" and again.built and again.compiled
    assert type(again.optimizer).__name__ == "Adam"
    assert isinstance(again.layers[0].kernel_constraint, keras.constraints.NonNeg)
    assert [w.shape for w in again.weights] == [w.shape for w in model.weights]


def test_functional_round_trip():
    inputs = keras.Input((4,), name="i")
    model = keras.Model(inputs, keras.layers.Dense(1)(keras.layers.Dense(3)(inputs)))
    again = keras.models.model_from_json(model.to_json())
    assert type(again).__name__ == "Functional" and len(again.weights) == 4
    again.set_weights(model.get_weights())
    x = np.ones((2, 4), "float32")
    np.testing.assert_allclose(again(x).numpy(), model(x).numpy())
