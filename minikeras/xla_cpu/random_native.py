"""jax's threefry random bits as native CPU kernels (``random_native.cc``), for compiled programs.

    if mask_supported(shape, dtype) and available():
        mask = scaled_mask(key_data, shape, rate, threshold)   # 1 / (1 - rate) where kept, else 0
    if split_supported(key_data) and available():
        first, second = split(key_data)                        # jax.random.split's two keys

The same bits as jax's (``xla_cpu.dropout``'s mask, ``jax.random.split``), to the bit. What they
save is compile time: XLA:CPU compiles the unrolled threefry as a big loop kernel per mask and
per split (a noticeable share of the MNIST CNN step's first call); a custom call compiles
nothing, and the mask kernel runs faster than XLA's loop.
``available()`` builds them on first use (``native_build``); elsewhere (another backend, no
compiler, ``MINIKERAS_NATIVE=0``, ``tuning.NATIVE_KERNELS`` False) the callers keep their jax code.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.xla_cpu import tuning
from minikeras.xla_cpu.native_build import register_targets, usable_cpus

_MASK = "minikeras_dropout_mask"
_SPLIT = "minikeras_threefry_split"


@functools.lru_cache(maxsize=None)
def available():
    """True when the kernels are built for this machine and registered with XLA:CPU."""
    return register_targets("random_native.cc", {_MASK: "MinikerasDropoutMask", _SPLIT: "MinikerasThreefrySplit"})


def _on_cpu():
    return tuning.NATIVE_KERNELS and jax.default_backend() == "cpu"


def mask_supported(shape, dtype):
    """Whether ``scaled_mask`` draws a mask of this shape and dtype here: float32, concrete sizes,
    fewer than 2**32 elements, the CPU backend."""
    return (_on_cpu() and jnp.dtype(dtype) == jnp.float32 and all(type(d) is int for d in shape)
            and int(np.prod(shape, dtype=np.int64)) < 2 ** 32)


def split_supported(key_data):
    """Whether ``split`` splits this key data here: a threefry key's (uint32, shape (2,)), the CPU."""
    return _on_cpu() and key_data.shape == (2,) and key_data.dtype == jnp.uint32


def scaled_mask(key_data, shape, rate, threshold, scale=None):
    """float32 array of ``shape``: ``scale`` (default ``np.float32(1 / (1 - rate))``) where
    ``(bits >> 9) < threshold``, else 0, for jax's threefry bits (partitionable, over the flat
    index) of the key whose data (uint32[2]) is ``key_data``."""
    size = int(np.prod(shape, dtype=np.int64))
    threads = usable_cpus() if size >= tuning.DROPOUT_NATIVE_THREAD_ELEMENTS else 1
    call = jax.ffi.ffi_call(_MASK, jax.ShapeDtypeStruct(tuple(shape), jnp.float32), vmap_method="sequential")
    scale = np.float32(1.0 / (1.0 - rate) if scale is None else scale)
    return call(key_data, threshold=np.int64(threshold), scale=scale,
                threads=np.int64(threads))


def split(key_data):
    """``jax.random.split``'s two new keys of the threefry key whose data is ``key_data``, as key
    data: ``(first, second)``, uint32 arrays of shape (2,)."""
    out = jax.ShapeDtypeStruct((2,), jnp.uint32)
    return tuple(jax.ffi.ffi_call(_SPLIT, (out, out), vmap_method="sequential")(key_data))
