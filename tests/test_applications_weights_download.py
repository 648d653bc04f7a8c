"""``weights="imagenet"`` end to end against a server on 127.0.0.1 that mirrors Keras's published
layout (``MINIKERAS_WEIGHTS_MIRROR``): the download into the cache and the load, the cache on the
next call, a file whose hash differs from Keras's refused with nothing left behind, transfers cut
short resumed or restarted (never a half file loaded), and ``weights="path.h5"``.

The served weight file is MobileNetV2's (alpha 0.35, no top: 1.7 MB; Keras publishes it without a
hash, so only the transfer's own checks stand between a cut transfer and a half file) in the
layout of Keras's published files (Keras 2's HDF5 weights: ``layer_names``, then per layer
``weight_names`` and the arrays), written here from a model with random weights.
"""
import hashlib
import http.server
import threading
import warnings

import h5py
import numpy as np
import pytest

from minikeras import applications
from minikeras.applications import weights_mirror
from minikeras.utils.file_utils import get_file

MOBILENET_PATH = "/tensorflow/keras-applications/mobilenet_v2/"
MOBILENET_FILE = "mobilenet_v2_weights_tf_dim_ordering_tf_kernels_0.35_96_no_top.h5"
VGG16_NOTOP = "/tensorflow/keras-applications/vgg16/vgg16_weights_tf_dim_ordering_tf_kernels_notop.h5"


class MirrorServer:
    """Serves ``files`` (URL path -> bytes). The next ``cuts[path]`` answers for a path announce
    the whole Content-Length but stop after half the bytes and close; Range requests get a 206
    from ``bytes=N-`` when ``ranges`` is True and the whole file otherwise. ``requests`` lists
    (path, Range header or None) in order."""

    def __init__(self):
        self.files, self.cuts, self.ranges, self.requests = {}, {}, True, []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                server.requests.append((self.path, self.headers.get("Range")))
                data = server.files.get(self.path)
                if data is None:
                    self.send_error(404)
                    return
                start = 0
                if self.headers.get("Range") and server.ranges:
                    start = int(self.headers["Range"].removeprefix("bytes=").split("-")[0])
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                body = data[start:]
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if server.cuts.get(self.path, 0) > 0:
                    server.cuts[self.path] -= 1
                    body = body[:len(body) // 2]
                self.wfile.write(body)  # HTTP/1.0: the connection closes after this answer

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


def write_keras_weights_file(model, path):
    """``model``'s weights in the layout of Keras's published files (Keras 2's ``save_weights``)."""
    with h5py.File(path, "w") as f:
        f.attrs["layer_names"] = [layer.name.encode("utf8") for layer in model.layers]
        f.attrs["backend"] = b"tensorflow"
        f.attrs["keras_version"] = b"2.2.4"
        for layer in model.layers:
            group = f.create_group(layer.name)
            names = [f"{layer.name}/{w.name}:0" for w in layer.weights]
            group.attrs["weight_names"] = [name.encode("utf8") for name in names]
            for name, weight in zip(names, layer.weights):
                group.create_dataset(name, data=np.asarray(weight.numpy()))


def mobilenet(weights):
    return applications.MobileNetV2(input_shape=(96, 96, 3), alpha=0.35, include_top=False, weights=weights)


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """(a MobileNetV2 with random weights, its weights file's bytes, a batch, the model's outputs)."""
    source = mobilenet(None)
    for variable in source.non_trainable_weights:  # moving statistics that differ from the initial ones
        variable.assign(np.random.default_rng(1).uniform(0.5, 1.5, variable.shape).astype("float32"))
    path = tmp_path_factory.mktemp("published") / MOBILENET_FILE
    write_keras_weights_file(source, path)
    images = np.random.default_rng(0).uniform(-1, 1, (2, 96, 96, 3)).astype("float32")
    return source, path.read_bytes(), images, np.asarray(source.predict(images, verbose=0))


@pytest.fixture
def mirror(monkeypatch, minikeras_home):
    server = MirrorServer()
    monkeypatch.setenv("MINIKERAS_WEIGHTS_MIRROR", server.base + "/")
    yield server
    server.close()


def cached(tmp_path):
    return sorted(p.name for p in (tmp_path / "home" / "models").iterdir())


def assert_loaded(model, published):
    """Every weight of ``model`` is the published file's (the same architecture: the same outputs)."""
    source = published[0]
    assert len(model.weights) == len(source.weights) == 260  # 52 convolutions, 52 BatchNormalizations
    for mine, theirs in zip(model.weights, source.weights):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy(), err_msg=mine.path)


def serve_mobilenet(mirror, published):
    mirror.files[MOBILENET_PATH + MOBILENET_FILE] = published[1]


def test_imagenet_weights_download_into_the_cache_then_come_from_it(mirror, tmp_path, published):
    serve_mobilenet(mirror, published)
    model = mobilenet("imagenet")
    assert mirror.requests == [(MOBILENET_PATH + MOBILENET_FILE, None)]
    assert cached(tmp_path) == [MOBILENET_FILE]
    assert (tmp_path / "home" / "models" / MOBILENET_FILE).read_bytes() == published[1]
    assert_loaded(model, published)
    _, _, images, expected = published
    np.testing.assert_allclose(np.asarray(model.predict(images, verbose=0)), expected, rtol=1e-6, atol=1e-6)
    assert_loaded(mobilenet("imagenet"), published)
    assert len(mirror.requests) == 1  # the second model read the cache


