"""Metric state and ``.weights.h5`` files, as Keras 3.15: no metric state is written (neither a
compiled model's metrics nor a Metric held by an attribute), a Keras file without it loads into a
model that has such a Metric, and a file that has it (an older minikeras file) still restores it.
Fixtures: tests/fixtures/keras_metrics (make_metric_weights.py)."""
import os

import h5py
import numpy as np
import pytest

import minikeras as mk
from minikeras import layers

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras_metrics")


@pytest.fixture(scope="module")
def ref():
    return np.load(os.path.join(FIXTURES, "metrics.npz"))


class Tracked(mk.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = layers.Dense(2)
        self.tracker = mk.metrics.Mean(name="seen")

    def call(self, inputs):
        return self.dense(inputs)


def compile_and_step(model, ref):
    model.compile(optimizer=mk.optimizers.Adam(0.01), loss="mse", metrics=["mae", mk.metrics.MeanSquaredError()])
    model.fit(ref["x"], ref["y"], batch_size=4, epochs=1, verbose=0)


def groups(path):
    found = []
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: found.append(name) if isinstance(obj, h5py.Group) else None)
    return sorted(found)


@pytest.fixture(scope="module")
def tracked(ref):
    model = Tracked()
    model(ref["x"])
    compile_and_step(model, ref)
    return model


def test_keras_file_without_metric_state_loads_into_a_model_with_a_metric_attribute(tracked, ref):
    tracked.tracker.reset_state()
    tracked.tracker.update_state([1.0])
    tracked.load_weights(os.path.join(FIXTURES, "tracker.weights.h5"))
    np.testing.assert_allclose(tracked.dense.kernel.numpy(), ref["tracker_kernel"], rtol=1e-6)
    np.testing.assert_allclose(tracked.dense.bias.numpy(), ref["tracker_bias"], rtol=1e-6)
    np.testing.assert_allclose(tracked.predict(ref["x"], verbose=0), ref["tracker_pred"], rtol=1e-5, atol=1e-6)
    assert float(tracked.tracker.result().numpy()) == 1.0  # the file has no state for it: kept


def test_no_metric_state_is_written_as_keras(tracked, ref, tmp_path):
    tracked.tracker.update_state([2.0, 4.0])
    path = tmp_path / "tracked.weights.h5"
    tracked.save_weights(path)
    ours = set(groups(path)) - {"seed_generator", "seed_generator/vars"}  # our random state (saving/random_state)
    # Keras files the subclass's Dense by attribute (dense/vars), minikeras under layers/ (both read both)
    assert ours == {"layers", "layers/dense", "layers/dense/vars", "optimizer", "optimizer/vars", "vars"}
    assert set(ref["tracker_groups"].tolist()) == {"dense", "dense/vars", "optimizer", "optimizer/vars", "vars"}

    sequential = mk.Sequential([layers.Input((3,)), layers.Dense(2)])
    compile_and_step(sequential, ref)
    sequential.save_weights(tmp_path / "seq.weights.h5")
    assert set(groups(tmp_path / "seq.weights.h5")) - {"seed_generator", "seed_generator/vars"} == \
        set(ref["sequential_groups"].tolist())
    sequential.load_weights(os.path.join(FIXTURES, "sequential.weights.h5"))
    np.testing.assert_allclose(sequential.layers[0].kernel.numpy(), ref["sequential_kernel"], rtol=1e-6)
    np.testing.assert_allclose(sequential.layers[0].bias.numpy(), ref["sequential_bias"], rtol=1e-6)


def test_a_file_with_metric_state_still_restores_it(tracked, tmp_path):
    path = tmp_path / "older.weights.h5"
    tracked.save_weights(path)
    with h5py.File(path, "a") as f:  # the layout minikeras wrote before: <attribute>/vars/0, 1 (total, count)
        group = f.create_group("tracker/vars")
        group.attrs["name"] = "seen"
        group.create_dataset("0", data=np.float32(6.0))
        group.create_dataset("1", data=np.float32(2.0))
    tracked.tracker.reset_state()
    tracked.load_weights(path)
    assert float(tracked.tracker.result().numpy()) == 3.0
