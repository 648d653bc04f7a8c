"""Where ``weights="imagenet"`` and ``decode_predictions`` fetch Keras's files from.

By default, Keras's own URLs on ``https://storage.googleapis.com/``. The environment variable
``MINIKERAS_WEIGHTS_MIRROR`` names a mirror of those paths instead (an ``http://``,
``https://`` or ``file://`` base URL): the part of a Keras URL after the host is appended to it,
so a mirror keeps Keras's published layout::

    MINIKERAS_WEIGHTS_MIRROR=file:///data/keras-mirror
    # MobileNetV2's file is then read from
    # /data/keras-mirror/tensorflow/keras-applications/mobilenet_v2/mobilenet_v2_weights_tf_...h5

Keras has no such setting (its files come from Google's storage, or from the cache). The file
still lands in the cache (``$MINIKERAS_HOME/models``) and is checked against Keras's hash.
"""
import os
import urllib.parse

KERAS_STORAGE = "https://storage.googleapis.com/"
MIRROR_VARIABLE = "MINIKERAS_WEIGHTS_MIRROR"
MIRROR_SCHEMES = ("http", "https", "file")


def resolve(url):
    """``url`` itself, or its path under the mirror ``$MINIKERAS_WEIGHTS_MIRROR`` names.

    Raises:
      ValueError: the variable is set to something other than an http(s) or file URL.
    """
    mirror = os.environ.get(MIRROR_VARIABLE)
    if not mirror or not url.startswith(KERAS_STORAGE):
        return url
    if urllib.parse.urlsplit(mirror).scheme not in MIRROR_SCHEMES:
        raise ValueError(f"{MIRROR_VARIABLE} should be a base URL starting with http://, https:// or file:// (a "
                         f"mirror of {KERAS_STORAGE}'s paths). Received: {MIRROR_VARIABLE}={mirror!r}")
    return mirror.rstrip("/") + "/" + url[len(KERAS_STORAGE):]
