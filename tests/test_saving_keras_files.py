"""Keras 3 files read by minikeras: ``.weights.h5`` with optimizer state, and ``.keras``
archives (config.json in Keras's words, compile config, safe mode), against fixtures written
by real Keras 3.15 (``tests/fixtures/keras_files/make_keras_files.py``)."""
import json
import os
import sys
import zipfile

import numpy as np
import pytest

import minikeras as mk
from minikeras.saving import keras_config, model_file

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_files")


def fixture(name):
    return os.path.join(HERE, name)


@pytest.fixture(scope="module")
def mlp_fixture():
    return dict(np.load(fixture("mlp_adam.npz")))


def mlp():
    model = mk.Sequential([mk.Input((4,)), mk.layers.Dense(5, activation="relu"), mk.layers.Dense(3)])
    model.compile(optimizer=mk.optimizers.Adam(0.01), loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def test_keras_checkpoint_with_adam_state_resumes_with_kerass_next_step(mlp_fixture):
    model = mlp()
    model.load_weights(fixture("mlp_adam.weights.h5"))
    for i, w in enumerate(model.weights):
        np.testing.assert_array_equal(w.numpy(), mlp_fixture[f"one_{i}"])
    assert int(model.optimizer.iterations.numpy()) == 1
    model.train_on_batch(mlp_fixture["x"], mlp_fixture["y"])
    for i, w in enumerate(model.weights):  # Keras's own second step
        np.testing.assert_allclose(w.numpy(), mlp_fixture[f"next_{i}"], rtol=1e-6, atol=1e-7)
    for i, v in enumerate(model.optimizer.variables):
        np.testing.assert_allclose(np.asarray(v.numpy()), mlp_fixture[f"next_opt_{i}"], rtol=1e-6, atol=1e-9)


def test_weights_file_has_kerass_optimizer_layout(tmp_path, mlp_fixture):
    import h5py
    model = mlp()
    model.load_weights(fixture("mlp_adam.weights.h5"))
    path = str(tmp_path / "ours.weights.h5")
    model.save_weights(path)

    def tree(p):
        with h5py.File(p, "r") as f:
            out = {}
            f.visititems(lambda name, obj: out.__setitem__(name, (getattr(obj, "shape", None), dict(obj.attrs))))
            # layer names carry this process's name counter; group paths, shapes and the optimizer's name do not
            return {name: (shape, attrs if name.startswith("optimizer") else {})
                    for name, (shape, attrs) in out.items()}

    ours = tree(path)
    assert ours.pop("seed_generator/vars/0")[0] == (2,)  # the random state, which Keras does not save
    del ours["seed_generator"], ours["seed_generator/vars"]
    assert ours == tree(fixture("mlp_adam.weights.h5"))


def test_keras_archive_loads_with_predictions_compile_config_and_optimizer_state():
    data = np.load(fixture("cnn.npz"))
    model = mk.saving.load_model(fixture("cnn.keras"))
    assert [type(layer).__name__ for layer in model.layers] == [
        "Conv2D", "MaxPooling2D", "Flatten", "Dropout", "Dense"]
    np.testing.assert_allclose(model.predict(data["x"], verbose=0), data["predictions"], rtol=1e-5, atol=1e-6)
    assert isinstance(model.optimizer, mk.optimizers.Adam)
    assert model.optimizer.learning_rate.numpy() == pytest.approx(0.001)
    for i, v in enumerate(model.optimizer.variables):
        np.testing.assert_allclose(np.asarray(v.numpy()), data[f"opt_{i}"], rtol=1e-6, atol=1e-9)
    logs = model.evaluate(data["x"], data["y"], verbose=0, return_dict=True)
    assert set(logs) == {"loss", "accuracy"}


def test_keras_archive_without_compile():
    model = mk.saving.load_model(fixture("cnn.keras"), compile=False)
    assert not getattr(model, "compiled", False)


def test_lambda_bytecode_refused_in_safe_mode():
    with pytest.raises(ValueError, match="Lambda 'lambda': its function is Python bytecode.*safe_mode=False"):
        mk.saving.load_model(fixture("lambda.keras"))


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the fixture's bytecode is CPython 3.11's")
def test_lambda_loads_outside_safe_mode():
    model = mk.saving.load_model(fixture("lambda.keras"), safe_mode=False)
    np.testing.assert_array_equal(model(np.ones((1, 3), "float32")).numpy(), [[2.0, 2.0, 2.0]])


class Scale(mk.layers.Layer):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, inputs):
        return inputs * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


