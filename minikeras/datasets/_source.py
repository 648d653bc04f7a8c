"""Where the MNIST-style datasets come from: file names, checksums, mirrors, look-up; and the
mirrors and hashes of the single-file datasets, which ``dataset_file`` finds.

``mnist`` and ``fashion_mnist`` are both four gzip IDX files with the same
names; this module finds the folder holding them, in this order:

1. the ``path`` argument (a directory; it must hold all four files);
2. ``$MINIKERAS_DATASETS/<name>/``;
3. the cache ``$MINIKERAS_HOME/datasets/<name>/`` (``MINIKERAS_HOME``
   defaults to ``~/.minikeras``);
4. a download of the missing files into that cache, from ``mirrors``, else
   ``$MINIKERAS_MIRRORS`` (base URLs separated by spaces or commas), else
   ``MIRRORS[name]``. In a mirror URL ``{name}`` stands for the dataset name.

Files found locally are checked by parsing (magic numbers, counts, sizes);
downloaded files are always checked against ``SHA256[name]``. Tests may
monkeypatch ``SHA256`` and ``MIRRORS`` (module-level dicts).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from . import idx
from .download import DownloadError, download

TRAIN_IMAGES = "train-images-idx3-ubyte.gz"
TRAIN_LABELS = "train-labels-idx1-ubyte.gz"
TEST_IMAGES = "t10k-images-idx3-ubyte.gz"
TEST_LABELS = "t10k-labels-idx1-ubyte.gz"
FILES = (TRAIN_IMAGES, TRAIN_LABELS, TEST_IMAGES, TEST_LABELS)

IMAGE_SHAPE = (28, 28)
NUM_CLASSES = 10

KERAS_ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"

SHA256 = {
    "mnist": {
        TRAIN_IMAGES: "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
        TRAIN_LABELS: "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
        TEST_IMAGES: "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
        TEST_LABELS: "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
    },
    "fashion_mnist": {
        TRAIN_IMAGES: "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84",
        TRAIN_LABELS: "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845",
        TEST_IMAGES: "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073",
        TEST_LABELS: "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5",
    },
    # Keras 3's hashes of the single-file datasets; the word indices have md5s there.
    "cifar10": {"cifar-10-python.tar.gz": "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce"},
    "cifar100": {"cifar-100-python.tar.gz": "85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7"},
    "imdb": {
        "imdb.npz": "69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f",
        "imdb_word_index.json": "bfafd718b763782e994055a2d397834f",
    },
    "reuters": {
        "reuters.npz": "d6586e694ee56d7a4e65172e12b3e987c03096cb01eab99753921ef915959916",
        "reuters_word_index.json": "4d44cc38712099c9e383dc6e5f11a921",
    },
    "boston_housing": {"boston_housing.npz": "f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5"},
    "california_housing": {
        "california_housing.npz": "1a2e3a52e0398de6463aebe6f4a8da34fb21fbb6b934cf88c3425e766f2a1a6f",
    },
}

MIRRORS = {
    "mnist": (
        "https://ossci-datasets.s3.amazonaws.com/mnist/",
        "https://storage.googleapis.com/cvdf-datasets/mnist/",
        "http://yann.lecun.com/exdb/mnist/",
    ),
    "fashion_mnist": (
        "https://storage.googleapis.com/tensorflow/tf-keras-datasets/",
        "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
    ),
    # The single-file datasets (dataset_file.py), at Keras 3's origins.
    "cifar10": ("https://www.cs.toronto.edu/~kriz/",),
    "cifar100": ("https://www.cs.toronto.edu/~kriz/",),
    "imdb": (KERAS_ORIGIN,),
    "reuters": (KERAS_ORIGIN,),
    "boston_housing": (KERAS_ORIGIN,),
    "california_housing": (KERAS_ORIGIN,),
}


def data_home() -> Path:
    """Return the dataset cache root, ``$MINIKERAS_HOME/datasets``.

    ``MINIKERAS_HOME`` defaults to ``~/.minikeras``.
    """
    home = os.environ.get("MINIKERAS_HOME") or "~/.minikeras"
    return Path(home).expanduser() / "datasets"


def mirror_list(name: str, mirrors: Sequence[str] | None = None) -> list[str]:
    """Return the base URLs to try for dataset ``name``.

    Args:
        name: dataset name, e.g. ``"mnist"``.
        mirrors: explicit base URLs; if ``None``, ``$MINIKERAS_MIRRORS`` (split
            on spaces/commas), else ``MIRRORS[name]``.

    Returns:
        The URLs with ``{name}`` replaced by ``name``.
    """
    if mirrors is None:
        env = os.environ.get("MINIKERAS_MIRRORS", "").strip()
        mirrors = re.split(r"[\s,]+", env) if env else MIRRORS[name]
    return [m.replace("{name}", name) for m in mirrors]


def locate(
    name: str,
    path: str | os.PathLike | None = None,
    *,
    mirrors: Sequence[str] | None = None,
    progress: bool | None = None,
) -> Path:
    """Return the directory holding the four files of ``name``, downloading if needed.

    Args:
        name: ``"mnist"`` or ``"fashion_mnist"``.
        path: a directory that must hold the four files; skips every other
            place (and never downloads).
        mirrors: base URLs overriding ``$MINIKERAS_MIRRORS`` / ``MIRRORS``.
        progress: progress bar for downloads; ``None`` means only on a terminal.

    Returns:
        The directory (``path``, ``$MINIKERAS_DATASETS/<name>`` or the cache).

    Raises:
        FileNotFoundError: ``path`` is given and lacks some of the files.
        DownloadError: the files are nowhere local and the download failed.
    """
    if path is not None:
        folder = Path(path).expanduser()
        missing = _missing(folder)
        if missing:
            where = "is not a directory" if not folder.is_dir() else f"lacks {', '.join(missing)}"
            raise FileNotFoundError(
                f"{name}: path={os.fspath(path)!r} {where}; expected a directory "
                f"holding {', '.join(FILES)}"
            )
        return folder
    looked = []
    env = os.environ.get("MINIKERAS_DATASETS")
    if env:
        folder = Path(env).expanduser() / name
        lacks = _missing(folder)
        if not lacks:
            return folder
        looked.append(f"$MINIKERAS_DATASETS/{name} ({folder}) lacks {', '.join(lacks)}")
    cache = data_home() / name
    missing = _missing(cache)
    if missing:
        looked.append(f"the cache {cache} lacks {', '.join(missing)}")
    for filename in missing:
        try:
            download(filename, mirror_list(name, mirrors), SHA256[name][filename], cache,
                     progress=progress)
        except DownloadError as err:
            raise DownloadError(
                f"{name}: {'; '.join(looked)}; and {err}\n"
                f"Offline? Put the four files in $MINIKERAS_DATASETS/{name}/ or pass "
                "load_data(path=<directory>).",
                err.failures,
            ) from None  # its message holds the mirror list; chaining printed it twice
    return cache


def load(
    name: str,
    path: str | os.PathLike | None = None,
    *,
    mirrors: Sequence[str] | None = None,
    progress: bool | None = None,
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Locate (see ``locate``), parse and check dataset ``name``.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``, uint8, images ``(n, 28, 28)``.

    Raises:
        ValueError: a file is corrupt, foreign, or its images are not 28x28 or
            its labels not in ``0..9``; the message names the file.
    """
    folder = locate(name, path, mirrors=mirrors, progress=progress)
    return (
        _read_split(folder / TRAIN_IMAGES, folder / TRAIN_LABELS),
        _read_split(folder / TEST_IMAGES, folder / TEST_LABELS),
    )


def _read_split(images_path: Path, labels_path: Path) -> tuple[np.ndarray, np.ndarray]:
    x, y = idx.read_pair(images_path, labels_path)
    if x.shape[1:] != IMAGE_SHAPE:
        raise ValueError(f"{images_path}: expected images of {IMAGE_SHAPE}, found {x.shape[1:]}")
    if y.size and y.max() >= NUM_CLASSES:
        raise ValueError(
            f"{labels_path}: expected labels in 0..{NUM_CLASSES - 1}, found {int(y.max())}"
        )
    return x, y


def _missing(folder: Path) -> list[str]:
    return [f for f in FILES if not (folder / f).is_file()]
