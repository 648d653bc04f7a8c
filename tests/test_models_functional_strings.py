"""Functional models with string Inputs: the string preprocessing layers that read the Inputs
run on the host, the rest of the graph is the compiled step; fit, evaluate and predict take
arrays, lists of str and Datasets of strings (the tutorials' export model, and a string Input
beside a numeric one). Keras 3.15 files (tests/fixtures/preprocessing/make_string_models.py)
load with Keras's outputs, and minikeras's files keep Keras's layout."""
import json
import os
import zipfile

import numpy as np
import pytest

import minikeras as mk

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "preprocessing")
EXPECTED = np.load(os.path.join(HERE, "string_models.npz"))
TEXTS = np.array(["a great movie", "awful", "good good plot", "the film was bad"])  # as the fixture's
NUMBERS = np.array([[0.5, -1.0], [1.0, 2.0], [0.0, 0.25], [-0.5, 1.5]], np.float32)
CORPUS = np.array(["good movie great", "bad awful film", "great acting good", "awful bad plot"] * 2)
LABELS = np.array([1, 0, 1, 0] * 2, np.float32)


@pytest.fixture(scope="module")
def export():
    """The Keras-made export model, loaded and compiled once (its steps shared by the tests)."""
    model = mk.saving.load_model(os.path.join(HERE, "export.keras"))
    model.compile(optimizer=mk.optimizers.Adam(0.05), loss="binary_crossentropy", metrics=["accuracy"])
    return model


@pytest.fixture(scope="module")
def two_inputs():
    model = mk.saving.load_model(os.path.join(HERE, "two_inputs.keras"))
    model.compile(optimizer="sgd", loss="mse")
    return model


def test_keras_export_model_predicts_as_keras_from_arrays_lists_and_datasets(export):
    expected = EXPECTED["export"]
    assert export.inputs[0].shape == (None, 1) and export.inputs[0].dtype == mk.string
    np.testing.assert_allclose(export.predict(TEXTS, verbose=0), expected, rtol=1e-5)
    np.testing.assert_allclose(export.predict(list(TEXTS), verbose=0), expected, rtol=1e-5)
    np.testing.assert_allclose(export.predict(TEXTS[:, None], verbose=0), expected, rtol=1e-5)
    batches = mk.data.Dataset.from_tensor_slices(TEXTS).batch(3)
    np.testing.assert_allclose(export.predict(batches, verbose=0), expected, rtol=1e-5)
    np.testing.assert_allclose(export(list(TEXTS)).numpy(), expected, rtol=1e-5)  # eager: the whole graph


def test_fit_and_evaluate_take_raw_strings(export):
    loss_arrays, _ = export.evaluate(CORPUS, LABELS, batch_size=4, verbose=0)
    ds = mk.data.Dataset.from_tensor_slices((CORPUS, LABELS)).batch(4)
    loss_ds, _ = export.evaluate(ds, verbose=0)
    np.testing.assert_allclose(loss_ds, loss_arrays, rtol=1e-5)
    history = export.fit(CORPUS, LABELS, batch_size=4, epochs=2, validation_split=0.25, verbose=0)
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    export.fit(ds, validation_data=(CORPUS[:4], LABELS[:4]), epochs=1, verbose=0)
    assert export.evaluate(ds, verbose=0)[0] < loss_ds  # it learned from the strings


def test_string_and_numeric_inputs(two_inputs):
    expected = EXPECTED["two_inputs"]
    assert two_inputs.inputs[0].shape == (None,)
    np.testing.assert_allclose(two_inputs.predict([TEXTS, NUMBERS], verbose=0), expected, rtol=1e-5, atol=1e-6)
    by_name = two_inputs.predict({"words": list(TEXTS), "numbers": NUMBERS}, verbose=0)
    np.testing.assert_allclose(by_name, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(two_inputs([TEXTS, NUMBERS]).numpy(), expected, rtol=1e-5, atol=1e-6)
    ds = mk.data.Dataset.from_tensor_slices(((TEXTS, NUMBERS), expected)).batch(2)
    assert two_inputs.evaluate(ds, verbose=0) < 1e-10
    integers = (NUMBERS * 4).astype(np.int32)  # cast to the numeric Input's float32 on the host
    two_inputs.fit([TEXTS, integers], expected, epochs=1, batch_size=2, verbose=0)


def test_strings_for_a_numeric_input_are_refused_naming_it(two_inputs):
    for call in (lambda: two_inputs.predict([TEXTS, TEXTS], verbose=0), lambda: two_inputs([TEXTS, TEXTS])):
        with pytest.raises(ValueError, match="Input 'numbers' of model .* expects float32 .* received strings"):
            call()
    numeric = mk.Model(*(lambda x: (x, mk.layers.Dense(1)(x)))(mk.Input((2,), name="features")))
    numeric.compile(loss="mse")
    with pytest.raises(TypeError, match="Input 'features'"):  # also a TypeError, as minikeras refuses strings
        numeric.predict(np.array([["a", "b"]]), verbose=0)
    assert numeric.predict([[1.0, 2.0]], verbose=0).shape == (1, 1)  # a nested list of numbers is no string


def test_made_here_saved_and_loaded_with_keras_layout(tmp_path):
    mk.utils.set_random_seed(0)
    vectorize = mk.layers.TextVectorization(max_tokens=20, output_sequence_length=5)
    vectorize.adapt(CORPUS)
    text = mk.Input(shape=(), dtype="string")
    inner = mk.Sequential([mk.layers.Embedding(20, 4), mk.layers.GlobalAveragePooling1D(), mk.layers.Dense(1)])
    model = mk.Model(text, inner(vectorize(text)))
    expected = model(TEXTS).numpy()
    path = str(tmp_path / "export.keras")
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        config = json.loads(archive.read("config.json"))["config"]
        assert archive.read("assets/layers/text_vectorization/vocabulary.txt").startswith(b"\n[UNK]\n")
    assert config["layers"][0]["config"]["dtype"] == "string"
    assert config["layers"][1]["inbound_nodes"][0]["args"][0]["config"]["dtype"] == "string"
    loaded = mk.saving.load_model(path)
    np.testing.assert_allclose(loaded.predict(TEXTS, verbose=0), expected, rtol=1e-6)


def test_on_batch_methods_take_raw_strings(two_inputs):
    expected = two_inputs.predict([TEXTS, NUMBERS], verbose=0)  # after the fit above
    np.testing.assert_allclose(two_inputs.predict_on_batch([TEXTS, NUMBERS]), expected, rtol=1e-6)
    assert two_inputs.test_on_batch([list(TEXTS), NUMBERS], expected) < 1e-10
    assert two_inputs.train_on_batch([TEXTS, NUMBERS], expected + 1) > 0.5
