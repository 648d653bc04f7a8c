"""Functional models of keras.ops calls in .keras files, both ways with Keras 3: minikeras writes
each op node as Keras 3 does (its Operation class, constructor arguments in the config, call
arguments in the node, array constants as ``__numpy__``), loads its own files and a file Keras 3.15 saved
(fixtures/keras_ops_numpy/ops_model.keras, made by make_ops_model.py beside it)."""
import json
import os
import zipfile

import numpy as np
import pytest
from keras_ops_numpy_cases import build_ops_model

import minikeras as mk
from minikeras import keras

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_ops_numpy")
REF = np.load(os.path.join(HERE, "ops_model.npz"))


def _config(path):
    return json.loads(zipfile.ZipFile(path).read("config.json"))["config"]


def _without_names(spec):
    """A layer entry with its node names dropped (they count ops made earlier in the process)."""
    def plain(value):
        if isinstance(value, dict):
            if value.get("class_name") == "__keras_tensor__":
                return {"shape": value["config"]["shape"], "dtype": value["config"]["dtype"]}
            return {k: plain(v) for k, v in value.items() if k != "name"}
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value
    return plain({k: v for k, v in spec.items() if k != "name"})


def _check_outputs(model):
    outs = model(REF["x"])
    assert len(outs) == 3
    for i, out in enumerate(outs):
        expected = REF[f"y{i}"]
        assert np.asarray(out).dtype == expected.dtype
        np.testing.assert_allclose(np.asarray(out, np.float32), expected.astype(np.float32), rtol=1e-3, atol=1e-6)


def test_a_keras_saved_ops_model_loads_and_computes_the_same():
    _check_outputs(keras.models.load_model(os.path.join(HERE, "ops_model.keras")))


def test_saved_op_nodes_are_written_as_keras_writes_them_and_load_back(tmp_path):
    inputs = keras.Input((4,))
    model = keras.Model(inputs, build_ops_model(keras.ops, inputs))
    _check_outputs(model)
    path = str(tmp_path / "ops.keras")
    model.save(path)
    ours, theirs = _config(path), _config(os.path.join(HERE, "ops_model.keras"))
    def op_entries(config):  # a call argument Keras passes by keyword (Pad's constant_values) is here positional
        entries = [_without_names(s) for s in config["layers"] if s["module"].startswith("keras.src.ops.")]
        for entry in entries:
            entry["inbound_nodes"] = [n["args"] + list(n["kwargs"].values()) for n in entry["inbound_nodes"]]
        return entries
    assert op_entries(ours) == op_entries(theirs)
    _check_outputs(keras.models.load_model(path))


def test_an_op_keras_has_no_class_for_is_refused_with_the_way_out(tmp_path):
    inputs = keras.Input((4,))
    model = keras.Model(inputs, mk.nn.l2_loss(inputs))  # minikeras's TF-style op, not a keras.ops call
    with pytest.raises(ValueError, match="wrap it in a layer"):
        model.save(str(tmp_path / "m.keras"))


def test_python_operators_on_inputs_save_as_keras_ops(tmp_path):
    """``x * 2.0 + 1`` on a KerasTensor records keras.ops.multiply / add, as Keras 3 does: the
    model saves (Keras's Multiply and Add operations) and loads with the same outputs."""
    inputs = keras.Input((4,))
    model = keras.Model(inputs, [(inputs * 2.0 + 1) / 3, -abs(inputs) ** 2])
    model.save(str(tmp_path / "m.keras"))
    saved = _config(str(tmp_path / "m.keras"))
    assert sorted(s["class_name"] for s in saved["layers"][1:]) == ["Absolute", "Add", "Multiply", "Negative",
                                                                    "Power", "TrueDivide"]
    x = np.random.default_rng(0).random((2, 4), dtype=np.float32)
    for a, b in zip(model.predict(x, verbose=0), keras.models.load_model(str(tmp_path / "m.keras")).predict(x,
                                                                                                          verbose=0)):
        np.testing.assert_array_equal(a, b)
