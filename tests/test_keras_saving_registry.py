"""keras.saving's registration round trip as Keras 3: registered classes and functions, nested
serialize/deserialize_keras_object in get_config/from_config, custom_object_scope and
get_custom_objects, .keras files both ways (tests/fixtures/keras_registry is Keras 3's file)."""
import json
import os
import subprocess
import zipfile

import numpy as np
import pytest

from minikeras import keras

S = keras.saving
HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_registry")


@S.register_keras_serializable(package="registry_fixture")
class Scale(keras.layers.Layer):
    def __init__(self, factor=2.0, inner=None, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor
        self.inner = S.deserialize_keras_object(inner) if isinstance(inner, dict) else inner

    def call(self, x):
        return self.inner(x * self.factor)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "inner": S.serialize_keras_object(self.inner)}


@S.register_keras_serializable(package="registry_fixture", name="twice")
def twice(x):
    return x * 2


class Shift(keras.layers.Layer):
    def call(self, x):
        return x + 1.0


def test_names_and_lookups_as_keras():
    assert S.get_registered_name(Scale) == "registry_fixture>Scale"
    assert S.get_registered_name(twice) == "registry_fixture>twice"
    assert S.get_registered_object("registry_fixture>Scale") is Scale
    assert S.get_registered_object("registry_fixture>twice") is twice
    assert S.get_custom_objects()["registry_fixture>Scale"] is Scale
    assert S.get_registered_name(Shift) == "Shift" and S.get_registered_object("Shift") is None
    with S.custom_object_scope({"Shift": Shift}):
        assert S.get_registered_object("Shift") is Shift
        with S.CustomObjectScope({"Shift": Scale}):
            assert S.get_registered_object("Shift") is Scale  # the innermost scope first
    assert S.get_registered_object("Shift") is None
    assert keras.utils.custom_object_scope is S.custom_object_scope
    assert keras.utils.register_keras_serializable is S.register_keras_serializable


def test_serialize_and_deserialize_keras_object_as_keras():
    spec = S.serialize_keras_object(twice)
    assert spec == {"module": "builtins", "class_name": "function", "config": "registry_fixture>twice",
                    "registered_name": "function"}
    assert S.deserialize_keras_object(spec) is twice
    assert S.deserialize_keras_object(S.serialize_keras_object(keras.activations.relu)) is keras.activations.relu
    assert [S.serialize_keras_object(v) for v in (None, "relu", (1, 2), {"a": 1}, np.float32(2.5))] == [
        None, "relu", [1, 2], {"a": 1}, 2.5]
    assert S.deserialize_keras_object(None) is None and S.deserialize_keras_object([1, "a"]) == [1, "a"]
    layer = Scale(3.0, inner=keras.layers.Dense(2), name="sc")
    spec = S.serialize_keras_object(layer)
    assert (spec["class_name"], spec["registered_name"]) == ("Scale", "registry_fixture>Scale")
    assert spec["config"]["inner"]["class_name"] == "Dense"
    again = S.deserialize_keras_object(json.loads(json.dumps(spec)))
    assert type(again) is Scale and again.factor == 3.0 and again.inner.units == 2
    with pytest.raises(ValueError, match="Unknown function 'nope'"):
        S.deserialize_keras_object({"module": "builtins", "class_name": "function", "config": "nope",
                                    "registered_name": "function"})


def test_keras_3s_file_loads_with_a_scope_for_the_unregistered_layer():
    f = np.load(os.path.join(HERE, "registered.npz"))
    with pytest.raises(ValueError, match="Unknown layer class 'Shift'"):
        S.load_model(os.path.join(HERE, "registered.keras"))
    with S.custom_object_scope({"Shift": Shift}):
        model = S.load_model(os.path.join(HERE, "registered.keras"))
    assert [type(layer).__name__ for layer in model.layers] == ["InputLayer", "Scale", "Shift", "Dense"]
    assert model.layers[-1].activation is twice
    np.testing.assert_allclose(model(f["x"]).numpy(), f["y"], rtol=1e-5, atol=1e-6)


def test_minikeras_writes_registered_functions_as_keras_does(tmp_path):
    inputs = keras.Input((3,))
    outputs = keras.layers.Dense(2, activation=twice)(Shift()(Scale(3.0, inner=keras.layers.Dense(4))(inputs)))
    model = keras.Model(inputs, outputs)
    path = tmp_path / "ours.keras"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        text = archive.read("config.json").decode()
    assert '"config": "registry_fixture>twice"' in text and '"registered_name": "registry_fixture>Scale"' in text
    x = np.ones((2, 3), "float32")
    loaded = S.load_model(path, custom_objects={"Shift": Shift})
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)
    assert loaded.layers[-1].activation is twice


KERAS_READS = '''
import sys, numpy as np, keras
S = keras.saving


@S.register_keras_serializable(package="registry_fixture")
class Scale(keras.layers.Layer):
    def __init__(self, factor=2.0, inner=None, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor
        self.inner = S.deserialize_keras_object(inner) if isinstance(inner, dict) else inner

    def call(self, x):
        return self.inner(x * self.factor)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "inner": S.serialize_keras_object(self.inner)}


@S.register_keras_serializable(package="registry_fixture", name="twice")
def twice(x):
    return x * 2


model = S.load_model(sys.argv[1])
assert model.layers[-1].activation is twice
assert type(model.layers[-1].kernel_constraint).__name__ == "MaxNorm"
np.save(sys.argv[2], np.asarray(model(np.ones((2, 3), "float32"))))
'''


@pytest.mark.skipif(not os.environ.get("MINIKERAS_KERAS_PYTHON"), reason="MINIKERAS_KERAS_PYTHON is unset")
def test_keras_3_reads_our_file(tmp_path):
    inputs = keras.Input((3,))
    dense = keras.layers.Dense(2, activation=twice, kernel_constraint=keras.constraints.MaxNorm(1.5))
    model = keras.Model(inputs, dense(Scale(3.0, inner=keras.layers.Dense(4))(inputs)))
    model.save(tmp_path / "ours.keras")
    out = str(tmp_path / "keras.npy")
    result = subprocess.run([os.environ["MINIKERAS_KERAS_PYTHON"], "-c", KERAS_READS, str(tmp_path / "ours.keras"),
                             out], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "KERAS_BACKEND": "jax"})
    assert result.returncode == 0, result.stderr[-3000:]
    np.testing.assert_allclose(np.load(out), model(np.ones((2, 3), "float32")).numpy(), rtol=1e-5, atol=1e-6)
