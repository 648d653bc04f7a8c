"""Keyed SipHash-2-4 of strings, as TensorFlow's ``to_hash_bucket_strong`` computes it.

Keras's ``Hashing(salt=...)`` hashes with ``tf.strings.to_hash_bucket_strong(values, num_bins,
key=salt)`` on every backend: ``SipHash24(key, s) % num_bins``, with the two 64-bit key words
``k0, k1`` taken from the salt (negative ones as their two's complement) and the 64-bit SipHash
of Aumasson and Bernstein (https://www.131002.net/siphash/siphash.pdf; TensorFlow calls
highwayhash's ``SipHashState``). Pure Python: it runs on the host, one string at a time.
"""
import struct

import numpy as np

_MASK = (1 << 64) - 1


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & _MASK


def _rounds(v0, v1, v2, v3, n):
    for _ in range(n):
        v0 = (v0 + v1) & _MASK
        v1 = _rotl(v1, 13) ^ v0
        v0 = _rotl(v0, 32)
        v2 = (v2 + v3) & _MASK
        v3 = _rotl(v3, 16) ^ v2
        v0 = (v0 + v3) & _MASK
        v3 = _rotl(v3, 21) ^ v0
        v2 = (v2 + v1) & _MASK
        v1 = _rotl(v1, 17) ^ v2
        v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


def siphash24(k0, k1, data):
    """The 64-bit SipHash-2-4 of the bytes ``data`` under the key words ``k0, k1`` (unsigned)."""
    v0, v1 = k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D
    v2, v3 = k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573
    full = len(data) // 8 * 8
    for (m,) in struct.iter_unpack("<Q", data[:full]):
        v3 ^= m
        v0, v1, v2, v3 = _rounds(v0, v1, v2, v3, 2)
        v0 ^= m
    last = int.from_bytes(data[full:], "little") | ((len(data) & 0xFF) << 56)
    v3 ^= last
    v0, v1, v2, v3 = _rounds(v0, v1, v2, v3, 2)
    v0 ^= last
    v2 ^= 0xFF
    v0, v1, v2, v3 = _rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3


def keyed_hash_buckets(keys, num_buckets, key):
    """``SipHash24(key, k) % num_buckets`` for each bytes ``k`` of ``keys``, as int64; ``key``
    is two integers (Keras's ``salt``)."""
    k0, k1 = (int(k) & _MASK for k in key)
    return np.fromiter((siphash24(k0, k1, k) % num_buckets for k in keys), dtype=np.int64, count=len(keys))
