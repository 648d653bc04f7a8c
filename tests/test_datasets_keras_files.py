"""Tests for the single-file datasets (cifar10, cifar100, imdb, reuters, boston_housing,
california_housing): outputs equal to Keras 3's own loaders' for the same small files
(tests/fixtures/keras_datasets/, with the script that recorded them), the look-up and
download through a local HTTP server, and bad files and arguments.
"""
from __future__ import annotations

import hashlib
import json
import os
import pickle
import tarfile
from pathlib import Path

import numpy as np
import pytest
from dataset_files_reference import WRITERS, describe, write_imdb, write_word_index
from datasets_reference import isolated, local_server  # noqa: F401 (isolated: autouse; the server fixture)

from minikeras import backend
from minikeras.datasets import (
    _source,
    boston_housing,
    california_housing,
    cifar10,
    cifar100,
    download as dl,
    imdb,
    reuters,
)

EXPECTED = json.loads((Path(__file__).parent / "fixtures" / "keras_datasets" / "expected.json").read_text())
MODULES = {"cifar10": cifar10, "cifar100": cifar100, "imdb": imdb, "reuters": reuters,
           "boston_housing": boston_housing, "california_housing": california_housing}
REAL_DATA = os.environ.get("MINIKERAS_DATASETS")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def small_files(tmp_path, monkeypatch):
    """Every small file under $MINIKERAS_DATASETS/<dataset>/ with Keras's file names."""
    root = tmp_path / "data"
    for dataset, (filename, write) in WRITERS.items():
        write(root / dataset / filename)
    write_word_index(root / "imdb" / "imdb_word_index.json")
    write_word_index(root / "reuters" / "reuters_word_index.json")
    monkeypatch.setenv("MINIKERAS_DATASETS", str(root))
    return root


@pytest.fixture
def data_format():
    before = backend.image_data_format()
    yield backend.set_image_data_format
    backend.set_image_data_format(before)


def case_id(case):
    args = ",".join(f"{k}={v}" for k, v in case["kwargs"].items())
    suffix = f"-{case['image_data_format']}" if case["image_data_format"] else ""
    return f"{case['dataset']}.{case['function']}({args}){suffix}"


@pytest.mark.parametrize("case", EXPECTED["cases"], ids=case_id)
def test_outputs_equal_keras(case, small_files, data_format):
    if case["image_data_format"]:
        data_format(case["image_data_format"])
    out = getattr(MODULES[case["dataset"]], case["function"])(**case["kwargs"])
    assert json.loads(json.dumps(describe(out))) == case["output"]


def test_cifar_images_are_the_pickled_rows_channels_last(small_files):
    """The layout by the format's definition: 1024 red, green, blue values per image, row-major."""
    (x_train, y_train), (x_test, y_test) = cifar10.load_data()
    assert x_train.shape == (10, 32, 32, 3) and y_train.shape == (10, 1)
    with tarfile.open(small_files / "cifar10" / "cifar-10-python.tar.gz") as tar:
        batch = pickle.load(tar.extractfile("cifar-10-batches-py/test_batch"), encoding="bytes")
    pixel = 4 * 32 + 7  # row 4, column 7
    np.testing.assert_array_equal(x_test[1, 4, 7], batch[b"data"][1, [pixel, 1024 + pixel, 2048 + pixel]])
    assert y_test[:, 0].tolist() == batch[b"labels"]


def test_download_into_cache_then_reuse(server, tmp_path, monkeypatch):
    base, root, requested = server
    write_imdb(root / "imdb.npz")
    write_word_index(root / "imdb_word_index.json")
    monkeypatch.setitem(_source.SHA256, "imdb", {
        "imdb.npz": sha(root / "imdb.npz"),
        "imdb_word_index.json": hashlib.md5((root / "imdb_word_index.json").read_bytes()).hexdigest(),
    })
    (x_train, _), _ = imdb.load_data(mirrors=[base + "missing/", base])
    cache = tmp_path / "home" / "datasets" / "imdb"
    assert (cache / "imdb.npz").read_bytes() == (root / "imdb.npz").read_bytes()
    assert requested == ["/missing/imdb.npz", "/imdb.npz"]
    monkeypatch.setenv("MINIKERAS_MIRRORS", base)
    assert imdb.get_word_index()["film"] == 17  # md5-checked, as Keras publishes it
    requested.clear()
    (again, _), _ = imdb.load_data()
    assert requested == [] and again.tolist() == x_train.tolist()


def test_download_saves_under_the_name_path_gives(server, tmp_path, monkeypatch):
    base, root, _ = server
    filename, write = WRITERS["cifar100"]
    write(root / filename)
    monkeypatch.setitem(_source.SHA256, "cifar100", {filename: sha(root / filename)})
    cifar100.load_data(path="c100.tar.gz", mirrors=[base])
    assert os.listdir(tmp_path / "home" / "datasets" / "cifar100") == ["c100.tar.gz"]


