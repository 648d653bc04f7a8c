"""mk.callbacks against a fake model that implements the contract fit relies on."""
import csv
import math
import os

import numpy as np
import pytest

from minikeras import callbacks


class FakeOptimizer:
    def __init__(self, learning_rate=0.1):
        self.learning_rate = learning_rate


class FakeModel:
    """What callbacks may use: stop_training, get/set_weights, save_weights, save, optimizer."""

    def __init__(self):
        self.stop_training = False
        self.weights = [np.zeros(2)]
        self.optimizer = FakeOptimizer()
        self.saved = []
        self.history = None

    def get_weights(self):
        return [w.copy() for w in self.weights]

    def set_weights(self, weights):
        self.weights = [np.array(w) for w in weights]

    def save_weights(self, path):
        with open(path, "w") as f:
            f.write("weights")
        self.saved.append(path)

    def save(self, path):
        with open(path, "w") as f:
            f.write("model")
        self.saved.append(path)


def run(cbs, epoch_logs, model=None, steps=2, verbose=0, batch_losses=None):
    """Drives callbacks the way fit does; epoch e's weights are [e, e]; stops like fit."""
    model = model or FakeModel()
    cbs = callbacks.CallbackList(cbs, progbar=callbacks.ProgbarLogger, model=model, epochs=len(epoch_logs), steps=steps,
                                 verbose=verbose)
    cbs.on_train_begin()
    ran = 0
    for epoch, logs in enumerate(epoch_logs):
        cbs.on_epoch_begin(epoch)
        for step in range(steps):
            cbs.on_train_batch_begin(step)
            loss = batch_losses[epoch][step] if batch_losses else logs.get("loss", 1.0)
            cbs.on_train_batch_end(step, {"loss": loss})
            if model.stop_training:
                break
        model.weights = [np.full(2, float(epoch))]
        cbs.on_epoch_end(epoch, dict(logs))
        ran += 1
        if model.stop_training:
            break
    cbs.on_train_end()
    return model, ran


def losses(*values, key="val_loss"):
    return [{"loss": 1.0, key: v} for v in values]


# -- History, CallbackList, LambdaCallback ---------------------------------------------------
def test_history_and_callback_list():
    model, _ = run([], [{"loss": 0.5, "accuracy": 0.7}, {"loss": 0.25, "accuracy": 0.8}])
    assert isinstance(model.history, callbacks.History)
    assert model.history.history == {"loss": [0.5, 0.25], "accuracy": [0.7, 0.8]}
    assert model.history.epoch == [0, 1]


def test_callback_list_converts_logs_and_sets_params():
    seen = {}

    class Spy(callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen.update(logs)

    spy = Spy()
    cbs = callbacks.CallbackList([spy], progbar=callbacks.ProgbarLogger, model=FakeModel(), epochs=3, steps=4,
                                 verbose=0)
    assert spy.params == {"epochs": 3, "steps": 4, "verbose": 0}
    assert not any(isinstance(c, callbacks.ProgbarLogger) for c in cbs.callbacks)
    cbs.on_epoch_end(0, {"loss": np.float32(0.5), "acc": np.array(1.0)})
    assert type(seen["loss"]) is float and seen == {"loss": 0.5, "acc": 1.0}
    assert any(isinstance(c, callbacks.ProgbarLogger)
               for c in callbacks.CallbackList([], progbar=callbacks.ProgbarLogger, model=FakeModel(), epochs=1,
                                          steps=1, verbose=1).callbacks)
    assert not any(isinstance(c, callbacks.ProgbarLogger)  # the caller passes the bar to build
                   for c in callbacks.CallbackList([], model=FakeModel(), epochs=1, steps=1, verbose=1).callbacks)
    mine = callbacks.ProgbarLogger()
    built = callbacks.CallbackList([mine], progbar=callbacks.ProgbarLogger, model=FakeModel(), epochs=1, steps=1,
                                   verbose=1).callbacks
    assert [c for c in built if isinstance(c, callbacks.ProgbarLogger)] == [mine]
    with pytest.raises(TypeError, match="Callback"):
        callbacks.CallbackList([lambda: None])


def test_lambda_callback():
    events = []
    cb = callbacks.LambdaCallback(
        on_train_begin=lambda logs: events.append("train_begin"),
        on_epoch_begin=lambda epoch, logs: events.append(f"epoch_begin {epoch}"),
        on_epoch_end=lambda epoch, logs: events.append(f"epoch_end {epoch} {logs['loss']}"),
        on_batch_end=lambda batch, logs: events.append(f"batch_end {batch}"),
        on_train_end=lambda logs: events.append("train_end"))
    run([cb], [{"loss": 0.5}], steps=2)
    assert events == ["train_begin", "epoch_begin 0", "batch_end 0", "batch_end 1", "epoch_end 0 0.5", "train_end"]
    with pytest.raises(ValueError, match="unknown hook"):
        callbacks.LambdaCallback(on_epoch_ends=print)


# -- EarlyStopping -----------------------------------------------------------------------------
def test_early_stopping_patience():
    stop = callbacks.EarlyStopping(monitor="val_loss", patience=2)
    model, ran = run([stop], losses(1.0, 0.9, 0.95, 0.91, 0.8, 0.7))
    assert ran == 4 and model.stop_training and stop.stopped_epoch == 3
    assert stop.best == 0.9 and stop.best_epoch == 1


def test_early_stopping_patience_zero_stops_at_first_non_improvement():
    _, ran = run([callbacks.EarlyStopping(monitor="val_loss")], losses(1.0, 0.9, 0.9, 0.5))
    assert ran == 3


def test_early_stopping_min_delta():
    # improvements of 0.05 are below min_delta=0.1, so they do not count
    stop = callbacks.EarlyStopping(monitor="val_loss", min_delta=0.1, patience=1)
    _, ran = run([stop], losses(1.0, 0.95, 0.9, 0.85))
    assert ran == 2 and stop.best == 1.0


def test_early_stopping_restore_best_weights(capsys):
    stop = callbacks.EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True, verbose=1)
    model, ran = run([stop], losses(1.0, 0.5, 0.7, 0.8, 0.2))
    assert ran == 4
    np.testing.assert_array_equal(model.weights[0], [1.0, 1.0])  # epoch 1's weights
    out = capsys.readouterr().out
    assert "Epoch 4: early stopping" in out and "best epoch: 2" in out


