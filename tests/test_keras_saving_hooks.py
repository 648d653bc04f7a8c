"""Keras 3's saving hooks: Layer's default save_own_variables/load_own_variables (called with
super()), a layer's own get_build_config/build_from_config and a model's own
get_compile_config/compile_from_config, through .keras files (keras.io's customizing-saving
guide, written so that it runs on Keras 3.15 too; the file layouts are the ones Keras 3.15 on
JAX writes for the same code)."""
import io
import warnings
import zipfile

import h5py
import numpy as np
import pytest

from minikeras import keras

ops = keras.ops


@keras.saving.register_keras_serializable(package="hooks_test")
class LayerWithCustomVariables(keras.layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.stored_variables = keras.Variable(np.linspace(0.5, 1.5, 10), name="special_arr", dtype="float32",
                                               trainable=False)

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units))
        self.count = self.add_weight(shape=(), initializer="ones", trainable=False)
        self.bias = self.add_weight(shape=(self.units,))

    def get_config(self):
        return dict(units=self.units, **super().get_config())

    def save_own_variables(self, store):
        super().save_own_variables(store)
        store["variables"] = ops.convert_to_numpy(self.stored_variables) * 2.0

    def load_own_variables(self, store):
        self.stored_variables.assign(store["variables"] / 2.0)
        super().load_own_variables({k: v for k, v in store.items() if k != "variables"})

    def call(self, inputs):
        return (ops.matmul(inputs, self.kernel) + self.bias) * self.stored_variables * self.count


def _weights_file(path):
    with zipfile.ZipFile(path) as archive:
        return h5py.File(io.BytesIO(archive.read("model.weights.h5")), "r")


def test_default_own_variables_called_with_super(tmp_path):
    model = keras.Sequential([keras.Input((10,)), LayerWithCustomVariables(1)])
    x, y = np.random.random((8, 10)), np.random.random((8, 10))
    model.compile(optimizer="adam", loss="mean_squared_error")
    model.fit(x, y, verbose=0)
    model.save(tmp_path / "vars.keras")
    layer = model.layers[0]
    with _weights_file(tmp_path / "vars.keras") as h5file:  # Keras 3.15: 0..3 then the layer's own key
        group = h5file["layers/layer_with_custom_variables/vars"]
        assert sorted(group.keys()) == ["0", "1", "2", "3", "variables"]
        np.testing.assert_array_equal(group["0"][()], layer.kernel.numpy())
        np.testing.assert_array_equal(group["1"][()], layer.bias.numpy())
        np.testing.assert_array_equal(group["2"][()], layer.stored_variables.numpy())  # non-trainable, made first
        np.testing.assert_array_equal(group["3"][()], layer.count.numpy())
        np.testing.assert_allclose(group["variables"][()], layer.stored_variables.numpy() * 2.0)
    restored = keras.models.load_model(tmp_path / "vars.keras")
    np.testing.assert_allclose(restored.layers[0].stored_variables.numpy(), layer.stored_variables.numpy())
    np.testing.assert_allclose(restored.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)


def test_default_load_own_variables_errors():
    with pytest.raises(ValueError, match="was never built"):
        keras.layers.Layer.load_own_variables(keras.layers.Dense(2), {"0": np.zeros((3, 2))})
    layer = LayerWithCustomVariables(2)
    layer.build((None, 3))
    with pytest.raises(ValueError, match=r"expected 4 variables, but received 1 variables during loading"):
        keras.layers.Layer.load_own_variables(layer, {"0": np.zeros((3, 2))})
    store = {}
    keras.layers.Layer.save_own_variables(layer, store)
    assert sorted(store) == ["0", "1", "2", "3"]


@keras.saving.register_keras_serializable(package="hooks_test")
class LayerWithCustomBuild(keras.layers.Layer):
    def __init__(self, units=32, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.layer_init = "zeros"

    def call(self, inputs):
        return ops.matmul(inputs, self.w) + self.b

    def get_config(self):
        return dict(units=self.units, **super().get_config())

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer=self.layer_init)
        self.b = self.add_weight(shape=(self.units,), initializer=self.layer_init)

    def get_build_config(self):
        build_config = super().get_build_config()
        build_config.update({"layer_init": self.layer_init})
        return build_config

    def build_from_config(self, config):
        self.layer_init = config["layer_init"]
        self.build(config["input_shape"])


