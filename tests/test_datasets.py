"""Tests for minikeras.datasets: IDX parser, downloader, look-up order, real data.

Network use is limited to a local HTTP server on 127.0.0.1; the public
mirrors are replaced by an empty list for every test.
"""

from __future__ import annotations

import hashlib
import os
import struct
from pathlib import Path

import numpy as np
import pytest
from datasets_reference import (  # noqa: F401 (isolated: autouse, no public mirrors or cache; the server fixture)
    idx_bytes,
    isolated,
    local_server,
    write_dataset,
    write_gz,
    write_images,
    write_labels,
)

from minikeras.datasets import _source, download as dl, fashion_mnist, idx, mnist

REAL_DATA = os.environ.get("MINIKERAS_DATASETS")
PUBLIC_MIRRORS = dict(_source.MIRRORS)  # before `isolated` empties it


# --- helpers ---------------------------------------------------------------


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- (a) IDX parser ----------------------------------------------------------


def test_idx_round_trip(tmp_path):
    x = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    y = np.array([7, 1], dtype=np.uint8)
    xi, yi = idx.read_pair(write_images(tmp_path / "i.gz", x), write_labels(tmp_path / "l.gz", y))
    assert xi.dtype == np.uint8 and yi.dtype == np.uint8
    np.testing.assert_array_equal(xi, x)
    np.testing.assert_array_equal(yi, y)


def test_idx_empty_file_is_fine(tmp_path):
    x = idx.read_images(write_gz(tmp_path / "i.gz", idx_bytes(2051, (0, 28, 28), b"")))
    assert x.shape == (0, 28, 28)


@pytest.mark.parametrize(
    "reader, raw, match",
    [
        (idx.read_images, idx_bytes(2049, (2,), b"\0\0"), "expected IDX magic 2051.*found 2049"),
        (idx.read_labels, idx_bytes(2051, (1, 1, 1), b"\0"), "expected IDX magic 2049.*found 2051"),
        (idx.read_labels, b"\xde\xad\xbe\xef\0\0\0\1\0", "expected IDX magic 2049.*found 3735928559"),
        (idx.read_images, idx_bytes(2051, (2, 2, 2), b"\0" * 7), "truncated payload.*8 bytes.*found 7"),
        (idx.read_labels, idx_bytes(2049, (1000,), b"\1" * 10), "truncated payload.*1000 bytes.*found 10"),
        (idx.read_labels, idx_bytes(2049, (2,), b"\1" * 3), "trailing data"),
        (idx.read_images, struct.pack(">3I", 2051, 5, 28), "truncated IDX header.*16 bytes.*found 12"),
        (idx.read_labels, b"\0\0", "truncated IDX header.*8 bytes.*found 2"),
        # A count far beyond what the compressed file could hold (no huge allocation).
        (idx.read_images, idx_bytes(2051, (2**31, 28, 28), b"\0" * 10), "truncated or corrupt"),
    ],
)
def test_idx_rejects_bad_files(tmp_path, reader, raw, match):
    path = write_gz(tmp_path / "bad-idx.gz", raw)
    with pytest.raises(ValueError, match=match) as info:
        reader(path)
    assert str(path) in str(info.value)


def test_idx_rejects_non_gzip(tmp_path):
    path = tmp_path / "plain-idx"
    path.write_bytes(idx_bytes(2049, (1,), b"\0"))
    with pytest.raises(ValueError, match="expected a gzip-compressed IDX file") as info:
        idx.read_labels(path)
    assert str(path) in str(info.value)


def test_idx_rejects_truncated_gzip_stream(tmp_path):
    path = write_labels(tmp_path / "l.gz", np.arange(5000) % 10)
    path.write_bytes(path.read_bytes()[:-30])
    with pytest.raises(ValueError) as info:
        idx.read_labels(path)
    assert str(path) in str(info.value)


def test_idx_pair_count_mismatch(tmp_path):
    images = write_images(tmp_path / "i.gz", np.zeros((3, 2, 2)))
    labels = write_labels(tmp_path / "l.gz", np.zeros(2))
    with pytest.raises(ValueError, match="3 images.*2 labels") as info:
        idx.read_pair(images, labels)
    assert str(images) in str(info.value) and str(labels) in str(info.value)


