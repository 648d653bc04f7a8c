"""Keras 3 reads minikeras's files: ``.weights.h5`` (with Adam's state: Keras takes the same
next step) and ``.keras`` (config.json, compile config, weights). Skipped where Keras is not
installed; run it with an environment that has both, e.g.

    KERAS_BACKEND=jax PYTHONPATH=. /tmp/ref-venv/bin/python -m pytest tests/test_saving_keras_reads_ours.py
"""
import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras")

import minikeras as mk

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_files")


def data():
    rng = np.random.default_rng(3)
    return rng.normal(size=(8, 4)).astype("float32"), rng.integers(0, 3, size=(8,)).astype("int32")


def test_keras_resumes_our_adam_checkpoint_with_our_next_step(tmp_path):
    x, y = data()
    ours = mk.Sequential([mk.Input((4,)), mk.layers.Dense(5, activation="relu"), mk.layers.Dense(3)])
    ours.compile(optimizer=mk.optimizers.Adam(0.01), loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    ours.train_on_batch(x, y)
    ours.train_on_batch(x, y)
    path = str(tmp_path / "ours.weights.h5")
    ours.save_weights(path)
    ours.train_on_batch(x, y)

    theirs = keras.Sequential([keras.Input((4,)), keras.layers.Dense(5, activation="relu"), keras.layers.Dense(3)])
    theirs.compile(optimizer=keras.optimizers.Adam(0.01),
                   loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    theirs.optimizer.build(theirs.trainable_variables)
    theirs.load_weights(path)
    assert int(theirs.optimizer.iterations.numpy()) == 2
    theirs.train_on_batch(x, y)
    for a, b in zip(theirs.weights, ours.weights):
        np.testing.assert_allclose(np.asarray(a.numpy()), b.numpy(), rtol=1e-5, atol=1e-6)
    for a, b in zip(theirs.optimizer.variables, ours.optimizer.variables):
        np.testing.assert_allclose(np.asarray(a.numpy()), np.asarray(b.numpy()), rtol=1e-5, atol=1e-8)


def test_keras_loads_our_keras_file(tmp_path):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(4, 6, 6, 1)).astype("float32")
    y = np.array([0, 1, 1, 0], "int32")
    ours = mk.Sequential([mk.layers.Conv2D(2, 3, activation="relu", input_shape=(6, 6, 1)), mk.layers.Flatten(),
                          mk.layers.Dense(2, activation="softmax")])
    ours.compile(optimizer=mk.optimizers.Adam(0.001), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    ours.train_on_batch(x, y)
    path = str(tmp_path / "ours.keras")
    ours.save(path)
    theirs = keras.saving.load_model(path)
    assert [type(layer).__name__ for layer in theirs.layers] == ["Conv2D", "Flatten", "Dense"]
    np.testing.assert_allclose(theirs.predict(x, verbose=0), ours.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    assert isinstance(theirs.optimizer, keras.optimizers.Adam) and int(theirs.optimizer.iterations.numpy()) == 1
    ours.train_on_batch(x, y)
    theirs.train_on_batch(x, y)
    for a, b in zip(theirs.weights, ours.weights):
        np.testing.assert_allclose(np.asarray(a.numpy()), b.numpy(), rtol=1e-5, atol=1e-6)


def test_keras_loads_our_file_of_more_shared_layers(tmp_path):
    # Keras's own file, loaded here and written again by minikeras, loads back in Keras
    data = np.load(os.path.join(HERE, "layers.npz"))
    ours = mk.saving.load_model(os.path.join(HERE, "layers.keras"))
    path = str(tmp_path / "layers.keras")
    ours.save(path)
    theirs = keras.saving.load_model(path)
    assert [type(layer).__name__ for layer in theirs.layers] == [type(layer).__name__ for layer in ours.layers]
    np.testing.assert_allclose(theirs.predict(data["x"], verbose=0), data["predictions"], rtol=1e-5, atol=1e-6)


def test_keras_loads_our_functional_keras_file(tmp_path):
    a, b = mk.Input((4,), name="a"), mk.Input((3,), name="b")
    hidden = mk.layers.Dense(5, activation="relu", name="hidden")(mk.layers.Concatenate()([a, b]))
    ours = mk.Model([a, b], [mk.layers.Dense(1, name="score")(hidden),
                             mk.layers.Dense(3, activation="softmax", name="cls")(hidden)], name="two")
    ours.compile(optimizer="adam", loss=["mse", "sparse_categorical_crossentropy"])
    xa, xb = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4), np.ones((2, 3), np.float32)
    ours.train_on_batch([xa, xb], [np.ones((2, 1), np.float32), np.array([0, 2])])
    path = str(tmp_path / "functional.keras")
    ours.save(path)
    theirs = keras.saving.load_model(path)
    for mine, keras_out in zip(ours.predict([xa, xb], verbose=0), theirs.predict([xa, xb], verbose=0)):
        np.testing.assert_allclose(keras_out, mine, rtol=1e-5, atol=1e-6)
