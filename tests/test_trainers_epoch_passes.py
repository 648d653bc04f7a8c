"""fit(steps_per_epoch=...), evaluate(steps=...) and predict(steps=...) take batches as Keras 3
does: a pass over the data goes on across epochs, an epoch that reaches the end of the data
stops there with Keras's "ran out of data" warning and training goes on with the next epoch;
nothing wraps around.

The expectations are Keras 3.15.1's own (TensorFlow backend, eager and compiled alike),
printed by tests/fixtures/steps_per_epoch/keras_schedules.py: x = 0..9, y = 1, a bias-free
Dense(1) from zeros, SGD(0.01), mse, batches of 4 (batch i = samples 4i..4i+3: [0-3], [4-7],
[8 9]), shuffle=False. One model serves every case (its step compiles once).
"""
import warnings

import numpy as np
import pytest

import minikeras as mk
from minikeras.trainers import data_adapter
from minikeras.trainers.epoch_passes import RAN_OUT

X = np.arange(10, dtype=np.float32)[:, None]
Y = np.ones((10, 1), np.float32)

# (dataset, steps_per_epoch, steps_per_execution, epochs, batch_size, batches in the order Keras
# trained on them, its callbacks' epoch/batch-begin events, its warnings, its history loss, its
# final weight): tests/fixtures/steps_per_epoch/keras_schedules.py's output, pasted
KERAS = [
    (False, 2, 1, 4, 4, [0, 1, 2, 0, 1, 2], "E0 b0 b1 E1 b0 E2 b0 b1 E3 b0", 2,
     [0.849175, 0.004528, 0.391707, 0.141292], 0.09761963039636612),
    (False, 3, 1, 2, 4, [0, 1, 2, 0, 1, 2], "E0 b0 b1 b2 E1 b0 b1 b2", 0, [0.680246, 0.341624], 0.09761963039636612),
    (False, 5, 1, 2, 4, [0, 1, 2, 0, 1, 2], "E0 b0 b1 b2 E1 b0 b1 b2", 2, [0.680246, 0.341624], 0.09761963039636612),
    (False, 2, 2, 4, 4, [0, 1, 2, 0, 1, 2], "E0 b0 E1 b0 E2 b0 E3 b0", 0,
     [0.849175, 0.004528, 0.391707, 0.141292], 0.09761963039636612),
    (False, 3, 2, 4, 4, [0, 1, 2] * 4, "E0 b0 b2 E1 b0 b2 E2 b0 b2 E3 b0 b2", 0,
     [0.680246, 0.341624, 0.369589, 0.364672], 0.09996025264263153),
    (False, 5, 2, 4, 4, [0, 1, 2] * 4, "E0 b0 b2 E1 b0 b2 E2 b0 b2 E3 b0 b2", 4,
     [0.680246, 0.341624, 0.369589, 0.364672], 0.09996025264263153),
    (False, 2, 3, 4, 4, [0, 1, 2] * 4, "E0 b0 E1 b0 E2 b0 E3 b0", 0,
     [0.680246, 0.341624, 0.369589, 0.364672], 0.09996025264263153),
    (False, 4, 3, 4, 4, [0, 1, 2] * 4, "E0 b0 E1 b0 E2 b0 E3 b0", 4,
     [0.680246, 0.341624, 0.369589, 0.364672], 0.09996025264263153),
    (True, 2, 1, 4, 4, [0, 1, 2, 0, 1, 2], "E0 b0 b1 E1 b0 E2 b0 b1 E3 b0", 2,
     [0.849175, 0.004528, 0.391707, 0.141292], 0.09761963039636612),
    (True, 5, 1, 2, 4, [0, 1, 2, 0, 1, 2], "E0 b0 b1 b2 E1 b0 b1 b2", 2, [0.680246, 0.341624], 0.09761963039636612),
    (True, 5, 2, 4, 4, [0, 1, 2] * 4, "E0 b0 b2 E1 b0 b2 E2 b0 b2 E3 b0 b2", 4,
     [0.680246, 0.341624, 0.369589, 0.364672], 0.09996025264263153),
    # no batch_size: ceil(10 / steps_per_epoch) with steps_per_epoch (batches of 2), else 32
    (False, 5, 1, 2, None, [0, 1, 2, 3, 4] * 2, "E0 b0 b1 b2 b3 b4 E1 b0 b1 b2 b3 b4", 0, [0.52162, 0.337621],
     0.0995512455701828),
    (False, None, 1, 2, None, [0, 0], "E0 b0 E1 b0", 0, [1.0, 0.42085], 0.12869998812675476),
]


