"""Fashion-MNIST (Zalando Research, MIT licence): 28x28 images of 10 kinds of clothing."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from . import _source

CLASS_NAMES = (
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
)


def load_data(
    path: str | os.PathLike | None = None, *, mirrors: Sequence[str] | None = None
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Load Fashion-MNIST, like ``keras.datasets.fashion_mnist.load_data``.

    The four ``*-idx?-ubyte.gz`` files are looked for in ``path`` (a
    directory), then ``$MINIKERAS_DATASETS/fashion_mnist/``, then the cache
    ``$MINIKERAS_HOME/datasets/fashion_mnist/`` (default ``~/.minikeras``),
    and finally downloaded into the cache, sha256-checked (see ``_source``).

    Args:
        path: directory holding the four files; if given, nothing else is tried.
        mirrors: base URLs to download from instead of the public mirrors.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: uint8 arrays of shapes
        ``(60000, 28, 28)``, ``(60000,)``, ``(10000, 28, 28)``, ``(10000,)``;
        label ``i`` names ``CLASS_NAMES[i]``.

    Example:
        >>> (x_train, y_train), _ = load_data()
        >>> CLASS_NAMES[y_train[0]]
        'Ankle boot'
    """
    return _source.load("fashion_mnist", path, mirrors=mirrors)