# --- (b) downloader ----------------------------------------------------------


def test_download_success(server, tmp_path):
    base, root, _ = server
    src = write_labels(root / "labels.gz", np.arange(10))
    dest = tmp_path / "dest"
    got = dl.download("labels.gz", [base], sha(src), dest)
    assert got == dest / "labels.gz"
    assert got.read_bytes() == src.read_bytes()
    assert os.listdir(dest) == ["labels.gz"]


def test_download_falls_back_after_404(server, tmp_path):
    base, root, requested = server
    write_labels(root / "good" / "labels.gz", np.arange(10))
    mirrors = [base + "missing", base + "good/"]
    got = dl.download("labels.gz", mirrors, sha(root / "good" / "labels.gz"), tmp_path / "d")
    assert got.read_bytes() == (root / "good" / "labels.gz").read_bytes()
    assert requested == ["/missing/labels.gz", "/good/labels.gz"]


def test_download_rejects_checksum_mismatch_and_leaves_nothing(server, tmp_path):
    base, root, _ = server
    write_labels(root / "labels.gz", np.arange(10))
    dest = tmp_path / "dest"
    with pytest.raises(dl.DownloadError, match="sha256 mismatch: expected 0{64}") as info:
        dl.download("labels.gz", [base], "0" * 64, dest)
    assert os.listdir(dest) == []
    assert [url for url, _ in info.value.failures] == [base + "labels.gz"]


def test_download_error_lists_every_mirror(server, tmp_path):
    base, root, _ = server
    write_labels(root / "bad" / "labels.gz", np.arange(3))
    mirrors = [base + "nope/", base + "bad/", "ftp://example.invalid/"]
    with pytest.raises(dl.DownloadError) as info:
        dl.download("labels.gz", mirrors, "0" * 64, tmp_path / "dest")
    message = str(info.value)
    assert f"{base}nope/labels.gz: HTTP 404" in message
    assert f"{base}bad/labels.gz: ChecksumError: sha256 mismatch" in message
    assert "ftp://example.invalid/labels.gz: ValueError: unsupported URL scheme 'ftp'" in message
    assert os.listdir(tmp_path / "dest") == []


def test_download_file_url(tmp_path):
    src = write_labels(tmp_path / "mirror" / "labels.gz", np.arange(4))
    missing = (tmp_path / "empty").as_uri()
    got = dl.download("labels.gz", [missing, (tmp_path / "mirror").as_uri()], sha(src), tmp_path / "d")
    assert got.read_bytes() == src.read_bytes()


def test_download_keeps_old_file_when_all_fail(server, tmp_path):
    base, root, _ = server
    write_labels(root / "labels.gz", np.arange(3))
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "labels.gz").write_bytes(b"old")
    with pytest.raises(dl.DownloadError):
        dl.download("labels.gz", [base], "0" * 64, dest)
    assert os.listdir(dest) == ["labels.gz"]
    assert (dest / "labels.gz").read_bytes() == b"old"


def test_download_interrupt_leaves_no_temp_file(tmp_path, monkeypatch):
    class Response:
        headers = {"Content-Length": "100"}

        def __init__(self):
            self.calls = 0

        def read(self, n):
            self.calls += 1
            if self.calls > 1:
                raise KeyboardInterrupt
            return b"x" * 50

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(dl.urllib.request, "urlopen", lambda url, timeout: Response())
    dest = tmp_path / "dest"
    with pytest.raises(KeyboardInterrupt):
        dl.download("f.gz", ["http://127.0.0.1:9/"], "0" * 64, dest)
    assert os.listdir(dest) == []


# --- (c) look-up order -------------------------------------------------------


def labels_of(data) -> int:
    (_, y_train), (_, y_test) = data
    assert set(y_train) == set(y_test)
    (marker,) = set(y_train)
    return int(marker)


def test_load_data_shapes_and_dtypes(tmp_path):
    (x, y), (xt, yt) = mnist.load_data(write_dataset(tmp_path / "d", 3, n_train=5, n_test=4))
    assert (x.shape, y.shape, xt.shape, yt.shape) == ((5, 28, 28), (5,), (4, 28, 28), (4,))
    assert {a.dtype for a in (x, y, xt, yt)} == {np.dtype(np.uint8)}


