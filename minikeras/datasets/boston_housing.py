"""Boston housing prices (Harrison and Rubinfeld, 1978; StatLib): 506 districts, 13 features,
the median home value in k$. Keras keeps it for old examples; its features include one built
from the share of Black residents, which is why scikit-learn removed the dataset."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from .dataset_file import dataset_file
from .housing_split import check_test_split, read_xy, shuffle_and_split


def load_data(
    path: str | os.PathLike = "boston_housing.npz", test_split: float = 0.2, seed: int = 113, *,
    mirrors: Sequence[str] | None = None,
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Load Boston housing, like ``keras.datasets.boston_housing.load_data``.

    Args:
        path: the file's name (default ``"boston_housing.npz"``) or a path to it.
        test_split: the fraction of rows kept for testing, in ``[0, 1)``.
        seed: seed of the shuffle before the split (``np.random.RandomState``).
        mirrors: base URLs to download from instead of Keras's origin.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: float64 features ``(n, 13)`` and targets ``(n,)``.
    """
    check_test_split(test_split)
    x, y = read_xy(dataset_file("boston_housing", "boston_housing.npz", path, mirrors=mirrors))
    return shuffle_and_split(x, y, test_split, seed)
