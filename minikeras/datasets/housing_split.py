"""What ``boston_housing`` and ``california_housing`` share: reading ``x`` and ``y`` from a
numeric ``.npz`` and Keras 3's seeded shuffle and train/test split."""

from __future__ import annotations

import os

import numpy as np


def check_test_split(test_split: float) -> None:
    """Raises Keras's ValueError unless ``0 <= test_split < 1``."""
    if not (0 <= test_split < 1):
        raise ValueError(f"Invalid `test_split` argument: {test_split}. It must be between 0 and 1 (exclusive of 1).")


def read_xy(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """``x`` and ``y`` of the ``.npz`` at ``path``, read with ``allow_pickle=False`` as Keras does.

    Raises:
        ValueError: a key is missing; the message names the file and the keys found.
    """
    with np.load(path, allow_pickle=False) as f:
        if "x" not in f.files or "y" not in f.files:
            raise ValueError(f"{os.fspath(path)}: expected arrays 'x' and 'y', found {sorted(f.files)}")
        return f["x"], f["y"]


def shuffle_and_split(x: np.ndarray, y: np.ndarray, test_split: float, seed: int):
    """Shuffle with ``np.random.RandomState(seed)``; the first ``int(n * (1 - test_split))``
    rows are the training split. Returns ``((x_train, y_train), (x_test, y_test))``."""
    indices = np.arange(len(x))
    np.random.RandomState(seed).shuffle(indices)
    x, y = x[indices], y[indices]
    n = int(len(x) * (1 - test_split))
    return (np.array(x[:n]), np.array(y[:n])), (np.array(x[n:]), np.array(y[n:]))
