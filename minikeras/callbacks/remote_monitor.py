"""``RemoteMonitor``: each epoch's logs posted to a server over HTTP."""
import json
import urllib.error
import urllib.parse
import urllib.request
import warnings

import numpy as np

from minikeras.callbacks.callback import Callback


class RemoteMonitor(Callback):
    """Posts ``{"epoch": epoch, **logs}`` to ``root + path`` at the end of each epoch, as Keras 3's:
    as a form field ``field`` holding the JSON text, or with ``send_as_json`` as a JSON body. A
    server that cannot be reached gives a warning, not an error. (Sent with the standard
    library's ``urllib``; Keras uses ``requests``.)

    Args:
      root: the server's root URL ("http://localhost:9000").
      path: the path the logs are posted to ("/publish/epoch/end/").
      field: the form field that holds the JSON ("data").
      headers: extra HTTP headers (a dict).
      send_as_json: post the logs as an ``application/json`` body.
    """

    def __init__(self, root="http://localhost:9000", path="/publish/epoch/end/", field="data", headers=None,
                 send_as_json=False):
        super().__init__()
        self.root = root
        self.path = path
        self.field = field
        self.headers = headers
        self.send_as_json = send_as_json

    def on_epoch_end(self, epoch, logs=None):
        send = {"epoch": epoch}
        for key, value in (logs or {}).items():
            send[key] = value.item() if isinstance(value, (np.ndarray, np.generic)) else value
        headers = dict(self.headers or {})
        if self.send_as_json:
            body = json.dumps(send).encode()
            headers.setdefault("Content-Type", "application/json")
        else:
            body = urllib.parse.urlencode({self.field: json.dumps(send)}).encode()
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        request = urllib.request.Request(self.root + self.path, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                response.read()
        except (urllib.error.URLError, OSError, ValueError):
            warnings.warn(f"Could not reach RemoteMonitor root server at {self.root}", stacklevel=2)
