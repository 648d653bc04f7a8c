"""Dataset look-up and download errors that name the right file and the mirror being tried; the
temp file of a killed download."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from datasets_reference import isolated, write_dataset  # noqa: F401 (isolated: autouse, no public mirrors or cache)

from minikeras.datasets import _source, download as dl, mnist
from minikeras.saving import TEMP_MARK


def test_env_folder_missing_only_train_labels_names_that_file(tmp_path, monkeypatch):
    folder = write_dataset(tmp_path / "data" / "mnist", 1)
    (folder / _source.TRAIN_LABELS).unlink()
    monkeypatch.setenv("MINIKERAS_DATASETS", str(tmp_path / "data"))
    with pytest.raises(dl.DownloadError) as info:
        mnist.load_data()
    message = str(info.value)
    assert f"$MINIKERAS_DATASETS/mnist ({folder}) lacks {_source.TRAIN_LABELS};" in message
    assert f"lacks {_source.TRAIN_IMAGES};" not in message.split("the cache")[0]


@pytest.fixture()
def silent_server():
    """Accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    accepted = []
    stop = threading.Event()

    def accept():
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(sock.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    sock.close()


def test_silent_mirror_times_out_and_is_named(silent_server, tmp_path, capsys):
    start = time.monotonic()
    with pytest.raises(dl.DownloadError, match=r"127\.0\.0\.1.*timed out"):
        dl.download("f.gz", [silent_server], "0" * 64, tmp_path / "d", timeout=0.5, progress=True)
    assert time.monotonic() - start < 5
    err = capsys.readouterr().err
    assert f"Downloading f.gz from {silent_server}f.gz" in err
    assert "connecting" in err  # the progress bar was drawn (and redrawn) while waiting


def test_default_timeout_is_short():
    import inspect
    assert inspect.signature(dl.download).parameters["timeout"].default <= 15


def test_part_file_of_a_killed_download_is_removed_by_the_next(tmp_path):
    script = ("import time, urllib.request\n"
              "from minikeras.datasets import download as dl\n"
              "class Slow:\n"
              "    headers = {}\n"
              "    def __enter__(self): return self\n"
              "    def __exit__(self, *a): return False\n"
              "    def read(self, n):\n"
              "        print('reading', flush=True); time.sleep(60)\n"
              "urllib.request.urlopen = lambda url, timeout: Slow()\n"
              f"dl.download('f.gz', ['http://127.0.0.1:9/'], '0' * 64, {str(tmp_path / 'd')!r}, progress=False)\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env={**os.environ, "PYTHONPATH": root})
    assert proc.stdout.readline().strip() == "reading"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    (part,) = os.listdir(tmp_path / "d")
    assert part.startswith(f".f.gz.{proc.pid}.") and part.endswith(TEMP_MARK)
    with pytest.raises(dl.DownloadError):
        dl.download("g.gz", [], "0" * 64, tmp_path / "d")
    assert os.listdir(tmp_path / "d") == []
