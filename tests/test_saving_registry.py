"""mk.saving's registry of serializable classes (Keras 3's ``register_keras_serializable``):
what a ``.keras`` file names each class by, and finding the class again on load."""
import json
import zipfile

import numpy as np
import pytest

import minikeras as mk
from minikeras import layers, saving


@saving.register_keras_serializable(package="tests")
class TwoLayer(mk.Model):
    def __init__(self, units=4, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.hidden = layers.Dense(units, activation="relu")
        self.out = layers.Dense(2)

    def call(self, x, training=None):
        return self.out(self.hidden(x))

    def get_config(self):
        return {**super().get_config(), "units": self.units}


@saving.register_keras_serializable(package="tests", name="Scale")
class ScaleLayer(layers.Layer):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, x):
        return x * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


class Unregistered(mk.Model):
    def call(self, x, training=None):
        return x


def test_registered_names_and_lookup():
    assert saving.get_registered_name(TwoLayer) == "tests>TwoLayer"
    assert saving.get_registered_name(ScaleLayer()) == "tests>Scale"
    assert saving.get_registered_name(Unregistered) == "Unregistered"
    assert saving.get_registered_object("tests>TwoLayer") is TwoLayer
    assert saving.get_registered_object("tests>Missing") is None
    assert saving.get_registered_object("Mine", custom_objects={"Mine": Unregistered}) is Unregistered
    assert mk.saving.register_keras_serializable is saving.register_keras_serializable


def test_a_name_registered_again_goes_to_the_new_class():
    # as Keras 3 (a notebook cell defining a registered class, run twice)
    another = type("Another", (mk.Model,), {})
    try:
        saving.register_keras_serializable(package="tests", name="TwoLayer")(another)
        assert saving.get_registered_object("tests>TwoLayer") is another
    finally:
        assert saving.register_keras_serializable(package="tests")(TwoLayer) is TwoLayer
    assert saving.get_registered_object("tests>TwoLayer") is TwoLayer
    with pytest.raises(ValueError, match="Cannot register a class that does not have a get_config"):
        saving.register_keras_serializable()(type("NoConfig", (), {}))


def test_builtin_classes_are_saved_as_keras_saves_its_own():
    spec = saving.serialize_keras_object(layers.Dense(3, name="d"))
    assert (spec["module"], spec["class_name"], spec["registered_name"]) == ("minikeras.layers", "Dense", None)
    assert spec["config"]["units"] == 3
    rebuilt = saving.deserialize_keras_object(spec)
    assert type(rebuilt) is layers.Dense and rebuilt.units == 3
    spec = saving.serialize_keras_object(ScaleLayer(3.0))
    assert (spec["class_name"], spec["registered_name"]) == ("ScaleLayer", "tests>Scale")
    assert saving.deserialize_keras_object(spec).factor == 3.0


def test_registered_custom_model_round_trips_through_a_keras_file(tmp_path):
    model = TwoLayer(units=5, name="two_layer")
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    expected = model(x).numpy()
    model.compile(optimizer="adam", loss="mse")
    path = tmp_path / "two_layer.keras"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        config = json.loads(archive.read("config.json"))
    assert (config["class_name"], config["registered_name"]) == ("TwoLayer", "tests>TwoLayer")
    assert config["config"]["units"] == 5 and config["build_config"] == {"input_shape": [3, 4]}
    loaded = saving.load_model(path)
    assert type(loaded) is TwoLayer and loaded.units == 5 and loaded.name == "two_layer" and loaded.built
    np.testing.assert_array_equal(loaded(x).numpy(), expected)
    for a, b in zip(model.variables, loaded.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert loaded.compiled and loaded.loss is not None


def test_registered_layer_in_a_sequential_needs_no_custom_objects(tmp_path):
    model = mk.Sequential([layers.Input((2,)), ScaleLayer(3.0), layers.Dense(1, kernel_initializer="ones")])
    path = tmp_path / "scaled.keras"
    model.save(path)
    loaded = saving.load_model(path)
    assert type(loaded.layers[0]) is ScaleLayer and loaded.layers[0].factor == 3.0
    np.testing.assert_allclose(loaded(np.array([[1.0, 2.0]], np.float32)).numpy(), [[9.0]])


def test_unregistered_model_is_an_error_naming_the_class(tmp_path):
    model = Unregistered()
    model.built = True
    with pytest.raises(NotImplementedError, match=r"Unregistered.*register_keras_serializable"):
        model.save(tmp_path / "unregistered.keras")


def test_loading_a_class_that_is_not_registered_names_it(tmp_path):
    path = tmp_path / "two_layer.keras"
    model = TwoLayer()
    model(np.ones((1, 4), np.float32))
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    config = json.loads(files["config.json"])
    config["class_name"], config["registered_name"] = "Renamed", "tests>Renamed"
    files["config.json"] = json.dumps(config).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    with pytest.raises(ValueError, match=r"two_layer\.keras.*'Renamed'.*register_keras_serializable"):
        saving.load_model(path)
    loaded = saving.load_model(path, custom_objects={"Renamed": TwoLayer})
    assert type(loaded) is TwoLayer
