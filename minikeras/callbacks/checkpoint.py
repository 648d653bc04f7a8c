"""ModelCheckpoint: saves the model or its weights during training."""
import os
import warnings

import numpy as np

from minikeras.callbacks.callback import Callback, print_msg
from minikeras.callbacks.monitor import check_mode, higher_is_better


class ModelCheckpoint(Callback):
    """Saves the weights (``save_weights_only=True``: ``model.save_weights``, path ending in
    ``.weights.h5``) or the whole model (``model.save``, path ending in ``.keras``) at each
    epoch end, or every ``save_freq`` batches.

    ``filepath`` may name ``{epoch}`` (1-based) and any logged value, e.g.
    ``'ckpt-{epoch:02d}-{val_loss:.2f}.weights.h5'``. With ``save_best_only`` a file is
    written only when ``monitor`` improves on the best value so far (which starts at
    ``initial_value_threshold``, when given). Missing directories are created.

    >>> ckpt = mk.callbacks.ModelCheckpoint("best.weights.h5", save_weights_only=True,
    ...                                     save_best_only=True, monitor="val_accuracy")
    """

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch", initial_value_threshold=None):
        super().__init__()
        self.filepath = os.fspath(filepath)
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.mode = check_mode(mode, "ModelCheckpoint")
        self.save_freq = save_freq
        self.best = initial_value_threshold
        self._higher = None
        self._batches_since_save = 0
        self._last_batch = 0
        self._current_epoch = 0
        if save_freq != "epoch" and (isinstance(save_freq, bool) or not isinstance(save_freq, int) or save_freq < 1):
            raise ValueError(f"Unrecognized save_freq: {save_freq!r}. Expected save_freq are 'epoch' or a positive "
                             "integer number of batches")
        if save_weights_only:
            if not self.filepath.endswith(".weights.h5"):
                raise ValueError("When using `save_weights_only=True` in `ModelCheckpoint`, the filepath provided must "
                                 f"end in `.weights.h5` (Keras weights format). Received: filepath={self.filepath}")
        elif not self.filepath.endswith(".keras"):
            raise ValueError("The filepath provided must end in `.keras` (Keras model format), or pass "
                             f"save_weights_only=True with a `.weights.h5` path. Received: filepath={self.filepath}")

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        # a batch index that did not grow means a new epoch began
        self._batches_since_save += batch + 1 if batch <= self._last_batch else batch - self._last_batch
        self._last_batch = batch
        if self._batches_since_save >= self.save_freq:
            self._batches_since_save = 0
            self._save(self._current_epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save(epoch, None, logs)

    def _is_improvement(self, value):
        if self.best is None:
            return True
        return value > self.best if self._higher else value < self.best

    def _should_save(self, epoch, logs, filepath):
        if not self.save_best_only:
            if self.verbose > 0:
                print_msg(f"Epoch {epoch + 1}: saving model to {filepath}")
            return True
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Can save best model only with {self.monitor} available. Available metrics are: "
                          f"{','.join(logs.keys())}", stacklevel=3)
            return True
        if np.ndim(current) > 0:
            warnings.warn(f"Can save best model only when `monitor` is a scalar value. Received: {current}. "
                          "Falling back to `save_best_only=False`.", stacklevel=3)
            return True
        best = "None" if self.best is None else f"{self.best:.5f}"
        if self._is_improvement(current):
            if self.verbose > 0:
                print_msg(f"Epoch {epoch + 1}: {self.monitor} improved from {best} to {current:.5f}, saving model "
                          f"to {filepath}")
            self.best = current
            return True
        if self.verbose > 0:
            print_msg(f"Epoch {epoch + 1}: {self.monitor} did not improve from {best}")
        return False

    def _save(self, epoch, batch, logs):
        logs = logs or {}
        if self._higher is None:
            self._higher = higher_is_better(self.monitor, self.mode, self.model)
        filepath = self._get_file_path(epoch, batch, logs)
        if not self._should_save(epoch, logs, filepath):
            return
        if os.path.isdir(filepath):
            raise IOError(f"Please specify a non-directory filepath for ModelCheckpoint. Filepath used is an existing "
                          f"directory: {filepath}")
        directory = os.path.dirname(filepath)
        if directory:
            os.makedirs(directory, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(filepath)
        else:
            self.model.save(filepath)

    def _get_file_path(self, epoch, batch, logs):
        """The path with ``{epoch}`` (1-based), ``{batch}`` (1-based) and the logged values filled in."""
        values = dict(logs)
        values["epoch"] = epoch + 1
        if batch is not None and "batch" not in logs:
            values["batch"] = batch + 1
        try:
            return self.filepath.format(**values)
        except KeyError as error:
            raise KeyError(f'Failed to format this callback filepath: "{self.filepath}". Reason: {error} is not '
                           f"among the logged values {sorted(values)}") from None
