"""What the dataset tests share: tiny IDX files written like MNIST's, ``isolated`` (an autouse
fixture for the modules that import it: no public mirrors, no user cache, no inherited env) and
``server`` (a local HTTP server of a folder)."""
from __future__ import annotations

import functools
import gzip
import http.server
import struct
import threading
from pathlib import Path

import numpy as np
import pytest

from minikeras.datasets import _source, idx


def idx_bytes(magic: int, dims: tuple[int, ...], payload: bytes) -> bytes:
    return struct.pack(f">{1 + len(dims)}I", magic, *dims) + payload


def write_gz(path: Path, raw: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wb") as f:
        f.write(raw)
    return path


def write_images(path: Path, x: np.ndarray) -> Path:
    return write_gz(path, idx_bytes(idx.IMAGES_MAGIC, x.shape, x.astype(np.uint8).tobytes()))


def write_labels(path: Path, y: np.ndarray) -> Path:
    return write_gz(path, idx_bytes(idx.LABELS_MAGIC, y.shape, y.astype(np.uint8).tobytes()))


def write_dataset(folder: Path, marker: int, n_train: int = 3, n_test: int = 2) -> Path:
    """Write four tiny 28x28 IDX files; every label equals ``marker``."""
    rng = np.random.default_rng(marker)
    for images, labels, n in [
        (_source.TRAIN_IMAGES, _source.TRAIN_LABELS, n_train),
        (_source.TEST_IMAGES, _source.TEST_LABELS, n_test),
    ]:
        write_images(folder / images, rng.integers(0, 256, (n, 28, 28)))
        write_labels(folder / labels, np.full(n, marker))
    return folder


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """No public mirrors, no user cache, no inherited env for every test."""
    monkeypatch.setattr(_source, "MIRRORS", dict.fromkeys(_source.MIRRORS, ()))
    monkeypatch.setenv("MINIKERAS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MINIKERAS_DATASETS", raising=False)
    monkeypatch.delenv("MINIKERAS_MIRRORS", raising=False)


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output quiet
        pass


@pytest.fixture(name="server")
def local_server(tmp_path):
    """Serve ``tmp_path / 'www'`` on 127.0.0.1; yields ``(base_url, root, requested_paths)``."""
    root = tmp_path / "www"
    root.mkdir()
    requested = []

    class Handler(_Handler):
        def do_GET(self):
            requested.append(self.path)
            super().do_GET()

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(root))
    )
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/", root, requested
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
