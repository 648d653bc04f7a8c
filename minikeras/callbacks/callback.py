"""Callback (the hooks fit/evaluate/predict call), CallbackList, History, LambdaCallback."""
import sys

import numpy as np

from minikeras.callbacks.interactive_logging import is_interactive_logging_enabled, logger

HOOKS = (
    "on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end",
    "on_train_batch_begin", "on_train_batch_end", "on_batch_begin", "on_batch_end",
    "on_test_begin", "on_test_end", "on_test_batch_begin", "on_test_batch_end",
    "on_predict_begin", "on_predict_end", "on_predict_batch_begin", "on_predict_batch_end",
)


def print_msg(message):
    """Prints a line to stdout without tearing a progress bar that is being drawn (or, with
    interactive logging off, logs it at INFO level on the "minikeras" logger)."""
    if not is_interactive_logging_enabled():
        logger.info(str(message))
        return
    from tqdm.std import tqdm
    tqdm.write(str(message), file=sys.stdout)


def to_python(value):
    """A scalar Tensor / NumPy / JAX value as a Python float; anything else unchanged."""
    if isinstance(value, (float, int, str, bool)) or value is None:
        return value
    try:
        if np.size(value) == 1:
            return float(np.asarray(value).reshape(()))
    except (TypeError, ValueError):
        pass
    return value