def test_early_stopping_mode():
    # 'accuracy' is maximised in auto mode
    stop = callbacks.EarlyStopping(monitor="val_accuracy", patience=1)
    _, ran = run([stop], losses(0.5, 0.6, 0.55, 0.7, key="val_accuracy"))
    assert ran == 3 and stop.best == 0.6
    # mode='max' on an unknown name; 'min' on accuracy reverses
    _, ran = run([callbacks.EarlyStopping(monitor="val_f1", mode="max")], losses(0.5, 0.6, 0.7, key="val_f1"))
    assert ran == 3
    _, ran = run([callbacks.EarlyStopping(monitor="val_accuracy", mode="min")],
                 losses(0.5, 0.6, 0.7, key="val_accuracy"))
    assert ran == 2


def test_early_stopping_baseline_and_start_from_epoch():
    # improvements that do not beat the baseline 0.5 do not reset the wait (Keras 3)
    _, ran = run([callbacks.EarlyStopping(monitor="val_loss", patience=2, baseline=0.5)],
                 losses(0.9, 0.8, 0.85, 0.7, 0.6))
    assert ran == 3
    _, ran = run([callbacks.EarlyStopping(monitor="val_loss", patience=2)], losses(0.9, 0.8, 0.85, 0.7, 0.6))
    assert ran == 5
    _, ran = run([callbacks.EarlyStopping(monitor="val_loss", start_from_epoch=3)], losses(1.0, 2.0, 3.0, 4.0, 5.0))
    assert ran == 5


def test_early_stopping_missing_monitor_warns():
    with pytest.warns(UserWarning, match="val_acc.*Available metrics are: loss,val_loss"):
        _, ran = run([callbacks.EarlyStopping(monitor="val_acc")], losses(1.0, 2.0))
    assert ran == 2


# -- ModelCheckpoint ---------------------------------------------------------------------------
def test_model_checkpoint_template(tmp_path):
    path = str(tmp_path / "sub" / "ckpt-{epoch:02d}-{val_loss:.2f}.weights.h5")
    model, _ = run([callbacks.ModelCheckpoint(path, save_weights_only=True)], losses(0.5, 0.25))
    assert sorted(os.listdir(tmp_path / "sub")) == ["ckpt-01-0.50.weights.h5", "ckpt-02-0.25.weights.h5"]
    with pytest.raises(KeyError, match="val_acc"):
        run([callbacks.ModelCheckpoint(str(tmp_path / "{val_acc}.keras"))], losses(0.5))


