"""CIFAR-100 (Krizhevsky, 2009): 50,000 training and 10,000 test 32x32 colour images of 100
classes grouped in 20 superclasses."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from minikeras import backend

from .cifar_batches import read_batches
from .dataset_file import dataset_file

ARCHIVE = "cifar-100-python.tar.gz"
FOLDER = "cifar-100-python"


def load_data(
    label_mode: str = "fine", path: str | os.PathLike | None = None, *, mirrors: Sequence[str] | None = None
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Load CIFAR-100, like ``keras.datasets.cifar100.load_data(label_mode)``.

    ``cifar-100-python.tar.gz`` (the CIFAR site's archive, Keras's origin and sha256) is
    found as ``dataset_file`` says; its ``train`` and ``test`` batches are read from it.

    Args:
        label_mode: ``"fine"`` (100 classes) or ``"coarse"`` (20 superclasses).
        path: a path to the archive, or its name (minikeras's addition).
        mirrors: base URLs to download from instead of the CIFAR site.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: uint8 images ``(50000, 32, 32, 3)`` and
        ``(10000, 32, 32, 3)`` (channels first under ``"channels_first"``), int64 labels
        ``(50000, 1)`` and ``(10000, 1)``, as Keras returns them.

    Raises:
        ValueError: ``label_mode`` is neither ``"fine"`` nor ``"coarse"``.
    """
    if label_mode not in ["fine", "coarse"]:
        raise ValueError(f'`label_mode` must be one of `"fine"`, `"coarse"`. Received: label_mode={label_mode}.')
    archive = dataset_file("cifar100", ARCHIVE, path, mirrors=mirrors)
    (x_train, y_train), (x_test, y_test) = read_batches(
        archive, [f"{FOLDER}/train", f"{FOLDER}/test"], f"{label_mode}_labels")
    y_train = np.reshape(y_train, (len(y_train), 1))
    y_test = np.reshape(y_test, (len(y_test), 1))
    if backend.image_data_format() == "channels_last":
        x_train = x_train.transpose(0, 2, 3, 1)
        x_test = x_test.transpose(0, 2, 3, 1)
    return (x_train, y_train), (x_test, y_test)
