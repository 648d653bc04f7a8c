"""fit with ``steps_per_execution``: a scanned group of steps trains on the same batches, in the
same order, with the same logs, as one step at a time.

A group of array batches that are all full-size takes them inside the scan from the whole
training arrays (given to each call as NumPy when small, else uploaded once per fit); data
over the device limit is stacked on the host; a group with a short batch runs one step at a
time. References: a NumPy SGD of the linear model on Keras 3's batch schedule (written out
per test; ``tests/test_trainers_epoch_passes.py`` has the schedules measured on Keras itself), and
``steps_per_execution=1`` with the same seed for shuffled data. Shapes are tiny: compiling
dominates.
"""
import warnings

import numpy as np
import pytest

import minikeras as mk
from minikeras.trainers import data_adapter

FEATURES, LR = 3, 0.1
KERNEL = np.array([[0.5], [-0.25], [0.1]], np.float32)


def make_data(n, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, FEATURES)).astype(np.float32)
    return x, (x @ np.array([[1.0], [2.0], [-1.0]]) + 0.5).astype(np.float32)


class Recorder(mk.callbacks.Callback):
    """The logs at each batch end (one per execution when steps are grouped)."""

    def on_train_begin(self, logs=None):
        self.logs = {}

    def on_train_batch_end(self, batch, logs=None):
        self.logs[batch] = dict(logs)


def linear(steps_per_execution):
    model = mk.Sequential([mk.layers.Dense(1, input_shape=(FEATURES,))])
    model.set_weights([KERNEL, np.zeros(1, np.float32)])
    model.compile(optimizer=mk.optimizers.SGD(LR), loss="mse", metrics=["mae"],
                  steps_per_execution=steps_per_execution)
    return model


def scans(model):
    """The scanned loops that ran: ("gather", batch_size, shuffled) for batches taken in the
    scan from the whole arrays, None for batches stacked on the host."""
    step = model._step("train").step
    return {key[1] for p in step.programs() for key in p.derived_functions if key[0] == "scan"}


def fit(model, x, y, **kwargs):
    recorder = Recorder()
    history = model.fit(x, y, verbose=0, callbacks=[recorder], **kwargs)
    return history.history, recorder.logs


def numpy_sgd(x, y, batch_size, schedule, sample_weight=None):
    """SGD on mse for the linear model, unshuffled, taking batch ``i`` (``x[i * batch_size:
    (i + 1) * batch_size]``) for each ``i`` of each epoch's list in ``schedule``; the epoch's
    running loss (sum-weighted over batches, as the loss tracker averages) and the final weights."""
    kernel, bias = KERNEL.astype(np.float64), np.zeros(1)
    n, losses = len(x), []
    sw = np.ones(n) if sample_weight is None else sample_weight.astype(np.float64)
    for batches in schedule:
        total = count = 0.0
        for index in batches:
            start = index * batch_size
            xb, yb, wb = (a[start:min(start + batch_size, n)] for a in (x, y, sw))
            error = xb @ kernel + bias - yb
            per_example = np.mean(error ** 2, axis=1) * wb
            loss = per_example.sum() / len(xb)  # Keras's sum_over_batch_size
            grad = 2 * error * wb[:, None] / len(xb)
            kernel, bias = kernel - LR * xb.T @ grad, bias - LR * grad.sum(0)
            total, count = total + loss * len(xb), count + len(xb)
        losses.append(total / count)
    return [kernel, bias], losses


# (samples, steps_per_epoch, steps_per_execution, epochs): the batches each epoch takes by Keras
# 3's rule (batch i = samples 4i..4i+3, the last one shorter), and its "ran out of data" warnings
SCHEDULES = [
    # 3 batches (4, 4, 2) an epoch; groups of 2: [0 1] is scanned, [2] runs alone
    ((10, None, 2, 2), [[0, 1, 2], [0, 1, 2]], 0),
    # 4 batches (4, 4, 4, 2), 3 steps an epoch: the pass goes on into the next epoch, which takes
    # only the short batch 3 and ends there (the pass is done), then a new pass; [0 1 2] is scanned
    ((14, 3, 3, 3), [[0, 1, 2], [3], [0, 1, 2]], 0),
    # 5 steps of 2 on 3 batches: [0 1], [2], then the data has run out: a warning each epoch
    ((10, 5, 2, 2), [[0, 1, 2], [0, 1, 2]], 2),
]


