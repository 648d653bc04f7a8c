"""``SwapEMAWeights`` (evaluation on the optimizer's moving averages, as Keras 3) and
``RemoteMonitor`` (each epoch's logs posted to a local HTTP server, form or JSON)."""
import http.server
import json
import threading
import urllib.parse

import numpy as np
import pytest

import minikeras as mk

X = np.random.default_rng(0).normal(size=(16, 3)).astype("float32")
Y = X.sum(-1, keepdims=True).astype("float32")


def ema_model():
    mk.utils.set_random_seed(0)
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    model.compile(optimizer=mk.optimizers.SGD(0.1, use_ema=True, ema_momentum=0.5), loss="mse")
    return model


def test_validation_runs_on_the_moving_averages_and_the_weights_come_back():
    model = ema_model()
    swapped = model.fit(X, Y, batch_size=8, epochs=1, verbose=0, validation_data=(X, Y),
                        callbacks=[mk.callbacks.SwapEMAWeights()]).history["val_loss"][0]
    # fit ended by copying the averages into the model (finalize_variable_values), so the model now
    # holds the weights validation ran on
    assert swapped == pytest.approx(model.evaluate(X, Y, verbose=0), rel=1e-6)
    plain = ema_model()
    raw = plain.fit(X, Y, batch_size=8, epochs=1, verbose=0, validation_data=(X, Y)).history["val_loss"][0]
    assert raw != pytest.approx(swapped, rel=1e-3)  # without the callback validation saw the raw weights
    averages = [a.numpy() for _, a in plain.optimizer.moving_averages()]
    np.testing.assert_allclose(plain.layers[0].kernel.numpy(), averages[0], rtol=1e-6)  # finalize, as Keras


def test_swap_on_epoch_keeps_the_averages_between_epochs_and_at_the_end():
    model = ema_model()
    seen = []
    record = mk.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append(
        (model.layers[0].kernel.numpy().copy(), [a.numpy().copy() for _, a in model.optimizer.moving_averages()])))
    model.fit(X, Y, batch_size=8, epochs=2, verbose=0, callbacks=[mk.callbacks.SwapEMAWeights(swap_on_epoch=True),
                                                                   record])
    kernel, averages = seen[0]
    assert not np.allclose(kernel, averages[0])  # the model holds the averages, the optimizer the raw weights
    final = [a.numpy() for _, a in model.optimizer.moving_averages()]
    np.testing.assert_allclose(model.layers[0].kernel.numpy(), final[0], rtol=1e-6)


def test_swap_ema_weights_needs_use_ema():
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="`use_ema=True` is set on the optimizer"):
        model.fit(X, Y, epochs=1, verbose=0, validation_data=(X, Y), callbacks=[mk.callbacks.SwapEMAWeights()])


class _Collector(http.server.BaseHTTPRequestHandler):
    received = []

    def do_POST(self):  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        self.received.append((self.path, self.headers["Content-Type"], self.headers.get("X-Token"), body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture()
def server():
    _Collector.received = []
    httpd = http.server.HTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_remote_monitor_posts_each_epoch_as_a_form_field_or_json(server):
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(X, Y, epochs=2, verbose=0, callbacks=[mk.callbacks.RemoteMonitor(root=server)])
    assert [r[0] for r in _Collector.received] == ["/publish/epoch/end/"] * 2
    form = urllib.parse.parse_qs(_Collector.received[1][3])
    sent = json.loads(form["data"][0])
    assert sent["epoch"] == 1 and isinstance(sent["loss"], float)
    _Collector.received.clear()
    model.fit(X, Y, epochs=1, verbose=0, callbacks=[mk.callbacks.RemoteMonitor(
        root=server, path="/logs", send_as_json=True, headers={"X-Token": "t"})])
    path, content_type, token, body = _Collector.received[0]
    assert (path, content_type, token) == ("/logs", "application/json", "t") and json.loads(body)["epoch"] == 0


def test_remote_monitor_warns_when_the_server_is_away():
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    with pytest.warns(UserWarning, match="Could not reach RemoteMonitor root server at http://127.0.0.1:9"):
        model.fit(X, Y, epochs=1, verbose=0, callbacks=[mk.callbacks.RemoteMonitor(root="http://127.0.0.1:9")])
