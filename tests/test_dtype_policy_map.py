"""keras.dtype_policies.DTypePolicyMap: the mapping as Keras 3.15's (exact keys, full-match
patterns, the default policy, its errors and config), layers that take one as ``dtype`` and
compute in their path's policy, and ``.keras`` files both ways with Keras 3.15 on JAX
(``fixtures/keras_dtype_policy_map/make_fixtures.py``)."""
import json
import os
import zipfile

import numpy as np
import pytest

from minikeras import keras

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_dtype_policy_map")
DATA = np.load(os.path.join(HERE, "map.npz"))
DTypePolicy, DTypePolicyMap = keras.dtype_policies.DTypePolicy, keras.dtype_policies.DTypePolicyMap


def test_lookup_as_keras_docstring():
    policy_map = DTypePolicyMap(default_policy=DTypePolicy("float32"))
    policy_map["encoder/layer_0/dense"] = DTypePolicy("bfloat16")
    policy_map["encoder/.*"] = "mixed_bfloat16"
    policy_map["decoder"] = "bfloat16"
    assert policy_map["encoder/layer_0/dense"].name == "bfloat16"  # an exact key first
    assert policy_map["encoder/attention/query"].name == "mixed_bfloat16"  # then one full-match pattern
    assert policy_map["decoder/attention"].name == "float32"  # no prefix matching: the default
    assert len(policy_map) == 3 and list(policy_map) == ["encoder/layer_0/dense", "encoder/.*", "decoder"]
    assert "decoder" in policy_map and "decoder/attention" not in policy_map
    assert (policy_map.name, policy_map.compute_dtype, policy_map.variable_dtype) == ("map_float32", "float32",
                                                                                      "float32")
    assert policy_map.quantization_mode is None
    policy_map["encoder/attention/.*"] = "bfloat16"
    with pytest.raises(ValueError, match="Path 'encoder/attention/query' matches multiple dtype policy"):
        policy_map["encoder/attention/query"]
    del policy_map["encoder/attention/.*"]
    with pytest.raises(KeyError):
        del policy_map["missing"]
    with pytest.raises(ValueError, match="decoder already exist in the DTypePolicyMap"):
        policy_map["decoder"] = "float32"
    with pytest.raises(ValueError, match="Cannot interpret the assigned value by `keras.dtype_policies.get`"):
        policy_map["x"] = 3.5
    with pytest.raises(ValueError, match="`default_policy` cannot be a `DTypePolicyMap`"):
        DTypePolicyMap(default_policy=policy_map)
    with pytest.raises(TypeError, match="`policy_map` must be a dict"):
        DTypePolicyMap(policy_map=[("a", "float32")])


def test_default_follows_the_global_policy_and_config_round_trip():
    policy_map = DTypePolicyMap(policy_map={"a": "bfloat16"})
    assert policy_map.name == "map_float32" and repr(policy_map).startswith("<DTypePolicyMap default_policy=None")
    # Keras writes a null name for the policies of a map without default: loading takes the global policy
    assert policy_map.get_config() == {"default_policy": None, "policy_map": {"a": {
        "module": "keras", "class_name": "DTypePolicy", "config": {"name": None}, "registered_name": None}}}
    config = keras.dtype_policies.serialize(DTypePolicyMap("float32", {"a": "bfloat16"}))
    assert config["module"] == "keras.dtype_policies" and config["class_name"] == "DTypePolicyMap"
    assert keras.saving.serialize_keras_object(DTypePolicyMap("float32", {"a": "bfloat16"})) == config
    for loaded in (keras.dtype_policies.deserialize(config), keras.dtype_policies.get(config),
                   keras.saving.deserialize_keras_object(config)):
        assert isinstance(loaded, DTypePolicyMap) and loaded["a"].name == "bfloat16" and loaded["b"].name == "float32"


def test_layers_take_their_path_policy_as_keras():
    policy_map = DTypePolicyMap(default_policy="float32")
    policy_map["dense"] = "bfloat16"
    policy_map["o.*"] = "mixed_bfloat16"
    inputs = keras.Input((3,))
    first = keras.layers.Dense(4, activation="relu", dtype=policy_map, name="dense")
    second = keras.layers.Dense(2, dtype=policy_map, name="out")
    assert first.path is None and first.compute_dtype == "float32"  # no path yet: the default policy
    outputs = second(first(inputs))
    layers = [first, second]
    assert [layer.path for layer in layers] == ["dense", "out"]
    assert [layer.compute_dtype for layer in layers] == list(DATA["compute_dtypes"])
    assert [layer.variable_dtype for layer in layers] == list(DATA["variable_dtypes"])
    assert [layer.kernel.dtype.name for layer in layers] == list(DATA["kernel_dtypes"])
    assert outputs.dtype.name == "bfloat16"
    sequential = keras.Sequential([keras.layers.Dense(2, dtype=policy_map, name="dense")], name="seq")
    sequential.build((None, 3))
    assert sequential.layers[0].path == "seq/dense" and sequential.layers[0].compute_dtype == "float32"
    built = keras.layers.Dense(2, dtype=DTypePolicyMap("float32", {"d": "bfloat16"}), name="d")
    built.build((None, 3))
    built.dtype_policy = "mixed_bfloat16"  # as Keras: a layer with a map and a path changes its entry
    assert built.dtype_policy["d"].name == "mixed_bfloat16" and built.compute_dtype == "bfloat16"


def test_nested_layers_share_the_map():
    class Block(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.inner = keras.layers.Dense(3, dtype=self.dtype_policy, name="inner")

        def call(self, x):
            return self.inner(x)

    block = Block(name="block", dtype=DTypePolicyMap("float32", {"block/inner": "bfloat16"}))
    out = block(np.ones((1, 3), "float32"))
    assert block.inner.path == "block/inner" and out.dtype.name == "bfloat16"
    assert block.inner.kernel.dtype.name == "bfloat16" and block.compute_dtype == "float32"


def test_keras_file_loads_and_saves_as_keras(tmp_path):
    model = keras.saving.load_model(os.path.join(HERE, "map.keras"))
    layers = model.layers[1:]
    assert all(isinstance(layer.dtype_policy, DTypePolicyMap) for layer in layers)
    assert [layer.compute_dtype for layer in layers] == list(DATA["compute_dtypes"])
    assert [layer.kernel.dtype.name for layer in layers] == list(DATA["kernel_dtypes"])
    np.testing.assert_allclose(np.asarray(model.predict(DATA["x"], verbose=0), "float32"), DATA["y"], atol=1e-2)
    path = str(tmp_path / "again.keras")
    model.save(path)

    def dtypes(file):  # Keras marks the map's second use with shared_object_ids, which loading does not need
        with zipfile.ZipFile(file) as archive:
            text = archive.read("config.json").decode()
        config = json.loads(text, object_hook=lambda d: {k: v for k, v in d.items() if k != "shared_object_id"})
        return [layer["config"]["dtype"] for layer in config["config"]["layers"][1:]]

    assert dtypes(path) == dtypes(os.path.join(HERE, "map.keras"))
