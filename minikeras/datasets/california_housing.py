"""California housing (Pace and Barry, 1997; StatLib): 20,640 block groups, 8 features, the
median house value in dollars."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from .dataset_file import dataset_file
from .housing_split import check_test_split, read_xy, shuffle_and_split

SMALL_SIZE = 600  # version="small": Keras's first 600 rows


def load_data(
    version: str = "large", path: str | os.PathLike = "california_housing.npz", test_split: float = 0.2,
    seed: int = 113, *, mirrors: Sequence[str] | None = None,
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Load California housing, like ``keras.datasets.california_housing.load_data``.

    Args:
        version: ``"large"`` (every row) or ``"small"`` (the first 600 rows).
        path: the file's name (default ``"california_housing.npz"``) or a path to it.
        test_split: the fraction of rows kept for testing, in ``[0, 1)``.
        seed: seed of the shuffle before the split (``np.random.RandomState``).
        mirrors: base URLs to download from instead of Keras's origin.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: features ``(n, 8)`` and targets ``(n,)``
        in the file's dtype.
    """
    check_test_split(test_split)
    x, y = read_xy(dataset_file("california_housing", "california_housing.npz", path, mirrors=mirrors))
    if version == "small":
        x, y = x[:SMALL_SIZE], y[:SMALL_SIZE]
    elif version != "large":
        raise ValueError(f"Argument `version` must be one of 'small', 'large'. Received: version={version}")
    return shuffle_and_split(x, y, test_split, seed)
