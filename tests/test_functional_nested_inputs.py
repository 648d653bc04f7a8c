"""Layers called symbolically on nested structures, and functional models whose inputs are
nested two deep (keras.io's Keras 3 migration guide's ``{"foo": x, "bar": {"baz": y}}``), as in
Keras 3.15: calls, fit/predict, get_config/from_config and .keras files."""
import numpy as np
import pytest

from minikeras import keras


@keras.saving.register_keras_serializable(package="nested_inputs_test")
class FooPlusBaz(keras.layers.Layer):
    def call(self, inputs):
        return inputs["foo"] + inputs["bar"]["baz"]


def _model():
    foo, baz = keras.Input(shape=(2,), name="foo"), keras.Input(shape=(2,), name="baz")
    summed = FooPlusBaz()({"foo": foo, "bar": {"baz": baz}})
    assert tuple(summed.shape) == (None, 2)
    out = keras.layers.Dense(1, kernel_initializer="ones", name="head")(summed)
    return keras.Model({"foo": foo, "bar": {"baz": baz}}, out)


def _data(n=4):
    rng = np.random.default_rng(0)
    return {"foo": rng.normal(size=(n, 2)).astype("float32"), "bar": {"baz": rng.normal(size=(n, 2)).astype("float32")}}


def test_layer_on_doubly_nested_dict_and_model_call():
    model = _model()
    data = _data()
    expected = (data["foo"] + data["bar"]["baz"]).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(model(data), expected, rtol=1e-6)
    np.testing.assert_allclose(model.predict(data, verbose=0), expected, rtol=1e-6)
    eager = FooPlusBaz()({"foo": data["foo"], "bar": {"baz": data["bar"]["baz"]}})
    np.testing.assert_allclose(eager, data["foo"] + data["bar"]["baz"])
    with pytest.raises(ValueError, match=r"expects a dict with keys \['baz'\] at \['bar'\]"):
        model({"foo": data["foo"], "bar": data["bar"]["baz"]})


def test_fit_config_and_keras_file(tmp_path):
    model = _model()
    data = _data(8)
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(data, np.zeros((8, 1), "float32"), epochs=2, verbose=0)
    assert history.history["loss"][1] < history.history["loss"][0]
    config = model.get_config()
    assert config["input_layers"] == {"foo": ["foo", 0, 0], "bar": {"baz": ["baz", 0, 0]}}
    rebuilt = keras.Model.from_config(config)
    rebuilt.set_weights(model.get_weights())
    np.testing.assert_allclose(rebuilt(data), model(data), rtol=1e-6)
    model.save(tmp_path / "nested.keras")
    loaded = keras.models.load_model(tmp_path / "nested.keras")
    np.testing.assert_allclose(loaded.predict(data, verbose=0), model.predict(data, verbose=0), rtol=1e-6)


def test_list_holding_a_dict():
    x, y = keras.Input(shape=(1,), name="x"), keras.Input(shape=(1,), name="y")
    out = keras.layers.Lambda(lambda d: d[0] + d[1]["a"][0])([x, {"a": [y]}])
    model = keras.Model([x, {"a": y}], out)
    np.testing.assert_allclose(model([np.ones((2, 1)), {"a": np.full((2, 1), 2.0)}]), np.full((2, 1), 3.0))
