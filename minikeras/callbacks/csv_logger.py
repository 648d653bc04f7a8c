"""CSVLogger: one CSV row per epoch."""
import collections.abc
import csv
import os

import numpy as np

from minikeras.callbacks.callback import Callback


class CSVLogger(Callback):
    """Streams the epoch logs to a CSV file: a header ``epoch,<sorted log keys>``, then one
    row per epoch (0-based epoch index, as in Keras), flushed at each epoch end.

    Args:
      filename: the CSV file, e.g. 'run/log.csv'.
      separator: the field separator.
      append: add to an existing file (without repeating its header) instead of overwriting.

    >>> logger = mk.callbacks.CSVLogger("training.log")
    """

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename = os.fspath(filename)
        self.sep = separator
        self.append = append
        self.keys = None
        self.writer = None
        self.csv_file = None
        self.append_header = True

    def on_train_begin(self, logs=None):
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename) as existing:
                    self.append_header = not existing.readline()
            mode = "a"
        else:
            mode = "w"
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.csv_file = open(self.filename, mode, newline="")
        self.writer = None
        self.keys = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.csv_file is None or self.csv_file.closed:
            self.on_train_begin()
        if self.keys is None:
            self.keys = sorted(logs.keys())
            # keep a column for validation results that this epoch did not produce
            for name in getattr(self.model, "metrics_names", None) or []:
                if name.startswith("val_") and name not in self.keys:
                    self.keys.append(name)
        if self.writer is None:
            dialect = type("CustomDialect", (csv.excel,), {"delimiter": self.sep})
            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + self.keys, dialect=dialect)
            if self.append_header:
                self.writer.writeheader()
        row = {"epoch": epoch}
        row.update((key, _cell(logs.get(key, "NA"))) for key in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.writer = None


def _cell(value):
    if isinstance(value, str):
        return value
    if isinstance(value, collections.abc.Iterable) and not (isinstance(value, np.ndarray) and value.ndim == 0):
        return f'"[{", ".join(map(str, value))}]"'
    return value
