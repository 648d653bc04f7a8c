"""CIFAR-10 (Krizhevsky, 2009): 50,000 training and 10,000 test 32x32 colour images of 10 classes."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from minikeras import backend

from .cifar_batches import read_batches
from .dataset_file import dataset_file

ARCHIVE = "cifar-10-python.tar.gz"
FOLDER = "cifar-10-batches-py"
CLASS_NAMES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")


def load_data(
    path: str | os.PathLike | None = None, *, mirrors: Sequence[str] | None = None
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Load CIFAR-10, like ``keras.datasets.cifar10.load_data()``.

    ``cifar-10-python.tar.gz`` (the CIFAR site's archive, Keras's origin and sha256) is
    found as ``dataset_file`` says (``$MINIKERAS_DATASETS/cifar10/``, the cache, then a
    download); its batches are read from the archive without extracting it.

    Args:
        path: a path to the archive, or its name in those folders (minikeras's addition:
            Keras's ``load_data`` takes no argument).
        mirrors: base URLs to download from instead of the CIFAR site.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: uint8 images ``(50000, 32, 32, 3)`` and
        ``(10000, 32, 32, 3)`` (``(n, 3, 32, 32)`` when ``image_data_format()`` is
        ``"channels_first"``), uint8 labels ``(50000, 1)`` and ``(10000, 1)``; label ``i``
        names ``CLASS_NAMES[i]``. Keras fills 10,000 images per training batch; here
        each batch gives the images it holds (the same for the real file).
    """
    archive = dataset_file("cifar10", ARCHIVE, path, mirrors=mirrors)
    members = [f"{FOLDER}/data_batch_{i}" for i in range(1, 6)] + [f"{FOLDER}/test_batch"]
    batches = read_batches(archive, members, "labels")
    x_train = np.concatenate([x for x, _ in batches[:5]]).astype(np.uint8)
    y_train = np.concatenate([np.asarray(y, dtype=np.uint8) for _, y in batches[:5]])
    x_test, y_test = batches[5]
    y_train = np.reshape(y_train, (len(y_train), 1))
    y_test = np.reshape(y_test, (len(y_test), 1))
    if backend.image_data_format() == "channels_last":
        x_train = x_train.transpose(0, 2, 3, 1)
        x_test = x_test.transpose(0, 2, 3, 1)
    return (x_train, y_train), (x_test.astype(x_train.dtype), y_test.astype(y_train.dtype))