def test_a_file_with_another_hash_than_keras_is_refused_and_not_kept(mirror, tmp_path):
    mirror.files[VGG16_NOTOP] = b"not the published VGG16 weights"
    with pytest.raises(ValueError, match="Incomplete or corrupted file detected. The md5 file hash does not match"):
        applications.VGG16(weights="imagenet", include_top=False, input_shape=(32, 32, 3))
    assert mirror.requests == [(VGG16_NOTOP, None)]
    assert cached(tmp_path) == []  # neither the file nor a partial one


@pytest.mark.parametrize("ranges", [True, False], ids=["resumed", "restarted"])
def test_a_transfer_cut_short_is_resumed_or_restarted(mirror, tmp_path, published, ranges):
    serve_mobilenet(mirror, published)
    mirror.ranges = ranges
    mirror.cuts[MOBILENET_PATH + MOBILENET_FILE] = 2
    model = mobilenet("imagenet")
    size = len(published[1])
    first = size // 2  # what the first answer delivered
    if ranges:  # each retry asks for the rest: the second answer is cut too, the third completes it
        assert [r for _, r in mirror.requests] == [None, f"bytes={first}-", f"bytes={first + (size - first) // 2}-"]
    else:  # the server answers Range with the whole file: each retry starts over, the third is whole
        assert [r for _, r in mirror.requests] == [None, f"bytes={first}-", f"bytes={first}-"]
    assert cached(tmp_path) == [MOBILENET_FILE]
    assert (tmp_path / "home" / "models" / MOBILENET_FILE).read_bytes() == published[1]
    assert_loaded(model, published)


def test_a_transfer_always_cut_short_fails_and_leaves_nothing(mirror, tmp_path, published):
    serve_mobilenet(mirror, published)
    mirror.cuts[MOBILENET_PATH + MOBILENET_FILE] = 100
    with pytest.raises(OSError, match=r"URL fetch failure on .*mobilenet_v2.*IncompleteDownload: the server closed "
                                      r"the transfer after \d+ of \d+ bytes, 4 times"):
        mobilenet("imagenet")
    assert len(mirror.requests) == 4
    assert cached(tmp_path) == []


def test_weights_from_a_local_file(tmp_path, published):
    path = tmp_path / "mobilenet.h5"
    path.write_bytes(published[1])
    assert_loaded(mobilenet(str(path)), published)
    with pytest.raises(ValueError, match="should be either `None`.*Received: weights=.*missing.h5"):
        mobilenet(str(tmp_path / "missing.h5"))


def test_the_mirror_variable_maps_keras_urls_and_is_checked(monkeypatch):
    url = "https://storage.googleapis.com/tensorflow/keras-applications/resnet/resnet50_weights.h5"
    monkeypatch.delenv("MINIKERAS_WEIGHTS_MIRROR", raising=False)
    assert weights_mirror.resolve(url) == url
    monkeypatch.setenv("MINIKERAS_WEIGHTS_MIRROR", "file:///data/mirror/")
    assert weights_mirror.resolve(url) == "file:///data/mirror/tensorflow/keras-applications/resnet/resnet50_weights.h5"
    assert weights_mirror.resolve("https://example.com/x.h5") == "https://example.com/x.h5"
    monkeypatch.setenv("MINIKERAS_WEIGHTS_MIRROR", "/data/mirror")
    with pytest.raises(ValueError, match=r"MINIKERAS_WEIGHTS_MIRROR should be a base URL starting with http://.*"
                                         r"Received: MINIKERAS_WEIGHTS_MIRROR='/data/mirror'"):
        weights_mirror.resolve(url)


def test_a_mirror_folder_on_disk_serves_file_urls(monkeypatch, tmp_path, minikeras_home, published):
    folder = tmp_path / "mirror" / MOBILENET_PATH.strip("/")
    folder.mkdir(parents=True)
    (folder / MOBILENET_FILE).write_bytes(published[1])
    monkeypatch.setenv("MINIKERAS_WEIGHTS_MIRROR", (tmp_path / "mirror").as_uri())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning on the way
        assert_loaded(mobilenet("imagenet"), published)
    assert cached(tmp_path) == [MOBILENET_FILE]


def test_get_file_resumes_a_cut_transfer_of_a_hashed_file(tmp_path):
    server = MirrorServer()
    try:
        data = bytes(range(256)) * 40
        server.files["/data.bin"] = data
        server.cuts["/data.bin"] = 1
        path = get_file("data.bin", server.base + "/data.bin", file_hash=hashlib.sha256(data).hexdigest(),
                        cache_dir=tmp_path)
        assert open(path, "rb").read() == data
        assert [r for _, r in server.requests] == [None, f"bytes={len(data) // 2}-"]
    finally:
        server.close()