def test_unregistered_class_refused_then_loaded_with_custom_objects():
    with pytest.raises(ValueError, match="Unknown layer class 'Scale'.*fixture>Scale.*custom_objects"):
        mk.saving.load_model(fixture("custom.keras"))
    model = mk.saving.load_model(fixture("custom.keras"), custom_objects={"fixture>Scale": Scale})
    np.testing.assert_allclose(model(np.ones((1, 3), "float32")).numpy(), [[3.0, 3.0, 3.0]])


def test_no_effect_keys_dropped_and_effective_ones_refused():
    spec = {"module": "keras.layers", "class_name": "InputLayer", "registered_name": None,
            "config": {"batch_shape": [None, 3], "dtype": "float32", "sparse": False, "ragged": False,
                       "optional": False, "name": "inp"}}
    assert keras_config.from_keras(spec)["config"] == {"batch_shape": [None, 3], "dtype": "float32", "name": "inp"}
    spec["config"]["sparse"] = True
    with pytest.raises(ValueError, match="InputLayer 'inp' has sparse=True, which minikeras's InputLayer does not"):
        keras_config.from_keras(spec)
    dense = {"module": "keras.layers", "class_name": "Dense", "registered_name": None,
             "config": {"name": "c", "units": 2, "groups": 2}}
    with pytest.raises(ValueError, match="Dense 'c' has groups=2"):
        keras_config.from_keras(dense)


def write_archive(path, members):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return str(path)


def test_malformed_config_json(tmp_path):
    with zipfile.ZipFile(fixture("cnn.keras")) as archive:
        weights = archive.read("model.weights.h5")
    path = write_archive(tmp_path / "bad.keras", {"config.json": "{not json", "model.weights.h5": weights})
    with pytest.raises(ValueError, match="bad.keras.*config.json is not valid JSON"):
        mk.saving.load_model(path)
    path = write_archive(tmp_path / "list.keras", {"config.json": "[1, 2]", "model.weights.h5": weights})
    with pytest.raises(ValueError, match="config.json does not describe a model"):
        mk.saving.load_model(path)


def test_missing_weights_member(tmp_path):
    with zipfile.ZipFile(fixture("cnn.keras")) as archive:
        config = archive.read("config.json")
    path = write_archive(tmp_path / "noweights.keras", {"config.json": config})
    with pytest.raises(ValueError, match=r"noweights.keras.*lacks \['model.weights.h5'\]"):
        mk.saving.load_model(path)


def test_oversized_member_refused_before_decompression(tmp_path, monkeypatch):
    with zipfile.ZipFile(fixture("cnn.keras")) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members["config.json"] = members["config.json"] + b" " * 5000
    path = write_archive(tmp_path / "big.keras", members)
    monkeypatch.setitem(model_file.MAX_MEMBER_BYTES, "config.json", 4096)
    with pytest.raises(ValueError, match="member 'config.json' is .* bytes once decompressed, more than the 4096"):
        mk.saving.load_model(path)


def test_members_are_read_by_name_never_extracted(tmp_path):
    with zipfile.ZipFile(fixture("cnn.keras")) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members["../../escape.txt"] = b"x"
    path = write_archive(tmp_path / "evil.keras", members)
    mk.saving.load_model(path)
    assert not (tmp_path.parent / "escape.txt").exists() and not os.path.exists("../../escape.txt")


def test_our_config_json_uses_kerass_names(tmp_path):
    model = mk.Sequential([mk.layers.Dense(2, input_shape=(3,))])
    model.compile(optimizer="adam", loss="mse")
    path = str(tmp_path / "m.keras")
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        config = json.loads(archive.read("config.json"))
        metadata = json.loads(archive.read("metadata.json"))
    assert (config["module"], config["class_name"], config["registered_name"]) == ("keras", "Sequential", None)
    first, dense = config["config"]["layers"]
    assert (first["module"], first["class_name"], first["config"]["batch_shape"]) == (
        "keras.layers", "InputLayer", [None, 3])
    assert dense["module"] == "keras.layers" and "batch_input_shape" not in dense["config"]
    assert config["compile_config"]["optimizer"]["module"] == "keras.optimizers"
    assert metadata["keras_version"].startswith("3.")
    loaded = mk.saving.load_model(path)
    x = np.ones((2, 3), "float32")
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())


