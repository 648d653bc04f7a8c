"""Preprocessing layers in .keras files, interchangeable with Keras 3: files Keras 3.15 wrote
(tests/fixtures/preprocessing/make_keras_files.py) load here with their vocabularies (assets)
and give Keras's outputs; minikeras's files carry the vocabulary as Keras lays it out."""
import os
import zipfile

import numpy as np
import pytest

import minikeras as mk

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "preprocessing")
EXPECTED = np.load(os.path.join(HERE, "outputs.npz"))


@pytest.mark.parametrize("name,inputs", [
    ("text", np.array(["a b zz", "the cat, the dog!"])),
    ("lookup", np.array([["x", "", "z", "q"]])),
    ("norm", np.array([[1.0, 2.0], [0.0, -1.0]], np.float32)),
])
def test_keras_files_load_with_their_state(name, inputs):
    model = mk.saving.load_model(os.path.join(HERE, f"{name}.keras"))
    np.testing.assert_allclose(model(inputs).numpy(), EXPECTED[name], rtol=1e-6)
    if f"{name}_vocabulary" in EXPECTED:
        assert model.layers[0].get_vocabulary() == EXPECTED[f"{name}_vocabulary"].tolist()


def test_minikeras_files_round_trip_with_keras_layout(tmp_path):
    vectorize = mk.layers.TextVectorization(max_tokens=20, output_sequence_length=4)
    vectorize.adapt(np.array(["a b c", "b c", "c"]))
    model = mk.Sequential([vectorize, mk.layers.Embedding(20, 2)])
    texts = np.array(["a b", "c zz"])
    expected = model(texts).numpy()
    path = str(tmp_path / "text.keras")
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        assert archive.read("assets/layers/text_vectorization/vocabulary.txt") == b"\n[UNK]\nc\nb\na"
    loaded = mk.saving.load_model(path)
    assert loaded.layers[0].get_vocabulary() == ["", "[UNK]", "c", "b", "a"]
    np.testing.assert_array_equal(loaded(texts).numpy(), expected)
