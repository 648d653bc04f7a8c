"""A Sequential whose leading layers are string preprocessing layers takes raw strings in
fit, evaluate and predict (the tutorials' export model): the host layers run before the
compiled step, whose result equals running the layers one after the other."""
import numpy as np
import pytest

import minikeras as mk

TEXTS = np.array(["good movie great", "bad awful film", "great acting good", "awful bad plot"] * 4)
LABELS = np.array([1, 0, 1, 0] * 4, np.float32)


@pytest.fixture(scope="module")
def models():
    mk.utils.set_random_seed(0)
    vectorize = mk.layers.TextVectorization(max_tokens=20, output_sequence_length=5)
    vectorize.adapt(TEXTS)
    inner = mk.Sequential([mk.layers.Embedding(20, 4), mk.layers.GlobalAveragePooling1D(), mk.layers.Dense(1)])
    export = mk.Sequential([vectorize, inner, mk.layers.Activation("sigmoid")])
    export.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return vectorize, inner, export


def test_predict_and_call_take_raw_strings(models):
    vectorize, inner, export = models
    expected = 1 / (1 + np.exp(-inner(vectorize(TEXTS[:3])).numpy()))
    np.testing.assert_allclose(export.predict(TEXTS[:3], verbose=0), expected, rtol=1e-5)
    np.testing.assert_allclose(export(list(TEXTS[:3])).numpy(), expected, rtol=1e-5)
    assert export.layers[0] is vectorize and export.output_shape == (None, 1)


def test_fit_and_evaluate_on_arrays_and_datasets(models):
    _, _, export = models
    history = export.fit(TEXTS, LABELS, epochs=1, batch_size=8, validation_split=0.25, verbose=0)
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    ds = mk.data.Dataset.from_tensor_slices((TEXTS, LABELS)).batch(8)
    loss, _ = export.evaluate(ds, verbose=0)
    loss_arrays, _ = export.evaluate(TEXTS, LABELS, batch_size=8, verbose=0)
    np.testing.assert_allclose(loss, loss_arrays, rtol=1e-5)
    export.fit(ds, validation_data=(TEXTS[:4], LABELS[:4]), epochs=1, verbose=0)


def test_a_model_without_string_layers_still_refuses_strings():
    model = mk.Sequential([mk.layers.Dense(1)])
    model.compile(loss="mse")
    with pytest.raises(TypeError):
        model.predict(np.array(["a", "b"]), verbose=0)
