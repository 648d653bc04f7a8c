"""MNIST handwritten digits (LeCun, Cortes, Burges): 60,000 train and 10,000 test images."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from . import _source


def load_data(
    path: str | os.PathLike | None = None, *, mirrors: Sequence[str] | None = None
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Load MNIST, like ``keras.datasets.mnist.load_data``.

    The four ``*-idx?-ubyte.gz`` files are looked for in ``path`` (a
    directory), then ``$MINIKERAS_DATASETS/mnist/``, then the cache
    ``$MINIKERAS_HOME/datasets/mnist/`` (default ``~/.minikeras``), and
    finally downloaded into the cache, sha256-checked (see ``_source``).

    Args:
        path: directory holding the four files; if given, nothing else is tried.
        mirrors: base URLs to download from instead of the public mirrors.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: uint8 arrays of shapes
        ``(60000, 28, 28)``, ``(60000,)``, ``(10000, 28, 28)``, ``(10000,)``;
        labels are digits 0..9.

    Example:
        >>> (x_train, y_train), (x_test, y_test) = load_data()
        >>> x_train.shape, y_train[:5]
        ((60000, 28, 28), array([5, 0, 4, 1, 9], dtype=uint8))
    """
    return _source.load("mnist", path, mirrors=mirrors)
