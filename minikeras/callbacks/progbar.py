"""ProgbarLogger: the progress display of fit/evaluate/predict.

verbose=1 draws a tqdm bar per epoch ("Epoch 3/10", steps/s, ETA, and the running loss and
metrics as its postfix); verbose=2 prints one line per epoch; verbose=0 prints nothing.
Inside a Jupyter kernel with ipywidgets the bar is tqdm's notebook widget; everywhere else
(terminal, CI logs, a notebook without ipywidgets) it is plain text tqdm, which also works
when stdout is not a terminal.
"""
import sys
import time

from minikeras.callbacks.callback import Callback, print_msg
from minikeras.callbacks.interactive_logging import is_interactive_logging_enabled


def in_notebook():
    """True inside a Jupyter (IPython kernel) session."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
        return shell is not None and "IPKernelApp" in shell.config
    except Exception:  # a broken or partial IPython install: not a notebook
        return False


def _tqdm_class():
    if in_notebook():
        try:
            import ipywidgets  # noqa: F401  (tqdm.notebook needs it to draw)
            from tqdm.notebook import tqdm
            return tqdm
        except ImportError:
            pass
    from tqdm.std import tqdm
    return tqdm


def _isatty(stream):
    try:
        return stream.isatty()
    except Exception:  # closed or replaced streams
        return False


def open_bar(total, description=None, unit="step"):
    """A tqdm bar on stdout drawn as fit's: the notebook widget inside Jupyter (with
    ipywidgets), else text, redrawn at most every 10 s when stdout is not a terminal."""
    interactive = _isatty(sys.stdout) or in_notebook()
    return _tqdm_class()(total=total, desc=description, unit=unit, file=sys.stdout, leave=True,
                         dynamic_ncols=interactive, mininterval=0.1 if interactive else 10.0)


def format_value(value):
    """Keras's number format: 4 decimals, or scientific notation for tiny values."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:.4f}" if abs(value) > 1e-3 else f"{value:.4e}"


def format_logs(logs, separator=" - ", assign=": "):
    return separator.join(f"{key}{assign}{format_value(value)}" for key, value in (logs or {}).items())


class ProgbarLogger(Callback):
    """Shows progress: a tqdm bar per epoch (verbose=1) or one line per epoch (verbose=2).

    ``fit`` adds one itself when ``verbose`` is not 0; validation inside ``fit`` draws no
    bar of its own (its results appear at the end of the epoch's bar or line).
    """

    def __init__(self):
        super().__init__()
        self.verbose = 1
        self.epochs = 1
        self.target = None
        self._bar = None
        self._seen = 0
        self._start = None
        self._in_fit = False

    def set_params(self, params):
        params = params or {}
        verbose = params.get("verbose", 1)
        self.verbose = 1 if verbose == "auto" else int(verbose or 0)
        self.epochs = params.get("epochs") or 1
        self.target = params.get("steps")

    # -- hooks ----------------------------------------------------------------------------
    def on_train_begin(self, logs=None):
        self._in_fit = True

    def on_train_end(self, logs=None):
        self._close()
        self._in_fit = False

    def on_epoch_begin(self, epoch, logs=None):
        self._begin(f"Epoch {epoch + 1}/{self.epochs}")

    def on_train_batch_end(self, batch, logs=None):
        self._update(batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._finish(logs, f"Epoch {epoch + 1}/{self.epochs}")

    def on_test_begin(self, logs=None):
        if not self._in_fit:
            self._begin("Evaluate")

    def on_test_batch_end(self, batch, logs=None):
        if not self._in_fit:
            self._update(batch, logs)

    def on_test_end(self, logs=None):
        if not self._in_fit:
            self._finish(logs, None)

    def on_predict_begin(self, logs=None):
        self._begin("Predict")

    def on_predict_batch_end(self, batch, logs=None):
        self._update(batch, None)  # the logs hold predictions, not numbers to show

    def on_predict_end(self, logs=None):
        self._finish(None, None)

    # -- drawing --------------------------------------------------------------------------
    def _begin(self, description):
        self._close()
        self._seen = 0
        self._start = time.perf_counter()
        if self.verbose == 1 and is_interactive_logging_enabled():
            self._bar = open_bar(self.target, description)

    def _update(self, batch, logs):
        steps = batch + 1
        new = steps - self._seen
        self._seen = max(self._seen, steps)
        if self._bar is not None:
            if logs:
                self._bar.set_postfix_str(format_logs(logs, ", ", "="), refresh=False)
            if new > 0:
                self._bar.update(new)

    def _finish(self, logs, description):
        if self.target is None and self._seen:
            self.target = self._seen  # the next epoch's bar knows its length
        elapsed = time.perf_counter() - (self._start or time.perf_counter())
        if self._bar is not None:
            if logs:
                self._bar.set_postfix_str(format_logs(logs, ", ", "="), refresh=False)
            # the last line shows every value (validation too), wrapping rather than cut at the width
            self._bar.dynamic_ncols = False
            self._bar.ncols = None
            self._close()
        elif self.verbose:  # verbose=2, or verbose=1 with interactive logging off: one line
            head = description if description is not None else f"{self._seen}/{self.target or self._seen}"
            line = f"{head} - {elapsed:.0f}s"
            if logs:
                line += " - " + format_logs(logs)
            print_msg(line)

    def _close(self):
        if self._bar is not None:
            bar, self._bar = self._bar, None
            bar.close()
