"""HashedCrossing against Keras 3 (TensorFlow's cross_hashed, called by Keras on every backend).

``tests/fixtures/keras_hashed_crossing/hashed_crossing.json`` holds Keras's bins for string,
integer (64-bit and 32-bit, negative) and mixed features, the same on JAX and on TensorFlow
(``make_fixtures.py`` checks that); ``crossing_model.keras`` is a functional model Keras saved.
"""
import json
import os
import zipfile

import numpy as np
import pytest
from conftest import assert_close

import minikeras as mk
from minikeras import keras

pytest.importorskip("farmhash")  # strings are hashed by FarmHash Fingerprint64 (minikeras[text])

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_hashed_crossing")
CASES = json.load(open(os.path.join(HERE, "hashed_crossing.json")))


def _features(case):
    if not isinstance(case["features"][0], list):
        return tuple(np.array(f) for f in case["features"])
    return tuple(np.array(f) if isinstance(np.ravel(f)[0], str) else np.array(f, dtype=case["int_dtype"])
                 for f in case["features"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_bins_and_one_hot_vectors_are_keras_s(name):
    case = CASES[name]
    features = _features(case)
    bins = keras.layers.HashedCrossing(num_bins=case["num_bins"])(features)
    assert bins.numpy().tolist() == case["bins"]
    assert bins.dtype == mk.int32  # Keras on JAX: int64 held as int32 without x64
    if name == "scalar":
        return
    hot = keras.layers.HashedCrossing(num_bins=case["num_bins"], output_mode="one_hot")(list(features))
    assert hot.shape == tuple(case["one_hot_shape"]) and hot.dtype == mk.float32
    expected = np.eye(case["num_bins"], dtype=np.float32)[np.asarray(case["bins"]).reshape(hot.shape[:-1])]
    assert_close(hot, expected, rtol=0, atol=0, what=f"{name} one_hot")


def test_config_symbolic_shapes_and_a_functional_model_on_the_host():
    layer = keras.layers.HashedCrossing(num_bins=7, output_mode="one_hot", name="cross")
    config = layer.get_config()
    assert {k: config[k] for k in ("num_bins", "output_mode", "sparse")} == {
        "num_bins": 7, "output_mode": "one_hot", "sparse": False}
    clone = keras.layers.HashedCrossing.from_config(config)
    assert clone.get_config() == config
    assert keras.layers.HashedCrossing(num_bins=3).get_config()["dtype"] == "int64"
    a, b = mk.Input((1,), dtype="string"), mk.Input((1,), dtype="int32")
    out = layer((a, b))
    assert (out.shape, out.dtype) == ((None, 7), "float32")
    assert keras.layers.HashedCrossing(num_bins=7)((a, b)).shape == (None, 1)
    model = mk.Model([a, b], out)
    case = CASES["column"]
    predicted = model.predict(list(_features(case)), verbose=0)
    assert predicted.argmax(-1).tolist() == [row[0] for row in case["bins"]]


def test_keras_model_file_loads_and_ours_is_written_as_keras_writes_it(tmp_path):
    model = mk.saving.load_model(os.path.join(HERE, "crossing_model.keras"))
    case = CASES["column"]
    assert model.predict(list(_features(case)), verbose=0).argmax(-1).tolist() == [row[0] for row in case["bins"]]
    path = str(tmp_path / "ours.keras")
    model.save(path)
    with zipfile.ZipFile(path) as ours, zipfile.ZipFile(os.path.join(HERE, "crossing_model.keras")) as theirs:
        layers_ours = json.loads(ours.read("config.json"))["config"]["layers"]
        layers_theirs = json.loads(theirs.read("config.json"))["config"]["layers"]
    cross_ours, cross_theirs = layers_ours[-1], layers_theirs[-1]
    assert (cross_ours["module"], cross_ours["class_name"]) == ("keras.layers", "HashedCrossing")
    assert cross_ours["config"] == cross_theirs["config"]
    again = mk.saving.load_model(path)
    assert again.predict(list(_features(case)), verbose=0).argmax(-1).tolist() == [row[0] for row in case["bins"]]


def test_bad_input_is_refused_with_keras_s_messages():
    layer = keras.layers.HashedCrossing(num_bins=5)
    with pytest.raises(ValueError, match="should be called on a list or tuple of inputs"):
        layer(np.array([1, 2]))
    with pytest.raises(ValueError, match="should be called on at least two inputs"):
        layer([np.array([1, 2])])
    with pytest.raises(ValueError, match=r"should have shape `\(\)`, `\(batch_size\)` or `\(batch_size, 1\)`. "
                                         r"Received: shapes \[\(2, 2\), \(2, 2\)\]"):
        layer((np.ones((2, 2), np.int32), np.ones((2, 2), np.int32)))
    with pytest.raises(ValueError, match=r"should have equal shape. Received: shapes \[\(2,\), \(3,\)\]"):
        layer((np.array([1, 2]), np.array([1, 2, 3])))
    with pytest.raises(ValueError, match=r"integer or string dtype. Received: dtypes \['float32', 'int64'\]"):
        layer((np.array([1.0, 2.0], np.float32), np.array([1, 2])))
    with pytest.raises(ValueError, match="Invalid value for argument `output_mode`"):
        keras.layers.HashedCrossing(num_bins=5, output_mode="multi_hot")
    with pytest.raises(ValueError, match="`sparse=True` can only be used with the TensorFlow backend"):
        keras.layers.HashedCrossing(num_bins=5, output_mode="one_hot", sparse=True)
    with pytest.raises(ValueError, match="`num_bins` must be a positive integer. Received: num_bins=0"):
        keras.layers.HashedCrossing(num_bins=0)
