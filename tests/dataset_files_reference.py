"""Small files in the formats of Keras's single-file datasets, and a description of loaders'
outputs to compare. Only numpy and the standard library: the script that records Keras 3's
outputs for these files (tests/fixtures/keras_datasets/make_fixtures.py) imports it too.

Each writer makes the file Keras downloads, with the real file's structure (members, keys,
dtypes, the pickles' dict keys as bytes) and a few rows of deterministic content.
"""
from __future__ import annotations

import hashlib
import io
import json
import pickle
import tarfile
from pathlib import Path

import numpy as np

CIFAR10_BATCH_SIZES = (3, 2, 2, 1, 2)  # data_batch_1..5; test_batch holds 3
CIFAR100_SIZES = (5, 3)  # train, test
# CIFAR's batches are Python 2 pickles (protocol 2) whose str became bytes; Python 3's protocol 2
# writes bytes through _codecs.encode, which no array-only unpickler (Keras's or ours) allows;
# protocol 3 writes them as plain bytes, as the Python 2 files read.
PROTOCOL = 3


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def _batch(rng: np.random.RandomState, n: int, title: bytes, labels: dict[bytes, list[int]]) -> bytes:
    batch = {b"batch_label": title, b"data": rng.randint(0, 256, (n, 3072)).astype(np.uint8),
             b"filenames": [b"image_%d.png" % i for i in range(n)], **labels}
    return pickle.dumps(batch, protocol=PROTOCOL)


def write_cifar10(path: Path) -> Path:
    """cifar-10-python.tar.gz: cifar-10-batches-py/{data_batch_1..5, test_batch, batches.meta}."""
    rng = np.random.RandomState(10)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for i, n in enumerate(CIFAR10_BATCH_SIZES, 1):
            labels = {b"labels": [int(v) for v in rng.randint(0, 10, n)]}
            _add(tar, f"cifar-10-batches-py/data_batch_{i}", _batch(rng, n, b"training batch %d of 5" % i, labels))
        labels = {b"labels": [int(v) for v in rng.randint(0, 10, 3)]}
        _add(tar, "cifar-10-batches-py/test_batch", _batch(rng, 3, b"testing batch 1 of 1", labels))
        meta = {b"num_cases_per_batch": 10000, b"label_names": [b"airplane"] * 10, b"num_vis": 3072}
        _add(tar, "cifar-10-batches-py/batches.meta", pickle.dumps(meta, protocol=PROTOCOL))
    return path


def write_cifar100(path: Path) -> Path:
    """cifar-100-python.tar.gz: cifar-100-python/{train, test, meta}."""
    rng = np.random.RandomState(100)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for name, n in zip(("train", "test"), CIFAR100_SIZES):
            labels = {b"fine_labels": [int(v) for v in rng.randint(0, 100, n)],
                      b"coarse_labels": [int(v) for v in rng.randint(0, 20, n)]}
            _add(tar, f"cifar-100-python/{name}", _batch(rng, n, name.encode(), labels))
        meta = {b"fine_label_names": [b"apple"] * 100, b"coarse_label_names": [b"fish"] * 20}
        _add(tar, "cifar-100-python/meta", pickle.dumps(meta, protocol=PROTOCOL))
    return path


def _sequences(rng: np.random.RandomState, n: int, vocabulary: int) -> np.ndarray:
    xs = np.empty(n, dtype=object)
    for i in range(n):
        xs[i] = [int(w) for w in rng.randint(1, vocabulary, rng.randint(3, 16))]
    return xs


def write_imdb(path: Path) -> Path:
    """imdb.npz: x_train, x_test (object arrays of lists of ints), y_train, y_test (int64)."""
    rng = np.random.RandomState(1)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, x_train=_sequences(rng, 12, 40), y_train=rng.randint(0, 2, 12).astype(np.int64),
             x_test=_sequences(rng, 9, 40), y_test=rng.randint(0, 2, 9).astype(np.int64))
    return path


def write_reuters(path: Path) -> Path:
    """reuters.npz: x (object array of lists of ints), y (int64 topics)."""
    rng = np.random.RandomState(2)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, x=_sequences(rng, 17, 30), y=rng.randint(0, 46, 17).astype(np.int64))
    return path


def write_word_index(path: Path) -> Path:
    """a *_word_index.json: word -> frequency rank."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"the": 1, "and": 2, "a": 3, "of": 4, "film": 17}))
    return path


def write_boston_housing(path: Path) -> Path:
    """boston_housing.npz: x float64 (n, 13), y float64 (n,)."""
    rng = np.random.RandomState(3)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, x=rng.uniform(0, 100, (23, 13)), y=rng.uniform(5, 50, 23))
    return path


def write_california_housing(path: Path) -> Path:
    """california_housing.npz: x float32 (n, 8), y float32 (n,); more than the 600 rows
    version='small' keeps."""
    rng = np.random.RandomState(4)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, x=rng.uniform(0, 10, (613, 8)).astype(np.float32),
             y=rng.uniform(1e4, 5e5, 613).astype(np.float32))
    return path


WRITERS = {
    "cifar10": ("cifar-10-python.tar.gz", write_cifar10),
    "cifar100": ("cifar-100-python.tar.gz", write_cifar100),
    "imdb": ("imdb.npz", write_imdb),
    "reuters": ("reuters.npz", write_reuters),
    "boston_housing": ("boston_housing.npz", write_boston_housing),
    "california_housing": ("california_housing.npz", write_california_housing),
}


def describe(value):
    """A JSON-able description of a loader's output: nested tuples as lists; numeric arrays
    by shape, dtype and the sha256 of their bytes; object arrays by shape and their lists
    of ints (with the Python type of the first word)."""
    if isinstance(value, (tuple, list)) and not isinstance(value, np.ndarray):
        return [describe(v) for v in value]
    if isinstance(value, np.ndarray) and value.dtype == object:
        words = [w for x in value.reshape(-1) for w in x] if value.ndim == 1 else list(value.reshape(-1))
        return {"shape": list(value.shape), "dtype": "object",
                "word_type": type(words[0]).__name__ if words else None,
                "values": [[int(w) for w in x] for x in value] if value.ndim == 1 else value.tolist()}
    if isinstance(value, np.ndarray):
        return {"shape": list(value.shape), "dtype": str(value.dtype),
                "sha256": hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()}
    return value
