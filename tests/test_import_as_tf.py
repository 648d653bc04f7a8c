"""``import minikeras as tf`` runs TF 2 programs: the programs in tests/tf_programs/ (tensorflow.org's
quickstarts and basic training loop, cut to run in seconds) with ``tf.keras.*`` spelled out, and
``from minikeras import keras`` gives the same objects to Keras programs."""
import os
import runpy
from pathlib import Path

import pytest

import minikeras as mk

PROGRAMS = Path(__file__).resolve().parent / "tf_programs"
needs_mnist = pytest.mark.skipif(not os.environ.get("MINIKERAS_DATASETS"),
                                 reason="MINIKERAS_DATASETS is unset: the quickstarts read the real MNIST files")


def run(name):
    return runpy.run_path(str(PROGRAMS / f"{name}.py"), run_name="__main__")


def test_keras_surface_is_minikeras():
    import minikeras as tf
    from minikeras import keras
    assert tf.keras is keras
    for name in ("layers", "models", "optimizers", "losses", "metrics", "callbacks", "utils", "datasets",
                 "regularizers", "initializers", "activations", "saving"):
        assert getattr(keras, name) is getattr(mk, name), name
    assert keras.Sequential is mk.Sequential and keras.Model is mk.Model and keras.Input is mk.Input
    assert keras.backend.floatx() == "float32" and keras.backend.epsilon() == 1e-7
    from minikeras.keras.layers import Dense  # the submodules import by name too
    assert Dense is mk.layers.Dense


def test_linear_regression_program():
    out = run("linear_regression")
    assert abs(out["module_w"] - 3.0) < 0.4 and abs(out["module_b"] - 2.0) < 0.6, (out["module_w"], out["module_b"])
    assert abs(out["keras_w"] - 3.0) < 0.4 and abs(out["keras_b"] - 2.0) < 0.4, (out["keras_w"], out["keras_b"])


@needs_mnist
def test_beginner_quickstart_program():
    out = run("beginner_quickstart")
    assert out["test_accuracy"] > 0.85, out["test_accuracy"]
    assert out["probabilities"].shape == (5, 10)


@needs_mnist
def test_advanced_quickstart_program():
    out = run("advanced_quickstart")
    assert float(out["test_accuracy"].result()) > 0.8


def test_a_keras_program():
    source = """
from minikeras import keras
import numpy as np
model = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(4, activation="relu"), keras.layers.Dense(1)])
model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
x = np.random.default_rng(0).normal(size=(64, 3)).astype("float32")
history = model.fit(x, x.sum(axis=1, keepdims=True), epochs=2, verbose=0)
"""
    namespace = {}
    exec(compile(source, "keras_program", "exec"), namespace)  # noqa: S102  (a program of this file's own)
    assert len(namespace["history"].history["loss"]) == 2
