"""mk.utils.get_file against a local HTTP server on 127.0.0.1: cache, hash checks, extraction, offline error."""
import functools
import hashlib
import http.server
import io
import socket
import tarfile
import threading
import zipfile

import pytest

import minikeras as mk


@pytest.fixture
def server(tmp_path):
    """Serves ``tmp_path / 'www'``; yields ``(base_url, root, requested_paths)``."""
    root = tmp_path / "www"
    root.mkdir()
    requested = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            requested.append(self.path)
            super().do_GET()

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/", root, requested
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_downloads_once_then_uses_the_cache(server, tmp_path):
    base, root, requested = server
    (root / "data.csv").write_bytes(b"a,b\n1,2\n")
    sha = hashlib.sha256(b"a,b\n1,2\n").hexdigest()
    path = mk.utils.get_file(origin=base + "data.csv", file_hash=sha, cache_dir=tmp_path / "cache")
    assert path == str(tmp_path / "cache" / "datasets" / "data.csv")
    assert open(path, "rb").read() == b"a,b\n1,2\n"
    assert mk.utils.get_file("data.csv", base + "data.csv", file_hash=sha, cache_dir=tmp_path / "cache") == path
    assert requested == ["/data.csv"]
    # a cached file that does not match the hash is fetched again (md5 chosen by 'auto' for 32 digits)
    open(path, "wb").write(b"stale")
    md5 = hashlib.md5(b"a,b\n1,2\n").hexdigest()
    mk.utils.get_file("data.csv", base + "data.csv", md5_hash=md5, cache_dir=tmp_path / "cache")
    assert open(path, "rb").read() == b"a,b\n1,2\n" and len(requested) == 2
    mk.utils.get_file("data.csv", base + "data.csv", cache_dir=tmp_path / "cache", force_download=True)
    assert len(requested) == 3


def test_wrong_hash_leaves_nothing(server, tmp_path):
    base, root, _ = server
    (root / "x.bin").write_bytes(b"payload")
    with pytest.raises(ValueError, match="Incomplete or corrupted file detected. The sha256"):
        mk.utils.get_file(origin=base + "x.bin", file_hash="0" * 64, cache_dir=tmp_path)
    assert not (tmp_path / "datasets" / "x.bin").exists()
    assert [p.name for p in (tmp_path / "datasets").iterdir()] == []


def test_extracts_tar_and_zip(server, tmp_path):
    base, root, _ = server
    with tarfile.open(root / "flowers.tgz", "w:gz") as tar:
        info = tarfile.TarInfo("flowers/roses/a.txt")
        info.size = 4
        tar.addfile(info, io.BytesIO(b"rose"))
    with zipfile.ZipFile(root / "words.zip", "w") as z:
        z.writestr("words/x.txt", "hello")
    path = mk.utils.get_file("flowers.tgz", base + "flowers.tgz", extract=True, cache_dir=tmp_path)
    assert path == str(tmp_path / "datasets" / "flowers_extracted")
    assert open(f"{path}/flowers/roses/a.txt").read() == "rose"
    path = mk.utils.get_file(origin=base + "words.zip", extract=True, cache_dir=tmp_path)
    assert path == str(tmp_path / "datasets" / "words.zip")  # no fname: Keras's naming
    assert open(f"{path}/words/x.txt").read() == "hello"
    with zipfile.ZipFile(root / "evil.zip", "w") as z:
        z.writestr("../../evil.txt", "x")
    with pytest.raises(ValueError, match="outside"):
        mk.utils.get_file("evil.zip", base + "evil.zip", extract=True, cache_dir=tmp_path)
    assert not (tmp_path / "evil.txt").exists()


def test_offline_and_http_errors_are_clear(server, tmp_path):
    base, _, _ = server
    with pytest.raises(OSError, match=r"URL fetch failure on .*missing.bin: HTTP 404") as info:
        mk.utils.get_file(origin=base + "missing.bin", cache_dir=tmp_path)
    assert "copy it to" in str(info.value)
    with socket.socket() as s:  # a port nobody listens on: what an offline machine sees
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(OSError, match=r"URL fetch failure .*Connection refused.*download the file elsewhere"):
        mk.utils.get_file(origin=f"http://127.0.0.1:{port}/data.bin", cache_dir=tmp_path)
    assert not (tmp_path / "datasets" / "data.bin").exists()
    with pytest.raises(ValueError, match="Paths are no longer accepted"):
        mk.utils.get_file("a/b.txt", base + "b.txt", cache_dir=tmp_path)
    with pytest.raises(ValueError, match='specify the "origin"'):
        mk.utils.get_file("b.txt")
