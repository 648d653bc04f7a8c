"""TextVectorization and StringLookup with output_mode='tf_idf' in .keras files: the IDF
weights are kept as Keras 3 keeps them (``vars/idf_weights`` in the weights file, beside the
vocabulary asset); Keras 3.15 files (tests/fixtures/preprocessing/make_string_models.py) load
with Keras's outputs and minikeras's files have Keras's layout."""
import io
import os
import zipfile

import h5py
import numpy as np
import pytest

import minikeras as mk

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "preprocessing")
EXPECTED = np.load(os.path.join(HERE, "string_models.npz"))
TF_IDF_CORPUS = np.array(["a b c", "b c", "c", "the cat sat", "the dog"])
TF_IDF_TEXTS = np.array(["a b zz", "the cat the"])
LOOKUP_CORPUS = np.array([["x", "y", "y"], ["z", "z", "z"]])
LOOKUP_INPUTS = np.array([["x", "q", "z"], ["y", "y", "x"]])


def _weights(path):
    with zipfile.ZipFile(path) as archive:
        h5file = h5py.File(io.BytesIO(archive.read("model.weights.h5")), "r")
    arrays = {}

    def keep(name, obj):
        if isinstance(obj, h5py.Dataset):
            arrays[name] = obj[()]
    h5file.visititems(keep)
    return arrays


@pytest.mark.parametrize("name,inputs", [("tf_idf", TF_IDF_TEXTS), ("tf_idf_lookup", LOOKUP_INPUTS)])
def test_keras_files_load_with_their_idf_weights(name, inputs):
    model = mk.saving.load_model(os.path.join(HERE, f"{name}.keras"))
    np.testing.assert_allclose(model(inputs).numpy(), EXPECTED[name], rtol=1e-6)
    layer = model.layers[0]
    lookup_weights = EXPECTED[f"{name}_weights"]
    assert layer.get_config()["output_mode"] == "tf_idf"
    assert len(layer.get_vocabulary()) == len(lookup_weights)


def test_made_here_keeps_keras_layout_and_round_trips(tmp_path):
    vectorize = mk.layers.TextVectorization(max_tokens=10, output_mode="tf_idf")
    vectorize.adapt(TF_IDF_CORPUS)
    lookup = mk.layers.StringLookup(output_mode="tf_idf")
    lookup.adapt(LOOKUP_CORPUS)
    for model, inputs, name, group in [
            (mk.Sequential([mk.Input(shape=(), dtype="string"), vectorize]), TF_IDF_TEXTS, "tf_idf",
             "layers/text_vectorization"),
            (mk.Sequential([mk.Input(shape=(3,), dtype="string"), lookup]), LOOKUP_INPUTS, "tf_idf_lookup",
             "layers/string_lookup")]:
        np.testing.assert_allclose(model(inputs).numpy(), EXPECTED[name], rtol=1e-6)  # the same adapt as Keras
        path = str(tmp_path / f"{name}.keras")
        model.save(path)
        arrays = _weights(path)
        np.testing.assert_allclose(arrays[f"{group}/vars/idf_weights"], EXPECTED[f"{name}_weights"], rtol=1e-6)
        if name == "tf_idf":  # its lookup layer's group too, as Keras writes it
            np.testing.assert_allclose(arrays[f"{group}/_lookup_layer/vars/idf_weights"], EXPECTED["tf_idf_weights"],
                                       rtol=1e-6)
        np.testing.assert_allclose(mk.saving.load_model(path)(inputs).numpy(), EXPECTED[name], rtol=1e-6)


def test_padded_to_max_tokens_round_trips(tmp_path):
    vectorize = mk.layers.TextVectorization(max_tokens=10, output_mode="tf_idf", pad_to_max_tokens=True)
    vectorize.adapt(TF_IDF_CORPUS)
    model = mk.Sequential([mk.Input(shape=(), dtype="string"), vectorize])
    expected = model(TF_IDF_TEXTS).numpy()
    assert expected.shape == (2, 10)
    path = str(tmp_path / "padded.keras")
    model.save(path)
    assert _weights(path)["layers/text_vectorization/vars/idf_weights"].shape == (10,)  # padded, as Keras writes
    np.testing.assert_allclose(mk.saving.load_model(path)(TF_IDF_TEXTS).numpy(), expected, rtol=1e-6)


def test_weights_files_keep_idf_weights(tmp_path):
    lookup = mk.layers.IntegerLookup(output_mode="tf_idf")
    lookup.adapt(np.array([[1, 2, 2], [3, 3, 3]]))
    model = mk.Sequential([mk.Input(shape=(3,), dtype="int64"), lookup])
    inputs = np.array([[1, 7, 3]])
    expected = model(inputs).numpy()
    path = str(tmp_path / "lookup.weights.h5")
    model.save_weights(path)
    fresh = mk.layers.IntegerLookup(output_mode="tf_idf", vocabulary=[3, 2, 1], idf_weights=[1.0, 1.0, 1.0])
    other = mk.Sequential([mk.Input(shape=(3,), dtype="int64"), fresh])
    other.load_weights(path)  # the IDF weights only (a vocabulary is an asset of .keras files)
    np.testing.assert_allclose(other(inputs).numpy(), expected, rtol=1e-6)