def test_model_checkpoint_save_best_only(tmp_path, capsys):
    path = str(tmp_path / "best-{epoch}.weights.h5")
    ckpt = callbacks.ModelCheckpoint(path, save_weights_only=True, save_best_only=True, verbose=1)
    model, _ = run([ckpt], losses(0.5, 0.7, 0.3, 0.4))
    assert [os.path.basename(p) for p in model.saved] == ["best-1.weights.h5", "best-3.weights.h5"]
    assert ckpt.best == 0.3
    out = capsys.readouterr().out
    assert "val_loss improved from None to 0.50000" in out and "val_loss did not improve from 0.30000" in out
    # maximised accuracy, and a threshold the first epochs do not beat
    ckpt = callbacks.ModelCheckpoint(str(tmp_path / "m-{epoch}.keras"), monitor="val_accuracy",
                                     save_best_only=True, initial_value_threshold=0.6)
    model, _ = run([ckpt], losses(0.5, 0.7, 0.65, key="val_accuracy"))
    assert [os.path.basename(p) for p in model.saved] == ["m-2.keras"]
    assert open(model.saved[0]).read() == "model"  # model.save, not save_weights


def test_model_checkpoint_save_freq_and_path_checks(tmp_path):
    path = str(tmp_path / "e{epoch}-b{batch}.weights.h5")
    model, _ = run([callbacks.ModelCheckpoint(path, save_weights_only=True, save_freq=3)], losses(1, 1, 1), steps=2)
    assert [os.path.basename(p) for p in model.saved] == ["e2-b1.weights.h5", "e3-b2.weights.h5"]
    with pytest.raises(ValueError, match=r"\.weights\.h5"):
        callbacks.ModelCheckpoint("w.h5", save_weights_only=True)
    with pytest.raises(ValueError, match=r"\.keras"):
        callbacks.ModelCheckpoint("model.h5")
    with pytest.raises(ValueError, match="save_freq"):
        callbacks.ModelCheckpoint("m.keras", save_freq="batch")


# -- learning rate -----------------------------------------------------------------------------
def test_learning_rate_scheduler(capsys):
    model = FakeModel()
    seen = []
    cb = callbacks.LambdaCallback(on_epoch_begin=lambda epoch, logs: seen.append(model.optimizer.learning_rate))
    sched = callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5 if epoch > 0 else lr, verbose=1)
    run([sched, cb], [{"loss": 1.0}] * 3, model=model)
    assert seen == [0.1, 0.05, 0.025]
    assert model.history.history["learning_rate"] == [0.1, 0.05, 0.025]
    assert "Epoch 2: LearningRateScheduler setting learning rate to 0.05." in capsys.readouterr().out
    model = FakeModel()
    run([callbacks.LearningRateScheduler(lambda epoch: 0.01 * (epoch + 1))], [{"loss": 1.0}] * 2, model=model)
    assert model.optimizer.learning_rate == 0.02 and type(model.optimizer.learning_rate) is float
    with pytest.raises(ValueError, match="should be a float"):
        run([callbacks.LearningRateScheduler(lambda epoch: "fast")], [{"loss": 1.0}])


def test_reduce_lr_on_plateau_patience_cooldown_min_lr():
    model = FakeModel()
    reduce = callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=1, cooldown=2, min_lr=0.03)
    lrs = []
    record = callbacks.LambdaCallback(on_epoch_end=lambda e, logs: lrs.append(model.optimizer.learning_rate))
    # the loss never improves after epoch 0
    model, _ = run([reduce, record], losses(1.0, 1.0, 1.0, 1.0, 1.0, 1.0), model=model)
    # epoch 1: reduce to 0.05, cooldown 2; epoch 2: cooling (2 -> 1); epoch 3: the counter reaches 0
    # first, then the wait: reduce to max(0.025, min_lr); epoch 4: cooling; epoch 5: stays at min_lr
    assert lrs == pytest.approx([0.1, 0.05, 0.05, 0.03, 0.03, 0.03])
    assert model.history.history["learning_rate"] == pytest.approx([0.1, 0.1, 0.05, 0.05, 0.03, 0.03])
    with pytest.raises(ValueError, match="factor"):
        callbacks.ReduceLROnPlateau(factor=1.5)


def test_reduce_lr_on_plateau_min_delta_and_max_mode():
    model = FakeModel()
    # gains of 0.05 are under min_delta 0.1: a plateau; 'acc' in the name maximises
    run([callbacks.ReduceLROnPlateau(monitor="val_acc", patience=2, min_delta=0.1)],
        losses(0.5, 0.55, 0.6, key="val_acc"), model=model)
    assert model.optimizer.learning_rate == pytest.approx(0.01)


# -- TerminateOnNaN, CSVLogger -----------------------------------------------------------------
def test_terminate_on_nan(capsys):
    model, ran = run([callbacks.TerminateOnNaN()], [{"loss": 1.0}] * 3, steps=3,
                     batch_losses=[[1.0, 1.0, 1.0], [1.0, math.nan, 1.0], [1.0, 1.0, 1.0]])
    assert ran == 2 and model.stop_training
    assert "Batch 1: Invalid loss, terminating training" in capsys.readouterr().out
    with pytest.raises(RuntimeError, match="batch 0"):
        run([callbacks.TerminateOnNaN(raise_error=True)], [{"loss": 1.0}], batch_losses=[[math.inf, 1.0]])