class Events(mk.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.events = []

    def on_epoch_begin(self, epoch, logs=None):
        self.events.append(f"E{epoch}")

    def on_train_batch_begin(self, batch, logs=None):
        self.events.append(f"b{batch}")


@pytest.fixture(scope="module")
def model():
    model = mk.Sequential([mk.layers.Dense(1, use_bias=False, kernel_initializer="zeros", input_shape=(1,))])
    model.compile(mk.optimizers.SGD(0.01), "mse")
    return model


def replay(batches, batch_size):
    """NumPy SGD of the model on the given batches, in order: the final weight."""
    w = 0.0
    for i in batches:
        xb = X[i * batch_size:(i + 1) * batch_size, 0].astype(np.float64)
        w -= 0.01 * np.mean(2 * (w * xb - 1) * xb)
    return w


def fit_recorded(model, x, **kwargs):
    model.set_weights([np.zeros((1, 1), np.float32)])
    events = Events()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = model.fit(x, verbose=0, callbacks=[events], **kwargs)
    ran_out = [w for w in caught if str(w.message) == RAN_OUT]
    assert all(w.category is UserWarning for w in ran_out)
    return history.history, " ".join(events.events), len(ran_out)


@pytest.mark.parametrize("case", KERAS, ids=lambda case: "{}-spe{}-spx{}-ep{}-bs{}".format(
    "ds" if case[0] else "arrays", *case[1:5]))
def test_fit_takes_batches_as_keras(model, case):
    dataset, steps_per_epoch, per_execution, epochs, batch_size, batches, events, warned, losses, weight = case
    kwargs = dict(epochs=epochs, steps_per_epoch=steps_per_epoch, steps_per_execution=per_execution)
    if dataset:
        x = mk.data.Dataset.from_tensor_slices((X, Y)).batch(batch_size)
    else:
        x = X
        kwargs.update(y=Y, batch_size=batch_size, shuffle=False)
    history, got_events, got_warned = fit_recorded(model, x, **kwargs)
    assert (got_events, got_warned) == (events, warned)
    assert history["loss"] == pytest.approx(losses, abs=2e-6)
    assert float(model.get_weights()[0][0, 0]) == pytest.approx(weight, rel=1e-5)
    # the order Keras trained in gives Keras's weight: the batches above are the ones that ran
    size = batch_size or (-(-10 // steps_per_epoch) if steps_per_epoch else 32)
    assert replay(batches, size) == pytest.approx(weight, rel=1e-5)


def test_unknown_length_dataset_learns_its_length_as_keras(model):
    # Keras 3.15.1 on a from_generator Dataset of 3 batches with steps_per_epoch=3: epoch 0 takes
    # the 3 batches; epoch 1 finds the data ended at once (warning, no step, loss 0.0 from the reset
    # loss tracker); epoch 2 starts a new pass, epoch 3 is empty again. (Keras also calls
    # on_train_batch_begin for the step that found no data, and in 3.15.1 also warns without
    # steps_per_epoch; neither is done here.)
    def batches():
        for i in range(3):
            yield X[4 * i:4 * i + 4], Y[4 * i:4 * i + 4]
    dataset = mk.data.Dataset.from_generator(
        batches, output_signature=(mk.TensorSpec((None, 1)), mk.TensorSpec((None, 1))))
    history, events, warned = fit_recorded(model, dataset, epochs=4, steps_per_epoch=3)
    assert (events, warned) == ("E0 b0 b1 b2 E1 E2 b0 b1 b2 E3", 2)
    assert history["loss"][1] == history["loss"][3] == 0.0 and history["loss"][0] > 0
    assert float(model.get_weights()[0][0, 0]) == pytest.approx(replay([0, 1, 2, 0, 1, 2], 4), rel=1e-5)
    history, events, warned = fit_recorded(model, dataset, epochs=2)  # no steps_per_epoch: one pass an epoch
    assert (events, warned) == ("E0 b0 b1 b2 E1 b0 b1 b2", 0)


@pytest.mark.parametrize("steps, samples, warned", [(2, 8, 0), (5, 10, 1)])
def test_evaluate_and_predict_steps_as_keras(model, steps, samples, warned):
    # Keras 3.15.1: steps=2 of 3 batches evaluates and predicts the first 8 samples; steps=5
    # all 10, with the "ran out of data" warning (its training wording, in evaluate too)
    model.set_weights([np.full((1, 1), 0.5, np.float32)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loss = model.evaluate(X, Y, batch_size=4, steps=steps, verbose=0)
        predictions = model.predict(X, batch_size=4, steps=steps, verbose=0)
    assert sum(str(w.message) == RAN_OUT for w in caught) == 2 * warned
    assert loss == pytest.approx(np.mean((0.5 * X[:samples] - 1) ** 2), rel=1e-6)
    np.testing.assert_allclose(predictions, 0.5 * X[:samples], rtol=1e-6)


def test_shuffled_pass_goes_on_across_epochs():
    # steps_per_epoch below the batches: the next epoch goes on with the same pass, in the same
    # permutation (Keras keeps its iterator), so two epochs of 2 steps on 16 samples in batches
    # of 4 see every sample once; the third epoch starts a new permutation
    x = np.arange(16, dtype=np.float32)[:, None]
    batches = data_adapter.make_batches(x, x, batch_size=4, shuffle=True, steps=2)
    epochs = [[b[0][:, 0] for b in batches.epoch(np.random.default_rng(epoch))] for epoch in range(3)]
    assert [len(e) for e in epochs] == [2, 2, 2]
    first_pass = np.concatenate(epochs[0] + epochs[1])
    assert sorted(first_pass) == list(range(16)) and list(first_pass) != list(range(16))
    assert list(np.concatenate(epochs[2])) == list(np.random.default_rng(2).permutation(16)[:8])


def test_resumed_fit_goes_on_with_the_interrupted_pass(model, tmp_path):
    # 3 shuffled batches, 2 steps an epoch: epoch 1 trains on the last batch of epoch 0's pass.
    # A fit stopped after epoch 0 and resumed by BackupAndRestore must do the same, not start a
    # new pass, to end with the uninterrupted run's weights.
    def run(callbacks=()):
        return model.fit(X, Y, batch_size=4, epochs=3, steps_per_epoch=2, shuffle=True, verbose=0,
                         callbacks=list(callbacks))

    class Stop(mk.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            raise KeyboardInterrupt

    model.set_weights([np.zeros((1, 1), np.float32)])
    mk.random.set_seed(11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run()
        uninterrupted = model.get_weights()[0]
        model.set_weights([np.zeros((1, 1), np.float32)])
        mk.random.set_seed(11)
        with pytest.raises(KeyboardInterrupt):
            run([mk.callbacks.BackupAndRestore(tmp_path / "b"), Stop()])
        history = run([mk.callbacks.BackupAndRestore(tmp_path / "b")])
    assert history.epoch == [1, 2]
    np.testing.assert_array_equal(model.get_weights()[0], uninterrupted)
