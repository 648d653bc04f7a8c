"""BackupAndRestore: training that resumes where a killed process left it, exactly.

    backup = mk.callbacks.BackupAndRestore("/tmp/backup", save_freq=100)
    model.fit(x, y, epochs=10, callbacks=[backup])   # killed? run the same script again

As Keras 3's callback: ``<backup_dir>/latest.weights.h5`` (weights and optimizer state) and
``<backup_dir>/training_metadata.json`` (``{"epoch", "batch"}``) are written at each epoch's
end or every ``save_freq`` steps; a later ``fit`` with the same callback loads them and goes on
from there; the folder is deleted when training ends (``delete_checkpoint=True``).

Unlike Keras, the resumed run ends with the same weights as an uninterrupted one: the weights
file also holds the random state (the generator behind Dropout, fit's shuffle seed: see
``mk.saving.random_state``) and the position in the epoch (``backup_epoch``/``backup_step``
root attributes, written in the same atomic write as the weights, so they always agree), and
``fit`` skips the steps the backup has done. A process killed while writing leaves the last
complete backup in place (writes are atomic).
"""
import json
import os
import shutil

from minikeras import saving
from minikeras.callbacks.callback import Callback
from minikeras.saving import atomic_write


class BackupAndRestore(Callback):
    """Backs up the training state during ``fit`` and restores it in the next ``fit``.

    Args:
      backup_dir: a folder for this run's backup only (created when first needed).
      save_freq: ``"epoch"`` (at each epoch's end) or a positive integer (every that many
        steps, and not at epoch ends).
      double_checkpoint: keep the previous backup too (``*.bkp``), used when the latest
        cannot be read.
      delete_checkpoint: delete ``backup_dir`` when training ends (not when it is interrupted).

    Raises:
      ValueError: for an empty ``backup_dir`` or another ``save_freq``.
    """

    def __init__(self, backup_dir, save_freq="epoch", double_checkpoint=False, delete_checkpoint=True):
        super().__init__()
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        if save_freq != "epoch" and (isinstance(save_freq, bool) or not isinstance(save_freq, int) or save_freq < 1):
            raise ValueError(f"Invalid value for argument `save_freq`. Received: save_freq={save_freq}. Expected "
                             "either 'epoch' or an integer value.")
        self.backup_dir = os.fspath(backup_dir)
        if os.path.exists(self.backup_dir) and not os.path.isdir(self.backup_dir):
            raise ValueError(f"BackupAndRestore: backup_dir={self.backup_dir!r} is a file; it must be a folder for "
                             "this run's backup (or a path that does not exist yet)")
        self.save_freq = save_freq
        self.double_checkpoint = double_checkpoint
        self.delete_checkpoint = delete_checkpoint
        self._weights_path = os.path.join(self.backup_dir, "latest.weights.h5")
        self._training_metadata_path = os.path.join(self.backup_dir, "training_metadata.json")
        self._epoch = 0
        self._resumed_at = (None, 0)
        self._step_in_epoch = 0  # steps done in the current epoch
        self._steps_since_save = 0
        if save_freq != "epoch":  # an instance hook: with save_freq="epoch", fit skips batch hooks
            self.on_train_batch_end = self._on_train_batch_end

    # -- restoring ---------------------------------------------------------------------------
    def on_train_begin(self, logs=None):
        if not getattr(self.model, "built", True):
            raise ValueError("To use the BackupAndRestore callback, your model must be built before you call `fit()`. "
                             f"Model '{self.model.name}' is unbuilt: build it by calling it on a batch of data or "
                             "with model.build(input_shape)")
        self._steps_since_save = 0
        try:
            position = self._load(self._weights_path)
        except (OSError, ValueError):
            if not (self.double_checkpoint and os.path.exists(self._weights_path + ".bkp")):
                raise
            position = self._load(self._weights_path + ".bkp")
        self._resumed_at = position or (None, 0)
        if position is not None:
            self._epoch = position[0]
            self.model.resume_training_at(*position)

    def _load(self, path):
        if not os.path.exists(path):
            return None
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and not optimizer.built:
            optimizer.build(self.model.trainable_variables)
        self.model.load_weights(path)
        attrs = saving.file_attrs(path)
        if "backup_epoch" in attrs:
            return int(attrs["backup_epoch"]), int(attrs.get("backup_step", 0))
        metadata_path = os.path.join(os.path.dirname(path), os.path.basename(self._training_metadata_path))
        if os.path.exists(metadata_path):  # a backup written by Keras: epoch granularity
            with open(metadata_path) as f:
                return int(json.load(f)["epoch"]), 0
        return None

    # -- backing up --------------------------------------------------------------------------
    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch
        resumed_epoch, resumed_step = self._resumed_at
        self._step_in_epoch = resumed_step if epoch == resumed_epoch else 0

    def _on_train_batch_end(self, batch, logs=None):
        # batch + 1 steps are done in this epoch (a call may run several: steps_per_execution)
        self._steps_since_save += batch + 1 - self._step_in_epoch
        self._step_in_epoch = batch + 1
        if self._steps_since_save >= self.save_freq:
            self._steps_since_save = 0
            self._save(self._epoch, batch + 1)

    def on_epoch_end(self, epoch, logs=None):
        self._epoch = epoch + 1
        if self.save_freq == "epoch":
            self._save(epoch + 1, 0)

    def _save(self, epoch, step):
        os.makedirs(self.backup_dir, exist_ok=True)
        if self.double_checkpoint and os.path.exists(self._weights_path):
            shutil.copyfile(self._weights_path, self._weights_path + ".bkp")
        saving.save_weights(self.model, self._weights_path, attrs={"backup_epoch": epoch, "backup_step": step})
        # Keras's record of the position (Keras resumes at the epoch's start); ours is in the weights file
        metadata = {"epoch": epoch, "batch": max(step - 1, 0)}
        atomic_write(self._training_metadata_path, json.dumps(metadata).encode())

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and os.path.exists(self.backup_dir):
            shutil.rmtree(self.backup_dir)