def test_wrong_checksum_leaves_cache_empty(server, tmp_path, monkeypatch):
    base, root, _ = server
    write_imdb(root / "reuters.npz")
    with pytest.raises(dl.DownloadError, match="sha256 mismatch") as info:
        reuters.load_data(mirrors=[base])
    assert "Offline? Put reuters.npz in $MINIKERAS_DATASETS/reuters/" in str(info.value)
    assert os.listdir(tmp_path / "home" / "datasets" / "reuters") == []


def test_no_mirrors_is_a_clear_error():
    with pytest.raises(dl.DownloadError, match="no mirrors given"):
        boston_housing.load_data()


def test_explicit_file_path_and_bare_name(small_files, tmp_path, monkeypatch):
    own = WRITERS["boston_housing"][1](tmp_path / "elsewhere" / "b.npz")
    expected = boston_housing.load_data()
    for got in (boston_housing.load_data(str(own)), boston_housing.load_data(own.as_posix())):
        np.testing.assert_array_equal(got[0][0], expected[0][0])
    (small_files / "boston_housing" / "boston_housing.npz").rename(small_files / "boston_housing" / "mine.npz")
    np.testing.assert_array_equal(boston_housing.load_data("mine.npz")[1][1], expected[1][1])
    with pytest.raises(FileNotFoundError, match=r"boston_housing: path='/nowhere/b.npz' is not a file"):
        boston_housing.load_data("/nowhere/b.npz")


def test_keras_argument_errors(small_files):
    with pytest.raises(ValueError, match='`label_mode` must be one of `"fine"`, `"coarse"`. Received: label_mode=x'):
        cifar100.load_data("x")
    for module in (boston_housing, california_housing):
        with pytest.raises(ValueError, match="Invalid `test_split` argument: 1. It must be between 0 and 1"):
            module.load_data(test_split=1)
    with pytest.raises(ValueError, match="`version` must be one of 'small', 'large'. Received: version=medium"):
        california_housing.load_data(version="medium")
    with pytest.raises(ValueError, match="shorter than maxlen=2, no sequence was kept"):
        imdb.load_data(maxlen=2)


def test_foreign_pickles_are_refused(tmp_path):
    np.savez(tmp_path / "imdb.npz", x_train=np.array([os.system], dtype=object), y_train=np.zeros(1),
             x_test=np.array([[1]], dtype=object), y_test=np.zeros(1))
    with pytest.raises(pickle.UnpicklingError, match="refusing to load posix.system"):
        imdb.load_data(str(tmp_path / "imdb.npz"))


def test_bad_files_name_the_file(small_files, tmp_path):
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(b"not a tar")
    with pytest.raises(ValueError, match=f"{bad}: expected CIFAR's python tar.gz archive"):
        cifar10.load_data(str(bad))
    with pytest.raises(ValueError, match=f"{bad}: expected an .npz"):
        reuters.load_data(str(bad))
    empty = small_files / "cifar100" / "cifar-100-python.tar.gz"
    with tarfile.open(empty, "w:gz"):
        pass
    with pytest.raises(ValueError, match="expected a file 'cifar-100-python/train' in the archive"):
        cifar100.load_data()
    np.savez(tmp_path / "h.npz", features=np.zeros(3))
    with pytest.raises(ValueError, match=r"expected arrays 'x' and 'y', found \['features'\]"):
        boston_housing.load_data(str(tmp_path / "h.npz"))


def test_label_names():
    assert len(reuters.get_label_names()) == 46
    assert cifar10.CLASS_NAMES[9] == "truck"


REAL = {"cifar10": ((50000, 32, 32, 3), (10000, 1)), "cifar100": ((50000, 32, 32, 3), (10000, 1)),
        "imdb": ((25000,), (25000,)), "reuters": ((8982,), (2246,)), "boston_housing": ((404, 13), (102,)),
        "california_housing": ((16512, 8), (4128,))}


@pytest.mark.parametrize("dataset", list(REAL))
def test_real_file(dataset):
    """With the real file under $MINIKERAS_DATASETS (not on CI machines): its Keras hash, and shapes."""
    filename = WRITERS[dataset][0]
    path = Path(REAL_DATA or "/nonexistent") / dataset / filename
    if not path.is_file():
        pytest.skip(f"no real {filename} under $MINIKERAS_DATASETS/{dataset}/")
    assert dl.sha256sum(path) == _source.SHA256[dataset][filename]
    (x_train, _), (_, y_test) = MODULES[dataset].load_data(path=str(path))
    assert (x_train.shape, y_test.shape) == REAL[dataset]
