"""FarmHash Fingerprint64 of strings, as TensorFlow's ``to_hash_bucket_fast`` computes it.

Keras's ``Hashing`` layer and the OOV buckets of ``StringLookup`` hash strings with
``tf.strings.to_hash_bucket_fast``: ``Fingerprint64(s) % num_buckets``, Fingerprint64 being
Google's FarmHash (``farmhash::Fingerprint64``). The ``pyfarmhash`` package binds that C++
function (its ``fingerprint64`` gives TF's values: the Hashing cases of
tests/test_layers_preprocessing_text_numbers.py).
"""
import numpy as np


def _fingerprint64():
    try:
        import farmhash
    except ImportError:
        raise ImportError("Hashing strings as Keras does (FarmHash Fingerprint64) needs the pyfarmhash package: "
                          "pip install pyfarmhash (or minikeras[text])") from None
    return farmhash.fingerprint64


def hash_buckets(keys, num_buckets):
    """``Fingerprint64(key) % num_buckets`` for each bytes key, as int64."""
    fingerprint = _fingerprint64()
    return np.fromiter((fingerprint(k) % num_buckets for k in keys), dtype=np.int64, count=len(keys))


def fingerprints(keys):
    """``Fingerprint64(key)`` of each bytes key, as uint64."""
    fingerprint = _fingerprint64()
    return np.fromiter((fingerprint(k) for k in keys), dtype=np.uint64, count=len(keys))