def test_layer_build_config_in_keras_file(tmp_path):
    layer = LayerWithCustomBuild(units=4)
    assert layer.get_build_config is not None and keras.layers.Dense(2).get_build_config() is None
    layer.layer_init = "ones"
    model = keras.Sequential([keras.Input((3,)), layer, keras.layers.Dense(1)])
    x = np.random.random((5, 3))
    y = model.predict(x, verbose=0)
    build_config = layer.get_build_config()  # Keras: (None, 3); minikeras builds on a trace of batch 1
    assert build_config["input_shape"][-1] == 3 and build_config["layer_init"] == "ones"
    model.save(tmp_path / "build.keras")
    restored = keras.models.load_model(tmp_path / "build.keras")
    assert restored.layers[0].layer_init == "ones"  # only build_from_config knows it
    np.testing.assert_allclose(restored.predict(x, verbose=0), y, rtol=1e-6)


@keras.saving.register_keras_serializable(package="hooks_test")
def small_square_sum_loss(y_true, y_pred):
    return ops.sum(ops.square(y_pred - y_true) / 10.0, axis=1)


@keras.saving.register_keras_serializable(package="hooks_test")
def mean_pred(y_true, y_pred):
    return ops.mean(y_pred)


@keras.saving.register_keras_serializable(package="hooks_test")
class ModelWithCustomCompile(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense1 = keras.layers.Dense(8, activation="relu")
        self.dense2 = keras.layers.Dense(4, activation="softmax")

    def call(self, inputs):
        return self.dense2(self.dense1(inputs))

    def compile(self, optimizer, loss_fn, metrics):
        super().compile(optimizer=optimizer, loss=loss_fn, metrics=metrics)
        self.model_optimizer, self.loss_fn, self.loss_metrics = optimizer, loss_fn, metrics

    def get_compile_config(self):
        return {"model_optimizer": self.model_optimizer, "loss_fn": self.loss_fn, "metric": self.loss_metrics}

    def compile_from_config(self, config):
        self.compile(optimizer=keras.utils.deserialize_keras_object(config["model_optimizer"]),
                     loss_fn=keras.utils.deserialize_keras_object(config["loss_fn"]),
                     metrics=keras.utils.deserialize_keras_object(config["metric"]))


def test_model_compile_config_hooks(tmp_path):
    model = ModelWithCustomCompile()
    model.compile(optimizer="SGD", loss_fn=small_square_sum_loss, metrics=["accuracy", mean_pred])
    x, y = np.random.random((4, 8)), np.random.random((4, 4))
    model.fit(x, y, verbose=0)
    model.save(tmp_path / "compile.keras")
    with zipfile.ZipFile(tmp_path / "compile.keras") as archive:
        import json
        saved = json.loads(archive.read("config.json"))["compile_config"]
    assert saved == {"model_optimizer": "SGD",  # as Keras 3.15 writes it
                     "loss_fn": {"module": "builtins", "class_name": "function",
                                 "config": "hooks_test>small_square_sum_loss", "registered_name": "function"},
                     "metric": ["accuracy", {"module": "builtins", "class_name": "function",
                                             "config": "hooks_test>mean_pred", "registered_name": "function"}]}
    restored = keras.models.load_model(tmp_path / "compile.keras")
    assert restored.model_optimizer == "SGD" and restored.loss_fn is small_square_sum_loss
    assert restored.loss_metrics == ["accuracy", mean_pred]
    np.testing.assert_allclose(restored.evaluate(x, y, verbose=0), model.evaluate(x, y, verbose=0), rtol=1e-5)


@keras.saving.register_keras_serializable(package="hooks_test")
class ModelWithCustomCompileOnly(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = keras.layers.Dense(2)

    def call(self, inputs):
        return self.dense(inputs)

    def compile(self, optimizer, loss_fn):
        super().compile(optimizer=optimizer, loss=loss_fn)


def test_custom_compile_without_hooks_warns_as_keras(tmp_path):
    model = ModelWithCustomCompileOnly()
    model.compile("sgd", "mse")
    model.fit(np.ones((2, 3)), np.ones((2, 2)), verbose=0)
    model.save(tmp_path / "m.keras")
    with pytest.warns(UserWarning, match=r"`compile\(\)` was not called as part of model loading"):
        restored = keras.models.load_model(tmp_path / "m.keras")
    assert not restored.compiled
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        keras.models.load_model(tmp_path / "m.keras", compile=False)