def test_lookup_order(tmp_path, monkeypatch):
    explicit = write_dataset(tmp_path / "explicit", 1)
    write_dataset(tmp_path / "env" / "mnist", 2)
    write_dataset(tmp_path / "home" / "datasets" / "mnist", 3)
    monkeypatch.setenv("MINIKERAS_DATASETS", str(tmp_path / "env"))

    assert labels_of(mnist.load_data(explicit)) == 1
    assert labels_of(mnist.load_data(str(explicit))) == 1
    assert labels_of(mnist.load_data()) == 2
    monkeypatch.setenv("MINIKERAS_DATASETS", str(tmp_path / "elsewhere"))
    assert labels_of(mnist.load_data()) == 3
    monkeypatch.delenv("MINIKERAS_DATASETS")
    assert labels_of(mnist.load_data()) == 3


def test_lookup_uses_dataset_name(tmp_path, monkeypatch):
    write_dataset(tmp_path / "env" / "mnist", 4)
    write_dataset(tmp_path / "env" / "fashion_mnist", 5)
    monkeypatch.setenv("MINIKERAS_DATASETS", str(tmp_path / "env"))
    assert labels_of(mnist.load_data()) == 4
    assert labels_of(fashion_mnist.load_data()) == 5


def test_incomplete_env_folder_falls_through_to_cache(tmp_path, monkeypatch):
    env = write_dataset(tmp_path / "env" / "mnist", 6)
    (env / _source.TEST_LABELS).unlink()
    write_dataset(tmp_path / "home" / "datasets" / "mnist", 7)
    monkeypatch.setenv("MINIKERAS_DATASETS", str(tmp_path / "env"))
    assert labels_of(mnist.load_data()) == 7


def test_explicit_path_must_hold_the_files(tmp_path):
    folder = write_dataset(tmp_path / "d", 1)
    (folder / _source.TRAIN_IMAGES).unlink()
    write_dataset(tmp_path / "home" / "datasets" / "mnist", 3)
    with pytest.raises(FileNotFoundError, match=f"lacks {_source.TRAIN_IMAGES}"):
        mnist.load_data(folder)
    with pytest.raises(FileNotFoundError, match="is not a directory"):
        mnist.load_data(tmp_path / "nowhere")


def test_corrupt_local_file_names_the_file(tmp_path):
    folder = write_dataset(tmp_path / "d", 1)
    write_labels(folder / _source.TEST_LABELS, np.zeros(5))  # test images hold 2
    with pytest.raises(ValueError, match="2 images.*5 labels"):
        mnist.load_data(folder)
    write_labels(folder / _source.TEST_LABELS, np.array([0, 10]))
    with pytest.raises(ValueError, match=f"{_source.TEST_LABELS}: expected labels in 0..9, found 10"):
        mnist.load_data(folder)
    write_images(folder / _source.TEST_IMAGES, np.zeros((2, 28, 27)))
    with pytest.raises(ValueError, match=r"expected images of \(28, 28\), found \(28, 27\)"):
        mnist.load_data(folder)


@pytest.fixture
def served_dataset(server, monkeypatch):
    """Put a tiny fashion_mnist on the local server and make its hashes the expected ones."""
    base, root, requested = server
    folder = write_dataset(root / "fashion_mnist", 8)
    monkeypatch.setitem(_source.SHA256, "fashion_mnist", {f: sha(folder / f) for f in _source.FILES})
    return base, folder, requested


def test_download_into_cache_then_reuse(served_dataset, tmp_path, monkeypatch):
    base, served, requested = served_dataset
    monkeypatch.setenv("MINIKERAS_MIRRORS", f"{base}missing/, {base}{{name}}/")
    assert labels_of(fashion_mnist.load_data()) == 8
    cache = tmp_path / "home" / "datasets" / "fashion_mnist"
    assert sorted(os.listdir(cache)) == sorted(_source.FILES)
    for f in _source.FILES:
        assert (cache / f).read_bytes() == (served / f).read_bytes()
    assert sorted(p for p in requested if p.startswith("/fashion_mnist/")) == sorted(
        f"/fashion_mnist/{f}" for f in _source.FILES
    )

    requested.clear()
    assert labels_of(fashion_mnist.load_data()) == 8
    assert requested == []  # second load comes from the cache