def test_functional_config_entries_pass_through_unchanged():
    # A Keras functional model names its tensors {"class_name": "__keras_tensor__", ...}: they are
    # left for Functional.from_config, and the model itself is looked up as minikeras.models.
    tensor = {"class_name": "__keras_tensor__", "config": {"shape": [None, 3], "dtype": "float32",
                                                          "keras_history": ["input_layer", 0, 0]}}
    spec = {"module": "keras", "class_name": "Functional", "registered_name": "Functional",
            "config": {"name": "f", "layers": [], "input_layers": [["input_layer", 0, 0]],
                       "output_layers": [["dense", 0, 0]], "nodes": [tensor]}}
    out = keras_config.from_keras(spec)
    assert out["module"] == "minikeras.models" and out["config"]["nodes"] == [tensor]


def test_more_shared_layers_load_with_kerass_predictions():
    data = np.load(fixture("layers.npz"))
    model = mk.saving.load_model(fixture("layers.keras"))
    assert [type(layer).__name__ for layer in model.layers] == [
        "Rescaling", "Conv2D", "BatchNormalization", "ReLU", "AveragePooling2D", "Conv2DTranspose", "ZeroPadding2D",
        "Cropping2D", "GlobalAveragePooling2D", "Dense", "LayerNormalization", "Softmax"]
    np.testing.assert_allclose(model.predict(data["x"], verbose=0), data["predictions"], rtol=1e-5, atol=1e-6)


def test_a_keras_layer_minikeras_lacks_is_named():
    spec = {"module": "keras", "class_name": "Sequential", "registered_name": None,
            "config": {"name": "s", "layers": [{"module": "keras.layers", "class_name": "TorchModuleWrapper",
                                                "registered_name": None,
                                                "config": {"name": "torch_module_wrapper"}}]}}
    from minikeras.saving.registry import deserialize_keras_object
    with pytest.raises(ValueError, match=r"Unknown layer class 'TorchModuleWrapper': Keras's "
                                         r"keras.layers.TorchModuleWrapper has no minikeras counterpart yet"):
        deserialize_keras_object(keras_config.from_keras(spec), None, "model")


def test_compile_config_with_objects_and_an_unbuilt_optimizer():
    model = mk.saving.load_model(fixture("compile.keras"))
    optimizer = model.optimizer
    assert isinstance(optimizer, mk.optimizers.SGD) and optimizer.nesterov and optimizer.momentum == 0.9
    assert optimizer.get_config()["learning_rate"]["class_name"] == "ExponentialDecay"
    assert not optimizer.built and int(optimizer.iterations.numpy()) == 0  # the file's 2 variables, loaded unbuilt
    assert isinstance(model.loss, mk.losses.SparseCategoricalCrossentropy) and model.loss.from_logits
    x, y = np.ones((4, 4), np.float32), np.array([0, 1, 2, 0], np.int32)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert set(logs) == {"loss", "accuracy", "sparse_top_k_categorical_accuracy"}


def test_our_compile_config_keeps_metric_objects(tmp_path):
    model = mk.Sequential([mk.layers.Dense(3, input_shape=(4,))])
    model.compile("adam", "sparse_categorical_crossentropy", metrics=[mk.metrics.SparseTopKCategoricalAccuracy(k=2)])
    model.save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as archive:
        metrics = json.loads(archive.read("config.json"))["compile_config"]["metrics"]
    assert metrics == [{"module": "keras.metrics", "class_name": "SparseTopKCategoricalAccuracy",
                        "config": {"name": "sparse_top_k_categorical_accuracy", "dtype": "float32", "k": 2},
                        "registered_name": None}]
    loaded = mk.saving.load_model(tmp_path / "m.keras")
    logs = loaded.evaluate(np.ones((2, 4), np.float32), np.array([0, 1]), verbose=0, return_dict=True)
    assert "sparse_top_k_categorical_accuracy" in logs


def test_keras_functional_archive_loads_with_predictions_and_list_losses():
    expected = np.load(fixture("functional.npz"))
    model = mk.saving.load_model(fixture("functional.keras"))
    assert type(model).__name__ == "Functional" and [t.name for t in model.inputs] == ["a", "b"]
    score, cls = model.predict([expected["xa"], expected["xb"]], verbose=0)
    np.testing.assert_allclose(score, expected["score"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cls, expected["cls"], rtol=1e-5, atol=1e-6)
    assert int(model.optimizer.iterations) == 1
    logs = model.evaluate([expected["xa"], expected["xb"]], [np.ones((2, 1), np.float32), np.array([0, 2])],
                          verbose=0, return_dict=True)
    assert set(logs) >= {"loss", "score_loss", "cls_loss"}
