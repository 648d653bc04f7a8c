"""Callbacks that set the optimizer's learning rate: LearningRateScheduler, ReduceLROnPlateau."""
import inspect
import math
import warnings

import numpy as np

from minikeras.callbacks.callback import Callback, print_msg
from minikeras.callbacks.monitor import check_mode


def _optimizer(model, owner):
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None or not hasattr(optimizer, "learning_rate"):
        raise ValueError(f"{owner} needs a compiled model whose optimizer has a `learning_rate` attribute, "
                         f"received optimizer {optimizer!r}")
    return optimizer


def _takes_two_arguments(function):
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature: try the (epoch, lr) form
        return True
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in parameters)


class LearningRateScheduler(Callback):
    """Sets the learning rate at the start of each epoch to ``schedule(epoch, lr)`` (or
    ``schedule(epoch)``), where ``epoch`` counts from 0 and ``lr`` is the current rate, and
    logs it as 'learning_rate' at the epoch's end.

    >>> def schedule(epoch, lr):
    ...     return lr if epoch < 10 else lr * 0.9
    >>> cb = mk.callbacks.LearningRateScheduler(schedule)
    """

    def __init__(self, schedule, verbose=0):
        super().__init__()
        if not callable(schedule):
            raise TypeError(f"LearningRateScheduler expects a function schedule(epoch, lr), received {schedule!r}")
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = _optimizer(self.model, "LearningRateScheduler")
        if _takes_two_arguments(self.schedule):
            value = self.schedule(epoch, float(optimizer.learning_rate))
        else:
            value = self.schedule(epoch)
        try:
            if isinstance(value, (bool, str)) or np.size(value) != 1:
                raise TypeError
            learning_rate = float(np.asarray(value).reshape(()))
        except (TypeError, ValueError):
            raise ValueError(f"The output of the `schedule` function should be a float. Got: {value!r}") from None
        optimizer.learning_rate = learning_rate
        if self.verbose > 0:
            print_msg(f"Epoch {epoch + 1}: LearningRateScheduler setting learning rate to {learning_rate}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(_optimizer(self.model, "LearningRateScheduler").learning_rate)


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by ``factor`` once ``monitor`` has not improved (by more
    than ``min_delta``) for ``patience`` epochs, never going below ``min_lr``; then waits
    ``cooldown`` epochs before counting again. Logs 'learning_rate' at each epoch end.
    mode 'auto' maximises names containing 'acc' and minimises the rest (as Keras does).

    >>> cb = mk.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.2, patience=5, min_lr=1e-4)
    """

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0.0):
        super().__init__()
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Received factor={factor}")
        self.monitor = monitor
        self.factor = factor
        self.patience = patience
        self.verbose = verbose
        self.mode = check_mode(mode, "ReduceLROnPlateau")
        self.min_delta = min_delta
        self.cooldown = cooldown
        self.min_lr = min_lr
        self._reset()

    def _reset(self):
        self._higher = self.mode == "max" or (self.mode == "auto" and "acc" in self.monitor)
        self.best = -math.inf if self._higher else math.inf
        self.cooldown_counter = 0
        self.wait = 0

    def _improved(self, current):
        if self._higher:
            return current > self.best + self.min_delta
        return current < self.best - self.min_delta

    def in_cooldown(self):
        return self.cooldown_counter > 0

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        optimizer = _optimizer(self.model, "ReduceLROnPlateau")
        logs["learning_rate"] = float(optimizer.learning_rate)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Learning rate reduction is conditioned on metric `{self.monitor}` which is not "
                          f"available. Available metrics are: {','.join(logs.keys())}.", stacklevel=3)
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._improved(current):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old_lr = float(optimizer.learning_rate)
                if old_lr > np.float32(self.min_lr):
                    new_lr = max(old_lr * self.factor, self.min_lr)
                    optimizer.learning_rate = new_lr
                    if self.verbose > 0:
                        print_msg(f"Epoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new_lr}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0