def test_download_only_missing_files(served_dataset, tmp_path):
    base, served, requested = served_dataset
    cache = tmp_path / "home" / "datasets" / "fashion_mnist"
    cache.mkdir(parents=True)
    for f in (_source.TRAIN_IMAGES, _source.TRAIN_LABELS):
        (cache / f).write_bytes((served / f).read_bytes())
    assert labels_of(fashion_mnist.load_data(mirrors=[base + "{name}"])) == 8
    missing = (_source.TEST_IMAGES, _source.TEST_LABELS)
    assert sorted(requested) == sorted(f"/fashion_mnist/{f}" for f in missing)


def test_download_with_wrong_checksum_leaves_cache_empty(served_dataset, tmp_path, monkeypatch):
    base, _, _ = served_dataset
    monkeypatch.setitem(_source.SHA256, "fashion_mnist", dict.fromkeys(_source.FILES, "0" * 64))
    with pytest.raises(dl.DownloadError, match="sha256 mismatch") as info:
        fashion_mnist.load_data(mirrors=[base + "{name}/"])
    assert "Offline?" in str(info.value)
    cache = tmp_path / "home" / "datasets" / "fashion_mnist"
    assert os.listdir(cache) == []


def test_no_mirrors_is_a_clear_error(tmp_path):
    with pytest.raises(dl.DownloadError, match="no mirrors given"):
        mnist.load_data()


def test_mirror_list_sources(monkeypatch):
    assert PUBLIC_MIRRORS["mnist"][0] == "https://ossci-datasets.s3.amazonaws.com/mnist/"
    assert len(PUBLIC_MIRRORS["fashion_mnist"]) == 2
    monkeypatch.setattr(_source, "MIRRORS", PUBLIC_MIRRORS)
    assert _source.mirror_list("mnist") == list(PUBLIC_MIRRORS["mnist"])
    monkeypatch.setenv("MINIKERAS_MIRRORS", "file:///a/{name}/ ,http://b/{name}")
    assert _source.mirror_list("mnist") == ["file:///a/mnist/", "http://b/mnist"]
    assert _source.mirror_list("mnist", ["x/{name}"]) == ["x/mnist"]


# --- (d) the real files --------------------------------------------------------

needs_real_data = pytest.mark.skipif(
    not REAL_DATA, reason="MINIKERAS_DATASETS is not set; real MNIST files unavailable"
)


@needs_real_data
@pytest.mark.parametrize("module", [mnist, fashion_mnist], ids=["mnist", "fashion_mnist"])
def test_real_data(module):
    name = module.__name__.rsplit(".", 1)[-1]
    # An explicit path: a missing folder fails instead of downloading.
    (x, y), (xt, yt) = module.load_data(os.path.join(REAL_DATA, name))
    shapes = (x.shape, y.shape, xt.shape, yt.shape)
    assert shapes == ((60000, 28, 28), (60000,), (10000, 28, 28), (10000,))
    assert {a.dtype for a in (x, y, xt, yt)} == {np.dtype(np.uint8)}
    assert set(np.unique(y)) == set(range(10)) == set(np.unique(yt))
    assert x.max() == 255 and x.min() == 0
    if module is mnist:
        assert y[:10].tolist() == [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]
        assert yt[:10].tolist() == [7, 2, 1, 0, 4, 1, 4, 9, 5, 9]
    else:
        assert y[:10].tolist() == [9, 0, 0, 3, 0, 2, 7, 2, 5, 5]
        assert fashion_mnist.CLASS_NAMES[y[0]] == "Ankle boot"


@needs_real_data
def test_real_checksums_match_table():
    for name in ("mnist", "fashion_mnist"):  # the single-file datasets: test_datasets_keras_files.py
        for filename, digest in _source.SHA256[name].items():
            assert dl.sha256sum(os.path.join(REAL_DATA, name, filename)) == digest, (name, filename)