def test_csv_logger_content_and_append(tmp_path):
    path = tmp_path / "log.csv"
    logs = [{"loss": 0.5, "accuracy": 0.7, "val_loss": 0.6}, {"loss": 0.25, "accuracy": 0.8, "val_loss": 0.4}]
    logger = callbacks.CSVLogger(path)
    seen_after_first_epoch = []
    peek = callbacks.LambdaCallback(on_epoch_end=lambda e, l: seen_after_first_epoch.append(path.read_text()))
    run([logger, peek], logs)
    rows = list(csv.reader(open(path)))
    assert rows == [["epoch", "accuracy", "loss", "val_loss"], ["0", "0.7", "0.5", "0.6"], ["1", "0.8", "0.25", "0.4"]]
    assert seen_after_first_epoch[0].count("\n") == 2  # flushed each epoch
    run([callbacks.CSVLogger(path, append=True)], logs[:1])
    assert [r[0] for r in csv.reader(open(path))] == ["epoch", "0", "1", "0"]
    run([callbacks.CSVLogger(path, separator=";")], logs[:1])
    assert open(path).readline().strip() == "epoch;accuracy;loss;val_loss"


# -- progress display ---------------------------------------------------------------------------
def test_progress_verbose_1(capsys):
    epoch_logs = [{"loss": 0.5, "accuracy": 0.75, "val_loss": 0.123456}, {"loss": 0.25, "accuracy": 0.875}]
    run([], epoch_logs, steps=3, verbose=1)
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "Epoch 1/2" in text and "Epoch 2/2" in text
    assert "3/3" in text and "step/s" in text
    assert "loss=0.5000" in text and "val_loss=0.1235" in text and "accuracy=0.8750" in text


def test_progress_verbose_2_one_line_per_epoch(capsys):
    epoch_logs = [{"loss": 0.5, "accuracy": 0.75, "val_loss": 0.0001}, {"loss": 0.25, "accuracy": 0.875}]
    run([], epoch_logs, steps=3, verbose=2)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines == ["Epoch 1/2 - 0s - loss: 0.5000 - accuracy: 0.7500 - val_loss: 1.0000e-04",
                     "Epoch 2/2 - 0s - loss: 0.2500 - accuracy: 0.8750"]


def test_progress_silent_and_evaluate_predict(capsys):
    run([], [{"loss": 0.5}], verbose=0)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    # evaluate: a bar of its own outside fit
    cbs = callbacks.CallbackList([], add_history=False, progbar=callbacks.ProgbarLogger, model=FakeModel(), epochs=1,
                                 steps=2, verbose=1)
    cbs.on_test_begin()
    for step in range(2):
        cbs.on_test_batch_end(step, {"loss": 0.3})
    cbs.on_test_end({"loss": 0.3})
    cbs.on_predict_begin()
    cbs.on_predict_batch_end(0, {"outputs": np.zeros((4, 2))})
    cbs.on_predict_end()
    text = capsys.readouterr().out
    assert "Evaluate" in text and "loss=0.3000" in text and "Predict" in text
    cbs = callbacks.CallbackList([], add_history=False, progbar=callbacks.ProgbarLogger, model=FakeModel(), epochs=1,
                                 steps=2, verbose=2)
    cbs.on_test_begin()
    cbs.on_test_batch_end(0, {"loss": 0.3})
    cbs.on_test_batch_end(1, {"loss": 0.3})
    cbs.on_test_end({"loss": 0.3})
    assert capsys.readouterr().out == "2/2 - 0s - loss: 0.3000\n"


def test_validation_inside_fit_draws_no_bar(capsys):
    model = FakeModel()
    cbs = callbacks.CallbackList([], progbar=callbacks.ProgbarLogger, model=model, epochs=1, steps=1, verbose=2)
    cbs.on_train_begin()
    cbs.on_epoch_begin(0)
    cbs.on_train_batch_end(0, {"loss": 1.0})
    cbs.on_test_begin()
    cbs.on_test_batch_end(0, {"loss": 2.0})
    cbs.on_test_end({"loss": 2.0})
    cbs.on_epoch_end(0, {"loss": 1.0, "val_loss": 2.0})
    cbs.on_train_end()
    assert capsys.readouterr().out.splitlines() == ["Epoch 1/1 - 0s - loss: 1.0000 - val_loss: 2.0000"]
