"""``keras.legacy.saving`` / ``keras.utils.legacy``: Keras 2's serialize_keras_object and
deserialize_keras_object. The expected dicts and messages are what Keras 3.15.1 (JAX backend)
gives for the same calls; where Keras 3.15.1 fails (a name looked up in ``module_objects`` only,
a class passed to serialize) the test says what minikeras does instead."""
import re

import pytest

from minikeras import keras

L = keras.legacy.saving
UNKNOWN = ("Please ensure you are using a `keras.utils.custom_object_scope` and that this object is included in the "
           "scope.")


def scale2(x):
    return 2 * x


@keras.saving.register_keras_serializable(package="LegacyTest")
class Scaled(keras.layers.Layer):
    def __init__(self, factor, fn=None, regularizer=None, **kwargs):
        super().__init__(**kwargs)
        self.factor, self.fn, self.regularizer = factor, fn, regularizer

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "fn": self.fn, "regularizer": self.regularizer}


def test_same_functions_under_both_names():
    assert keras.utils.legacy.serialize_keras_object is L.serialize_keras_object
    assert keras.utils.legacy.deserialize_keras_object is L.deserialize_keras_object


def test_serialize_as_keras():
    assert L.serialize_keras_object(keras.regularizers.L2(0.1)) == {"class_name": "L2", "config": {"l2": 0.1}}
    assert L.serialize_keras_object(keras.losses.MeanSquaredError()) == {
        "class_name": "MeanSquaredError", "config": {"name": "mean_squared_error", "reduction": "sum_over_batch_size"}}
    assert L.serialize_keras_object(keras.constraints.MaxNorm(2.0)) == {
        "class_name": "MaxNorm", "config": {"max_value": 2.0, "axis": 0}}
    assert L.serialize_keras_object(keras.activations.relu) == "relu"
    assert L.serialize_keras_object(None) is None
    config = L.serialize_keras_object(Scaled(3, fn=scale2, regularizer=keras.regularizers.L1(0.5), name="sc"))
    config["config"].pop("dtype")
    assert config == {"class_name": "LegacyTest>Scaled", "config": {
        "name": "sc", "trainable": True, "factor": 3, "fn": "scale2",
        "regularizer": {"class_name": "L1", "config": {"l1": 0.5}, "__passive_serialization__": True}}}
    for value in (3, [1]):
        with pytest.raises(ValueError, match=re.escape(f"Cannot serialize {value} because it doesn't implement "
                                                       "`get_config()`.")):
            L.serialize_keras_object(value)
    # Keras 3.15.1 calls get_config unbound on a class (TypeError); minikeras gives its name
    assert L.serialize_keras_object(keras.layers.Dense) == "Dense"


def test_deserialize_as_keras():
    config = L.serialize_keras_object(Scaled(3, fn=scale2, regularizer=keras.regularizers.L1(0.5), name="sc"))
    layer = L.deserialize_keras_object(config, module_objects={"L1": keras.regularizers.L1},
                                       custom_objects={"scale2": scale2})
    assert type(layer) is Scaled and layer.factor == 3 and layer.fn is scale2 and layer.name == "sc"
    assert type(layer.regularizer) is keras.regularizers.L1 and layer.regularizer.l1 == 0.5
    assert L.deserialize_keras_object("scale2", custom_objects={"scale2": scale2}) is scale2
    assert L.deserialize_keras_object(scale2) is scale2
    assert L.deserialize_keras_object(None) is None
    # Keras 3.15.1 fails here (an AttributeError from its registry); minikeras finds the class and makes one
    assert type(L.deserialize_keras_object("L2", module_objects={"L2": keras.regularizers.L2})) is keras.regularizers.L2
    with keras.saving.custom_object_scope({"scale2": scale2}):
        assert L.deserialize_keras_object("scale2") is scale2


def test_deserialize_errors_as_keras():
    with pytest.raises(ValueError, match=r"Unknown object: 'Nope'. " + UNKNOWN.replace(".", r"\.")):
        L.deserialize_keras_object({"class_name": "Nope", "config": {}})
    with pytest.raises(ValueError, match=r"Unknown layer: 'Dense'"):  # no built-ins without module_objects
        L.deserialize_keras_object({"class_name": "Dense", "config": {"units": 2}}, None, None, "layer")
    with pytest.raises(ValueError, match=r"Unknown activation: 'relu'"):
        L.deserialize_keras_object("relu", {}, None, "activation")
    with pytest.raises(ValueError, match=r"Improper config format for \{'config': \{\}\}. Expecting python dict "
                                         r"contains `class_name` and `config` as keys"):
        L.deserialize_keras_object({"config": {}})
    with pytest.raises(ValueError, match=r"Could not interpret serialized object: 3"):
        L.deserialize_keras_object(3)
