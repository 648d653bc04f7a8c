"""Callbacks that watch one logged quantity: EarlyStopping and ModelCheckpoint's shared
rule for "is this an improvement", and EarlyStopping itself."""
import math
import warnings

from minikeras.callbacks.callback import Callback, print_msg

_MODES = ("auto", "min", "max")


def check_mode(mode, owner):
    if mode not in _MODES:
        warnings.warn(f"{owner} mode '{mode}' is unknown, fallback to auto mode.", stacklevel=3)
        return "auto"
    return mode


def _model_metrics(model):
    """The model's metric objects, flattening containers that hold several."""
    try:
        metrics = list(getattr(model, "metrics", None) or [])
    except Exception:  # a model whose metrics are not built yet
        return []
    flat = []
    for metric in metrics:
        inner = getattr(metric, "metrics", None)
        flat.extend(inner if isinstance(inner, (list, tuple)) else [metric])
    return flat


def higher_is_better(monitor, mode, model=None):
    """Whether ``monitor`` improves upward. mode 'auto': a loss improves downward; a metric
    of the model that declares a direction (accuracies up, errors down) follows it; any
    other name ending in 'acc', 'accuracy' or 'auc' improves upward, the rest downward."""
    if mode != "auto":
        return mode == "max"
    name = monitor[len("val_"):] if monitor.startswith("val_") else monitor
    if name == "loss":
        return False
    for metric in _model_metrics(model):
        if getattr(metric, "name", None) == name and hasattr(metric, "_direction"):
            return metric._direction == "up"
    return name.endswith(("acc", "accuracy", "auc"))


def is_finite_number(value):
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


class EarlyStopping(Callback):
    """Stops training when ``monitor`` has stopped improving.

    At each epoch end, a value better than the best so far by more than ``min_delta``
    resets the wait; otherwise, after ``patience`` epochs without improvement (and never
    at epoch 0), ``model.stop_training`` is set. Epochs before ``start_from_epoch`` are not
    watched. With ``baseline``, an improvement must also beat the baseline to reset the
    wait. With ``restore_best_weights``, training ends with the weights of the best epoch
    (``model.get_weights()`` / ``set_weights``). Semantics are Keras 3's.

    >>> stop = mk.callbacks.EarlyStopping(monitor="val_loss", patience=3)
    """

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        self.monitor = monitor
        self.min_delta = abs(min_delta)
        self.patience = patience
        self.verbose = verbose
        self.mode = check_mode(mode, "EarlyStopping")
        self.baseline = baseline
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        self._reset()

    def _reset(self):
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights = None
        self.best_epoch = 0
        self.best = None
        self._higher = None  # decided at the first epoch end, when the model's metrics exist

    def on_train_begin(self, logs=None):
        self._reset()

    def _is_improvement(self, value, reference):
        if self._higher:
            return value - self.min_delta > reference
        return value + self.min_delta < reference

    def get_monitor_value(self, logs):
        logs = logs or {}
        value = logs.get(self.monitor)
        if value is None:
            warnings.warn(f"Early stopping conditioned on metric `{self.monitor}` which is not available. "
                          f"Available metrics are: {','.join(logs.keys())}", stacklevel=3)
        return value

    def on_epoch_end(self, epoch, logs=None):
        if self._higher is None:
            self._higher = higher_is_better(self.monitor, self.mode, self.model)
            self.best = -math.inf if self._higher else math.inf
        current = self.get_monitor_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()  # the first watched epoch is the best so far
            self.best_epoch = epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print_msg(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print_msg(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)


class TerminateOnNaN(Callback):
    """Stops training (``model.stop_training = True``) at the first batch whose loss is NaN
    or infinite, printing a message naming the batch; with ``raise_error=True`` raises a
    RuntimeError instead."""

    def __init__(self, raise_error=False):
        super().__init__()
        self.raise_error = raise_error

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None or is_finite_number(loss):
            return
        if self.raise_error:
            raise RuntimeError(f"NaN or Inf loss encountered at batch {batch}. Loss value: {loss}. "
                               "Terminating training immediately.")
        print_msg(f"Batch {batch}: Invalid loss, terminating training")
        self.model.stop_training = True
