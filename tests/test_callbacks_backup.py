"""mk.callbacks.BackupAndRestore: a process killed with SIGKILL mid-epoch or mid-write, run
again, ends with the same weights as an uninterrupted run; Keras 3's files and arguments."""
import json
import os
import signal

import numpy as np
import pytest
from resume_reference import run_job, weights

import minikeras as mk
from minikeras.saving import _files


@pytest.mark.parametrize("kill_at", ["step:8", "write:2"])
def test_killed_run_resumes_to_the_uninterrupted_weights(tmp_path, uninterrupted, kill_at):
    # save_freq=5 steps, 6 steps an epoch: step 8 is mid-epoch 2 after a backup at step 5;
    # "write:2" dies half way through the second backup's write (step 10).
    killed = run_job("backup", tmp_path, kill_at)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    backup = tmp_path / "backup"
    assert sorted(n for n in os.listdir(backup) if not n.startswith(".")) == [
        "latest.weights.h5", "training_metadata.json"]
    leftovers = [n for n in os.listdir(backup) if n.startswith(".")]
    if kill_at.startswith("write"):  # the dead writer's half-written file, recognisable by its name
        assert len(leftovers) == 1 and leftovers[0].startswith(f".latest.weights.h5.{killed.pid}.")
        assert leftovers[0].endswith(_files.TEMP_MARK)
    else:
        assert leftovers == []
    assert json.loads((backup / "training_metadata.json").read_text()) == {"epoch": 0, "batch": 4}
    assert mk.saving.file_attrs(backup / "latest.weights.h5") == {"backup_epoch": 0, "backup_step": 5}
    again = run_job("backup", tmp_path)
    assert again.returncode == 0, again.stderr
    assert not backup.exists()  # delete_checkpoint=True: gone once training ended
    for a, b in zip(weights(tmp_path / "backup.npz"), uninterrupted):
        np.testing.assert_array_equal(a, b)


@pytest.fixture(scope="module")
def small_model():
    model = mk.Sequential([mk.layers.Dense(2, input_shape=(3,))])
    model.compile(optimizer="adam", loss="mse")
    return model


def test_epoch_backups_and_keras_metadata(tmp_path, small_model):
    x, y = np.ones((8, 3), np.float32), np.zeros((8, 2), np.float32)
    seen = []

    class Stop(mk.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen.append(json.loads((tmp_path / "b" / "training_metadata.json").read_text()))
            if epoch == 1:
                raise KeyboardInterrupt

    backup = mk.callbacks.BackupAndRestore(tmp_path / "b")
    with pytest.raises(KeyboardInterrupt):
        small_model.fit(x, y, epochs=5, verbose=0, callbacks=[backup, Stop()])
    assert seen == [{"epoch": 1, "batch": 0}, {"epoch": 2, "batch": 0}]
    history = small_model.fit(x, y, epochs=5, verbose=0, callbacks=[mk.callbacks.BackupAndRestore(tmp_path / "b")])
    assert history.epoch == [2, 3, 4]  # resumed after the two epochs done, as Keras
    assert not (tmp_path / "b").exists()


def test_keep_checkpoint_and_keras_written_metadata(tmp_path, small_model):
    x, y = np.ones((8, 3), np.float32), np.zeros((8, 2), np.float32)
    small_model.fit(x, y, epochs=2, verbose=0,
                    callbacks=[mk.callbacks.BackupAndRestore(tmp_path / "b", delete_checkpoint=False)])
    assert sorted(os.listdir(tmp_path / "b")) == ["latest.weights.h5", "training_metadata.json"]
    # a backup as Keras writes it: weights without our position, the epoch in the JSON
    small_model.save_weights(tmp_path / "b" / "latest.weights.h5")
    (tmp_path / "b" / "training_metadata.json").write_text(json.dumps({"epoch": 3, "batch": 0}))
    history = small_model.fit(x, y, epochs=5, verbose=0, callbacks=[mk.callbacks.BackupAndRestore(tmp_path / "b")])
    assert history.epoch == [3, 4]


def test_arguments_as_keras(tmp_path):
    with pytest.raises(ValueError, match="Empty `backup_dir` argument passed"):
        mk.callbacks.BackupAndRestore("")
    with pytest.raises(ValueError, match="Invalid value for argument `save_freq`. Received: save_freq=batch"):
        mk.callbacks.BackupAndRestore(str(tmp_path / "backup"), save_freq="batch")
    epoch_only = mk.callbacks.BackupAndRestore(str(tmp_path / "backup"))
    assert "on_train_batch_end" not in vars(epoch_only)  # fit skips batch hooks: no per-step host sync


def test_unbuilt_model_is_a_clear_error(tmp_path):
    model = mk.Sequential([mk.layers.Dense(2)])
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match="BackupAndRestore callback, your model must be built"):
        model.fit(np.ones((4, 3), np.float32), np.ones((4, 2), np.float32), verbose=0,
                  callbacks=[mk.callbacks.BackupAndRestore(tmp_path / "b")])


def test_save_freq_counts_steps_with_steps_per_execution(tmp_path):
    model = mk.Sequential([mk.layers.Dense(2, input_shape=(3,))])
    model.compile(optimizer="sgd", loss="mse", steps_per_execution=2)
    saved = []

    class Spy(mk.callbacks.BackupAndRestore):
        def _save(self, epoch, step):
            saved.append((epoch, step))
            super()._save(epoch, step)

    model.fit(np.ones((16, 3), np.float32), np.zeros((16, 2), np.float32), batch_size=2, epochs=2, verbose=0,
              callbacks=[Spy(tmp_path / "b", save_freq=4)])
    assert saved == [(0, 4), (0, 8), (1, 4), (1, 8)]  # every 4 steps (two calls of 2 steps)
