"""Hashing(salt=...): keyed SipHash-2-4 as Keras 3.15 (tf.strings.to_hash_bucket_strong on every
backend). The expected buckets are Keras 3.15's on JAX for the same inputs (printed by hand with
the reference install)."""
import re

import numpy as np
import pytest

import minikeras as mk
from minikeras.layers.preprocessing.siphash import siphash24

STRINGS = [["A"], ["B"], ["C"], [""], ["hello world, a longer string!"], ["ünï"]]
INTS = [[0], [1], [-7], [1234567]]
KERAS = {  # (salt, num_bins): (buckets of STRINGS, buckets of INTS)
    (133, 3): ([0, 0, 2, 2, 2, 2], [1, 2, 1, 0]),
    (133, 1000003): ([250872, 367087, 434982, 448894, 7857, 600126], [545730, 29409, 756156, 502526]),
    ((133, 137), 64): ([16, 6, 39, 20, 60, 10], [25, 6, 52, 14]),
    ((133, 137), 1000003): ([212495, 973574, 798145, 953272, 759240, 884795], [876599, 544600, 436702, 456820]),
    (1337, 64): ([20, 41, 3, 7, 43, 56], [50, 45, 50, 20]),
    ((-1, 5), 1000003): ([105608, 912532, 773934, 919713, 654133, 322398], [92093, 401928, 815913, 709535]),
}


def test_siphash24_reference_vectors():
    """The SipHash paper's test key (bytes 00..0f) on the empty message and on bytes 00..0e."""
    k0, k1 = 0x0706050403020100, 0x0F0E0D0C0B0A0908
    assert siphash24(k0, k1, b"") == 0x726FDB47DD0E0E31
    assert siphash24(k0, k1, bytes(range(15))) == 0xA129CA6149BE45E5


@pytest.mark.parametrize("salt,num_bins", list(KERAS))
def test_salted_hashing_matches_keras(salt, num_bins):
    layer = mk.layers.Hashing(num_bins=num_bins, salt=list(salt) if isinstance(salt, tuple) else salt)
    strings, ints = KERAS[(salt, num_bins)]
    np.testing.assert_array_equal(np.asarray(layer(np.array(STRINGS))).ravel(), strings)
    np.testing.assert_array_equal(np.asarray(layer(np.array(INTS))).ravel(), ints)


def test_salted_hashing_mask_config_and_errors():
    layer = mk.layers.Hashing(num_bins=5, salt=7, mask_value="")
    np.testing.assert_array_equal(np.asarray(layer(np.array([["a"], [""], ["b"]]))).ravel(), [3, 0, 2])
    assert layer.get_config()["salt"] == [7, 7]
    assert mk.layers.Hashing.from_config(layer.get_config()).salt == [7, 7]
    for salt in ("x", [1, 2, 3]):
        with pytest.raises(ValueError, match=r"can only be a tuple of size 2 integers, or a single integer. "
                                             rf"Received: salt={re.escape(str(salt))}\."):
            mk.layers.Hashing(num_bins=4, salt=salt)
