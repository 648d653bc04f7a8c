"""What happens when training goes wrong: interrupts, resuming from a checkpoint, bad data,
NaN losses. Errors must be clear ValueErrors from minikeras, never a traceback out of jax."""
import os
import traceback

import numpy as np
import pytest

import minikeras as mk

layers = mk.layers
rng = np.random.default_rng(0)
X = rng.standard_normal((64, 4)).astype(np.float32)
Y = (X[:, 0] > X[:, 1]).astype(np.int32) + (X[:, 2] > 1).astype(np.int32)


def make_model(weights=None):
    model = mk.Sequential([layers.Dense(8, activation="relu", input_shape=(4,)), layers.Dense(3)])
    if weights is not None:
        model.set_weights(weights)
    model.compile(optimizer=mk.optimizers.Adam(learning_rate=0.01),
                  loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model


@pytest.fixture(scope="module")
def initial_weights():
    mk.random.set_seed(1)
    return mk.Sequential([layers.Dense(8, activation="relu", input_shape=(4,)), layers.Dense(3)]).get_weights()


def assert_clean_error(info):
    """The error is ours: no JAX note, no chained jax traceback, raised from minikeras code."""
    error = info.value
    assert not any("JAX" in note for note in getattr(error, "__notes__", [])), error.__notes__
    assert error.__cause__ is None or "jax" not in type(error.__cause__).__module__
    frames = traceback.extract_tb(info.tb)
    assert "minikeras" in frames[-1].filename and "site-packages" not in frames[-1].filename


# -- interrupts and checkpoints ----------------------------------------------------------------------
class InterruptAt(mk.callbacks.Callback):
    def __init__(self, epoch, batch):
        super().__init__()
        self.at = (epoch, batch)

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if (self.epoch, batch) == self.at:
            raise KeyboardInterrupt


class RecordAtEpochEnd(mk.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        self.weights = self.model.get_weights()
        self.iterations = int(self.model.optimizer.iterations.numpy())


@pytest.fixture(scope="module")
def compiled(initial_weights):
    """One compiled model shared by the tests below (each sets the weights it starts from)."""
    return make_model(initial_weights)


def test_keyboard_interrupt_mid_epoch_leaves_the_last_checkpoint_loadable(tmp_path, compiled, initial_weights):
    path = tmp_path / "ckpt.weights.h5"
    model = compiled
    model.set_weights(initial_weights)
    start = int(model.optimizer.iterations.numpy())
    record = RecordAtEpochEnd()
    checkpoint = mk.callbacks.ModelCheckpoint(str(path), save_weights_only=True)
    with pytest.raises(KeyboardInterrupt):
        model.fit(X, Y, batch_size=16, epochs=5, shuffle=False, verbose=0,
                  callbacks=[checkpoint, record, InterruptAt(epoch=2, batch=1)])
    assert os.listdir(tmp_path) == ["ckpt.weights.h5"]  # no temp file left behind
    assert record.iterations == start + 8  # two epochs of 4 batches were checkpointed
    assert any(not np.array_equal(a, b) for a, b in zip(model.get_weights(), record.weights))  # trained on

    restored = make_model()
    restored.load_weights(str(path))
    for actual, expected in zip(restored.get_weights(), record.weights):
        np.testing.assert_array_equal(actual, expected)
    assert int(restored.optimizer.iterations.numpy()) == start + 8


def test_interrupt_while_the_checkpoint_is_written_keeps_the_previous_file(tmp_path, compiled, monkeypatch):
    path = tmp_path / "ckpt.weights.h5"
    model = compiled
    model.fit(X, Y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    model.save_weights(str(path))
    saved = model.get_weights()
    before = path.read_bytes()

    from minikeras.saving import weights_h5
    real_write = weights_h5.write

    def write_half_then_interrupt(h5file, model):
        real_write(h5file, model)
        h5file.flush()
        raise KeyboardInterrupt  # Ctrl-C while the new file is being written

    monkeypatch.setattr(weights_h5, "write", write_half_then_interrupt)
    checkpoint = mk.callbacks.ModelCheckpoint(str(path), save_weights_only=True)
    with pytest.raises(KeyboardInterrupt):
        model.fit(X, Y, batch_size=16, epochs=1, shuffle=False, verbose=0, callbacks=[checkpoint])
    monkeypatch.undo()
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ckpt.weights.h5"]
    restored = make_model()
    restored.load_weights(str(path))
    for actual, expected in zip(restored.get_weights(), saved):
        np.testing.assert_array_equal(actual, expected)


def test_save_load_and_continue_gives_the_same_losses_as_straight_through(tmp_path, compiled, initial_weights):
    straight = compiled
    straight.set_weights(initial_weights)
    start = int(straight.optimizer.iterations.numpy())
    checkpoint = mk.callbacks.ModelCheckpoint(str(tmp_path / "epoch{epoch}.weights.h5"), save_weights_only=True)
    expected = straight.fit(X, Y, batch_size=16, epochs=3, shuffle=False, verbose=0,
                            callbacks=[checkpoint]).history["loss"]

    resumed = make_model()  # other initial weights and a fresh Adam: all restored from the file
    resumed.load_weights(str(tmp_path / "epoch1.weights.h5"))
    assert int(resumed.optimizer.iterations.numpy()) == start + 4  # the optimizer's state came back too
    later = resumed.fit(X, Y, batch_size=16, epochs=3, initial_epoch=1, shuffle=False, verbose=0).history["loss"]
    assert later == pytest.approx(expected[1:], rel=1e-6)
    for actual, wanted in zip(resumed.get_weights(), straight.get_weights()):
        np.testing.assert_allclose(actual, wanted, rtol=1e-6, atol=1e-7)


# -- bad data -----------------------------------------------------------------------------------------
def test_mismatched_x_and_y_lengths(compiled):
    with pytest.raises(ValueError, match=r"Data cardinality is ambiguous: x sizes: 64, y sizes: 63") as info:
        compiled.fit(X, Y[:63], verbose=0)
    assert_clean_error(info)
    with pytest.raises(ValueError, match="sample_weight has 10 entries, x has 64"):
        compiled.fit(X, Y, sample_weight=np.ones(10), verbose=0)


def test_one_hot_labels_with_sparse_crossentropy(compiled):
    one_hot = np.eye(3, dtype=np.float32)[Y]
    with pytest.raises(ValueError, match=r"one-hot.*categorical_crossentropy") as info:
        compiled.fit(X, one_hot, batch_size=16, verbose=0)
    assert_clean_error(info)
    with pytest.raises(ValueError, match=r"one-hot") as info:
        compiled.evaluate(X, one_hot, verbose=0)
    assert_clean_error(info)


def test_labels_with_another_batch_size_from_a_dataset(compiled):
    xs = mk.data.Dataset.from_tensor_slices(X).batch(16)
    ys = mk.data.Dataset.from_tensor_slices(Y).batch(8)
    with pytest.raises(ValueError, match=r"x has 16 samples.*y has 8") as info:
        compiled.fit(mk.data.Dataset.zip((xs, ys)), verbose=0)
    assert_clean_error(info)


def test_inputs_of_the_wrong_size(compiled):
    with pytest.raises(ValueError, match=r"Dense '.*' expects input with last dimension 4, received shape \(16, 5\)") \
            as info:
        compiled.fit(np.zeros((32, 5), np.float32), Y[:32], batch_size=16, verbose=0)
    assert_clean_error(info)
    with pytest.raises(ValueError, match=r"expects input with last dimension 4") as info:
        compiled.predict(np.zeros((3, 5), np.float32), verbose=0)
    assert_clean_error(info)


def test_nan_loss_with_terminate_on_nan_stops_cleanly(compiled, initial_weights, capsys):
    bad = X.copy()
    bad[3, 0] = np.nan
    batches = []
    history = compiled.fit(bad, Y, batch_size=16, epochs=3, verbose=0, shuffle=False,
                           callbacks=[mk.callbacks.TerminateOnNaN(), mk.callbacks.LambdaCallback(
                               on_train_batch_end=lambda batch, logs: batches.append(batch))])
    assert batches == [0] and compiled.stop_training
    assert len(history.history["loss"]) == 1 and np.isnan(history.history["loss"][0])
    assert "Invalid loss, terminating training" in capsys.readouterr().out
    compiled.set_weights(initial_weights)
    with pytest.raises(RuntimeError, match="NaN or Inf loss"):
        compiled.fit(bad, Y, batch_size=16, verbose=0, callbacks=[mk.callbacks.TerminateOnNaN(raise_error=True)])