@pytest.mark.parametrize("case, schedule, warned", SCHEDULES)
def test_unshuffled_groups_match_numpy_sgd(case, schedule, warned):
    n, steps_per_epoch, steps_per_execution, epochs = case
    x, y = make_data(n)
    model = linear(steps_per_execution=steps_per_execution)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history, _ = fit(model, x, y, batch_size=4, epochs=epochs, shuffle=False, steps_per_epoch=steps_per_epoch)
    assert sum("Your input ran out of data" in str(w.message) for w in caught) == warned
    weights, losses = numpy_sgd(x, y, 4, schedule)
    for actual, expected in zip(model.get_weights(), weights):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)
    assert history["loss"] == pytest.approx(losses, rel=1e-5)
    assert scans(model) == {("gather", 4, False)}


@pytest.mark.parametrize("route", ["numpy", "uploaded", "host"])
@pytest.mark.parametrize("shuffle", [False, True])
def test_grouped_steps_match_single_steps_with_the_same_seed(shuffle, route, monkeypatch):
    # 24 samples in batches of 4, 6 steps an epoch: every batch is full, both groups of 3 take
    # their batches in the scan (the first group of the first epoch traces the step) from the
    # data given to each call as NumPy (small data), or uploaded once; or, for data over the
    # device limit, from batches stacked on the host
    if route == "uploaded":
        monkeypatch.setattr(data_adapter, "SMALL_ARRAYS", 0)
    if route == "host":
        monkeypatch.setattr(data_adapter, "DEVICE_DATA_LIMIT", 0)
    x, y = make_data(24, seed=1)
    runs = []
    for steps_per_execution in (1, 3):
        mk.random.set_seed(5)
        model = linear(steps_per_execution)
        runs.append((model, *fit(model, x, y, batch_size=4, epochs=3, shuffle=shuffle, steps_per_epoch=6)))
    (single, single_history, single_logs), (grouped, grouped_history, grouped_logs) = runs
    assert scans(grouped) == ({None} if route == "host" else {("gather", 4, shuffle)})
    for actual, expected in zip(grouped.get_weights(), single.get_weights()):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)
    assert set(grouped_history) == {"loss", "mae"}
    for key in ("loss", "mae"):
        assert grouped_history[key] == pytest.approx(single_history[key], rel=1e-5)
    assert sorted(grouped_logs) == [2, 5]  # the last step of each execution, with its logs
    for batch, logs in grouped_logs.items():
        assert logs == pytest.approx(single_logs[batch], rel=1e-5)


def test_sample_weight_and_float64_data_in_groups():
    x, y = make_data(24, seed=2)
    sample_weight = np.linspace(0.5, 2.0, 24)  # float64, as are x and y below
    model = linear(steps_per_execution=3)
    history, _ = fit(model, x.astype(np.float64), y.astype(np.float64), sample_weight=sample_weight,
                     batch_size=4, epochs=2, shuffle=False, steps_per_epoch=6)
    weights, losses = numpy_sgd(x, y, 4, [range(6)] * 2, sample_weight)
    assert scans(model) == {("gather", 4, False)}
    for actual, expected in zip(model.get_weights(), weights):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)
    assert history["loss"] == pytest.approx(losses, rel=1e-5)


class TwoInputs(mk.Model):
    """The linear model on a dict of inputs: features 0-1 under 'a', feature 2 under 'b'."""

    def __init__(self):
        super().__init__()
        self.dense = mk.layers.Dense(1)

    def build(self, input_shape):
        self.built = True  # the Dense builds on its first call

    def call(self, inputs, training=None):
        return self.dense(mk.concat([inputs["a"], inputs["b"]], axis=-1))


def test_dict_inputs_in_groups():
    x, y = make_data(24, seed=3)
    model = TwoInputs()
    model({"a": x[:1, :2], "b": x[:1, 2:]})  # builds the weights
    model.set_weights([KERNEL, np.zeros(1, np.float32)])
    model.compile(optimizer=mk.optimizers.SGD(LR), loss="mse", steps_per_execution=3)
    history, _ = fit(model, {"b": x[:, 2:], "a": x[:, :2]}, y, batch_size=4, epochs=2, shuffle=False,
                     steps_per_epoch=6)
    weights, losses = numpy_sgd(x, y, 4, [range(6)] * 2)
    assert scans(model) == {("gather", 4, False)}
    for actual, expected in zip(model.get_weights(), weights):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)
    assert history["loss"] == pytest.approx(losses, rel=1e-5)
