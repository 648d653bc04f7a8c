"""Whole models in legacy HDF5 files (``model.save('m.h5')`` / ``load_model('m.h5')``), as Keras 3:
minikeras reads the files Keras 3 wrote (tests/fixtures/legacy_h5, made by make_legacy_h5.py
there) and takes the same next Adam step; its own files round-trip, and Keras 3 reads them when
``MINIKERAS_KERAS_PYTHON`` names a Python with Keras 3 installed (e.g. tfvenv/bin/python)."""
import os
import subprocess
import warnings

import h5py
import numpy as np
import pytest

import minikeras as mk

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "legacy_h5")
EXPECTED = np.load(os.path.join(HERE, "expected.npz"))


def test_reads_keras3_cnn_and_resumes_its_adam_state():
    model = mk.saving.load_model(os.path.join(HERE, "keras_cnn.h5"))
    assert [type(layer).__name__ for layer in model.layers] == ["Conv2D", "Flatten", "Dense"]
    np.testing.assert_allclose(model.predict(EXPECTED["x"], verbose=0), EXPECTED["cnn"], rtol=1e-5, atol=1e-6)
    assert int(model.optimizer.iterations.numpy()) == 2
    model.train_on_batch(EXPECTED["x"], EXPECTED["y"])  # Keras's third step, from the restored moments
    for i, weight in enumerate(model.get_weights()):
        np.testing.assert_allclose(weight, EXPECTED[f"cnn_step3_{i}"], rtol=1e-4, atol=1e-6)


def test_reads_keras3_functional_uncompiled():
    model = mk.saving.load_model(os.path.join(HERE, "keras_functional.h5"))
    assert model.name == "regressor" and model.optimizer is None
    np.testing.assert_allclose(model.predict(EXPECTED["z"], verbose=0), EXPECTED["functional"], rtol=1e-5, atol=1e-6)


def _our_model():
    model = mk.Sequential([mk.Input((6, 6, 1)), mk.layers.Conv2D(2, 3, activation="relu"), mk.layers.Flatten(),
                           mk.layers.Dense(2, activation="softmax")])
    model.compile(optimizer=mk.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.train_on_batch(EXPECTED["x"], EXPECTED["y"])
    return model


def test_round_trip_with_the_legacy_warning_and_layout(tmp_path):
    model = _our_model()
    path = str(tmp_path / "m.h5")
    with pytest.warns(UserWarning, match="This file format is considered legacy"):
        model.save(path)
    with h5py.File(path) as f:
        assert {"model_config", "training_config", "keras_version", "backend"} <= set(f.attrs)
        assert "model_weights" in f and "optimizer_weights" in f
    loaded = mk.saving.load_model(path)
    np.testing.assert_array_equal(loaded.predict(EXPECTED["x"], verbose=0), model.predict(EXPECTED["x"], verbose=0))
    for a, b in zip(loaded.optimizer.variables, model.optimizer.variables):
        np.testing.assert_array_equal(np.asarray(a.numpy()), np.asarray(b.numpy()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mk.saving.save_model(model, str(tmp_path / "plain.hdf5"), include_optimizer=False)
    assert mk.saving.load_model(str(tmp_path / "plain.hdf5")).optimizer is None
    with pytest.raises(ValueError, match="No model config found"):
        model.save_weights(str(tmp_path / "w.weights.h5"))
        mk.saving.load_model(str(tmp_path / "w.weights.h5"))


KERAS_READS = """
import sys, numpy as np, keras
model = keras.saving.load_model(sys.argv[1])
x = np.load(sys.argv[2])["x"]
np.save(sys.argv[3], model.predict(x, verbose=0))
print(int(model.optimizer.iterations.numpy()))
"""


@pytest.mark.skipif(not os.environ.get("MINIKERAS_KERAS_PYTHON"), reason="MINIKERAS_KERAS_PYTHON is unset")
def test_keras3_reads_our_file(tmp_path):
    model = _our_model()
    path = str(tmp_path / "ours.h5")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.save(path)
    out = str(tmp_path / "pred.npy")
    result = subprocess.run([os.environ["MINIKERAS_KERAS_PYTHON"], "-c", KERAS_READS, path,
                             os.path.join(HERE, "expected.npz"), out], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "1"
    np.testing.assert_allclose(np.load(out), model.predict(EXPECTED["x"], verbose=0), rtol=1e-5, atol=1e-6)