class Callback:
    """The base class of callbacks: override the ``on_*`` hooks you need.

    ``model`` is the model being trained (set by ``set_model``) and ``params`` the run's
    parameters (``{'epochs': E, 'steps': S or None, 'verbose': v}``). Epoch and batch
    indices are 0-based. ``logs`` are dicts of Python floats: running averages of the loss
    and metrics at batch ends, and the epoch's results (with ``val_*``) at epoch end.

    >>> class PrintLoss(mk.callbacks.Callback):
    ...     def on_epoch_end(self, epoch, logs=None):
    ...         print(epoch, logs["loss"])
    """

    def __init__(self):
        self.params = {}
        self.model = None

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self.model = model

    def on_batch_begin(self, batch, logs=None):
        """Older name of ``on_train_batch_begin`` (called by it)."""

    def on_batch_end(self, batch, logs=None):
        """Older name of ``on_train_batch_end`` (called by it)."""

    def on_epoch_begin(self, epoch, logs=None):
        """Called at the start of each training epoch."""

    def on_epoch_end(self, epoch, logs=None):
        """Called at the end of each training epoch; ``logs`` holds its results, ``val_*`` too."""

    def on_train_batch_begin(self, batch, logs=None):
        """Called before each training batch; by default calls ``on_batch_begin``."""
        self.on_batch_begin(batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        """Called after each training batch with the running averages so far; by default
        calls ``on_batch_end``."""
        self.on_batch_end(batch, logs)

    def on_test_batch_begin(self, batch, logs=None):
        """Called before each batch of ``evaluate`` (and of validation inside ``fit``)."""

    def on_test_batch_end(self, batch, logs=None):
        """Called after each batch of ``evaluate`` (and of validation inside ``fit``)."""

    def on_predict_batch_begin(self, batch, logs=None):
        """Called before each batch of ``predict``."""

    def on_predict_batch_end(self, batch, logs=None):
        """Called after each batch of ``predict``."""

    def on_train_begin(self, logs=None):
        """Called once when ``fit`` starts."""

    def on_train_end(self, logs=None):
        """Called once when ``fit`` ends (also after early stopping)."""

    def on_test_begin(self, logs=None):
        """Called when ``evaluate`` (or validation) starts."""

    def on_test_end(self, logs=None):
        """Called when ``evaluate`` (or validation) ends."""

    def on_predict_begin(self, logs=None):
        """Called when ``predict`` starts."""

    def on_predict_end(self, logs=None):
        """Called when ``predict`` ends."""


class History(Callback):
    """Records the epoch logs: ``history.history['loss']`` is the list of epoch losses and
    ``history.epoch`` the epoch indices. ``fit`` returns it (and sets ``model.history``)."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)
        if self.model is not None:
            self.model.history = self


class CallbackList(Callback):
    """Calls every hook of a list of callbacks, in order; what ``fit``, ``evaluate`` and
    ``predict`` talk to.

    Args:
      callbacks: a list of Callbacks (or None).
      add_history: append a History unless one is in the list.
      progbar: what makes the progress bar (``ProgbarLogger``, which fit, evaluate and
        predict pass), called when ``verbose`` is not 0 and appended unless a callback of the
        kind it makes is in the list already; None adds no bar.
      model: the model, given to every callback (and ``model.history`` set to the History).
      **params: ``epochs``, ``steps``, ``verbose``: given to every callback's ``set_params``.

    Logs are converted in place to Python floats before they reach the callbacks, and the
    same dict goes to every callback, so what one adds (e.g. 'learning_rate') reaches the
    next ones (History, CSVLogger, the progress bar), which come last.
    """

    def __init__(self, callbacks=None, add_history=True, progbar=None, model=None, **params):
        super().__init__()
        if callbacks is None:
            callbacks = []
        elif isinstance(callbacks, Callback):
            callbacks = [callbacks]
        self.callbacks = list(callbacks)
        for callback in self.callbacks:
            if not isinstance(callback, Callback):
                raise TypeError(f"callbacks must be mk.callbacks.Callback instances, received {callback!r} of type "
                                f"{type(callback).__name__}")
        self._history = next((c for c in self.callbacks if isinstance(c, History)), None)
        if self._history is None and add_history:
            self._history = History()
            self.callbacks.append(self._history)
        if progbar is not None and params.get("verbose", 0) != 0:
            bar = progbar()
            if not any(isinstance(c, type(bar)) for c in self.callbacks):
                self.callbacks.append(bar)
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    def append(self, callback):
        self.callbacks.append(callback)

    def __iter__(self):
        return iter(self.callbacks)

    def __len__(self):
        return len(self.callbacks)

    def set_params(self, params):
        self.params = params
        for callback in self.callbacks:
            callback.set_params(params)

    def set_model(self, model):
        self.model = model
        if self._history is not None:
            model.history = self._history
        for callback in self.callbacks:
            callback.set_model(model)

    def _call(self, hook, *args, logs=None):
        if logs is None:
            logs = {}
        else:
            for key, value in logs.items():
                logs[key] = to_python(value)
        for callback in self.callbacks:
            getattr(callback, hook)(*args, logs)
        return logs

    def on_batch_begin(self, batch, logs=None):
        self._call("on_batch_begin", batch, logs=logs)

    def on_batch_end(self, batch, logs=None):
        self._call("on_batch_end", batch, logs=logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._call("on_epoch_begin", epoch, logs=logs)

    def on_epoch_end(self, epoch, logs=None):
        self._call("on_epoch_end", epoch, logs=logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._call("on_train_batch_begin", batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self._call("on_train_batch_end", batch, logs=logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._call("on_test_batch_begin", batch, logs=logs)

    def on_test_batch_end(self, batch, logs=None):
        self._call("on_test_batch_end", batch, logs=logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._call("on_predict_batch_begin", batch, logs=logs)

    def on_predict_batch_end(self, batch, logs=None):
        # predictions (arrays) travel in these logs: leave them unconverted
        for callback in self.callbacks:
            callback.on_predict_batch_end(batch, logs if logs is not None else {})

    def on_train_begin(self, logs=None):
        self._call("on_train_begin", logs=logs)

    def on_train_end(self, logs=None):
        self._call("on_train_end", logs=logs)

    def on_test_begin(self, logs=None):
        self._call("on_test_begin", logs=logs)

    def on_test_end(self, logs=None):
        self._call("on_test_end", logs=logs)

    def on_predict_begin(self, logs=None):
        self._call("on_predict_begin", logs=logs)

    def on_predict_end(self, logs=None):
        self._call("on_predict_end", logs=logs)


class LambdaCallback(Callback):
    """A callback made of functions: ``on_epoch_begin``/``on_epoch_end`` take
    ``(epoch, logs)``, ``on_train_begin``/``on_train_end`` take ``(logs)``, the batch hooks
    take ``(batch, logs)``; any other hook may be given by name.

    >>> cb = mk.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: print(logs["loss"]))
    """

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None,
                 on_train_batch_begin=None, on_train_batch_end=None, on_batch_begin=None, on_batch_end=None,
                 **kwargs):
        super().__init__()
        unknown = [name for name in kwargs if name not in HOOKS]
        if unknown:
            raise ValueError(f"LambdaCallback received unknown hook(s) {unknown}; hooks are {list(HOOKS)}")
        given = dict(on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end, on_train_begin=on_train_begin,
                     on_train_end=on_train_end, on_train_batch_begin=on_train_batch_begin,
                     on_train_batch_end=on_train_batch_end, on_batch_begin=on_batch_begin,
                     on_batch_end=on_batch_end, **kwargs)
        for name, function in given.items():
            if function is not None:
                if not callable(function):
                    raise TypeError(f"LambdaCallback {name} must be callable, received {function!r}")
                setattr(self, name, function)
