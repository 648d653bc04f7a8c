"""Dropout keep-masks, bit-for-bit ``jax.random.bernoulli(key, 1 - rate, shape)``, fast on CPU.

    dropout_mask(key, shape, rate)       -> bool array, True where the element is kept
    scaled_mask(key, shape, rate, dtype) -> where(mask, 1 / (1 - rate), 0), computed once
                                            (widened=True: a bfloat16 one may be float32)
    dropout(x, key, rate)                -> where(mask, x / (1 - rate), 0)
    split_key_data(data)                 -> jax.random.split's two new keys, as key data (the
                                            global generator's draw inside a compiled step)

RNG: Threefry-2x32 (20 rounds; the Random123 generator, which passes BigCrush) keyed by the
given jax PRNG key, over the element's flat index -- exactly jax's default generator in its
``jax_threefry_partitionable`` form (the default), followed by jax's ``uniform(...) < p``. So the
mask is the one ``jax.random.bernoulli`` draws: reproducible from the key, independent across
split/folded keys, and checkable against jax.

Why not simply call ``jax.random.bernoulli``: on CPU jax lowers threefry as a rolled 5-step
``fori_loop``, so each step round-trips full-size arrays through memory; unrolled, the 20 rounds
fuse into one elementwise loop and the same bits come many times faster
(``benchmarks/pool_dropout.py``). jax's 'rbg'/'unsafe_rbg' keys are no faster on CPU (XLA's
RngBitGenerator), and a cheaper ad-hoc hash would save little while giving up the pedigree and
the equality with jax's own masks.

``scaled_mask`` draws float32 masks, and ``split_key_data`` splits keys, on native kernels
(``random_native``: the same bits, and nothing for XLA to compile) where they are built.

Keys that are not threefry keys (e.g. ``jax.random.key(0, impl='rbg')``), arrays of 2**32
elements or more, and non-CPU backends (where jax's unrolled lowering is already fast) go
through ``jax.random.bernoulli`` itself, so the result is the same everywhere.
"""
import jax
import jax.numpy as jnp
import numpy as np

from minikeras.xla_cpu import random_native
from minikeras.xla_cpu.materialize import materialize

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA


def _rotl(v, d):
    return (v << np.uint32(d)) | (v >> np.uint32(32 - d))


def threefry2x32(k0, k1, x0, x1):
    """The Threefry-2x32 block function (20 rounds), unrolled; uint32 arrays (or scalars, which
    broadcast) in, uint32 arrays out."""
    ks = (k0, k1, k0 ^ k1 ^ np.uint32(_PARITY))
    x0, x1 = x0 + ks[0], x1 + ks[1]
    for group in range(5):
        for r in _ROTATIONS[group % 2]:
            x0 = x0 + x1
            x1 = x0 ^ _rotl(x1, r)
        x0 = x0 + ks[(group + 1) % 3]
        x1 = x1 + ks[(group + 2) % 3] + np.uint32(group + 1)
    return x0, x1


def _threefry_key_words(key):
    """The two uint32 key words of a threefry key (typed or raw uint32[2]), else None."""
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        if str(jax.random.key_impl(key)) != "threefry2x32":
            return None
        key = jax.random.key_data(key)
    if key.shape != (2,) or key.dtype != jnp.uint32:
        return None
    return key[0], key[1]


def split_key_data(data):
    """``jax.random.split``'s two new keys of a threefry key, as key data: for ``data`` (uint32, shape
    (2,)), the pair ``(first, second)`` of uint32 arrays of shape (2,), with jax's bits.

    On the CPU it is a native kernel (``random_native.split``) where one is built, else jax's
    threefry unrolled and materialized: jax's split runs threefry over the counters 0 and 1 as a
    rolled loop there, which XLA:CPU compiles as a while loop of four kernels; unrolled it is one,
    and native none (less to compile for the global generator's draws inside a compiled step).
    Elsewhere it is jax's split itself.
    """
    if random_native.split_supported(data) and random_native.available():
        return random_native.split(data)
    if jax.default_backend() != "cpu" or data.shape != (2,) or data.dtype != jnp.uint32:
        pair = jax.random.key_data(jax.random.split(jax.random.wrap_key_data(data)))
    else:
        x0, x1 = threefry2x32(data[0], data[1], np.zeros(2, np.uint32), np.arange(2, dtype=np.uint32))
        pair = materialize(jnp.stack([x0, x1], axis=-1))
    return pair[0], pair[1]


def random_bits(key, shape):
    """uint32 bits equal to ``jax.random.bits(key, shape)`` for a threefry key, < 2**32 elements."""
    shape = tuple(int(d) for d in shape)
    k0, k1 = _threefry_key_words(key)
    # The counters are a NumPy constant: inside a trace that computes constants eagerly
    # (mk.function's), jax ops here would each compile a program of their own. Under a plain
    # jax.jit the constant is embedded where an iota would be computed: the same bits, a little
    # more compile time once per shape.
    lo = np.arange(int(np.prod(shape)), dtype=np.uint32).reshape(shape)
    b0, b1 = threefry2x32(k0, k1, np.uint32(0), lo)
    return b0 ^ b1


def dropout_mask(key, shape, rate):
    """Keep-mask (True = keep) with P(keep) = 1 - rate: ``jax.random.bernoulli(key, 1 - rate, shape)``.

    ``key`` is a jax PRNG key (``jax.random.key`` or the raw ``jax.random.PRNGKey``); ``rate`` a
    Python float in [0, 1).
    """
    keep = 1.0 - rate
    if not _fast(key, shape, keep):
        return jax.random.bernoulli(key, keep, shape)
    shape = tuple(int(d) for d in shape)
    return (random_bits(key, shape) >> np.uint32(9)) < np.uint32(_keep_threshold(keep))


def scaled_mask(key, shape, rate, dtype, widened=False):
    """``where(dropout_mask(key, shape, rate), 1 / (1 - rate), 0)`` as ``dtype`` (the scale rounded
    to ``dtype``), computed into a buffer of its own (``materialize``): XLA would otherwise draw
    it again inside each consumer (the forward multiply, its gradient). ``widened``: for a
    bfloat16 or float16 ``dtype``, where the native kernel draws it, the same values as float32
    (a product with it rounded to ``dtype`` has the bits of the product with the narrow mask);
    the caller checks the result's dtype."""
    keep = 1.0 - rate
    # a bfloat16 or float16 mask (a mixed-precision layer's) is the native float32 one with the
    # scale rounded to that dtype: drawing it in XLA costs the 20 threefry rounds. Left in float32
    # (widened) it saves two casts: XLA:CPU rounded it to bfloat16 for the gradient and widened
    # that again for the forward multiply, each a pass of its own.
    low = jnp.dtype(dtype) in (jnp.dtype(jnp.bfloat16), jnp.dtype(jnp.float16))
    drawn = jnp.float32 if low else dtype
    if _fast(key, shape, keep) and random_native.mask_supported(shape, drawn) and random_native.available():
        data = jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key
        scale = float(np.asarray(1.0 / keep, dtype)) if low else None
        mask = random_native.scaled_mask(data, tuple(int(d) for d in shape), rate, _keep_threshold(keep), scale)
        return mask if widened else mask.astype(dtype)
    mask = dropout_mask(key, shape, rate)
    return materialize(jnp.where(mask, jnp.asarray(1.0 / keep, dtype), jnp.asarray(0, dtype)))


def _fast(key, shape, keep):
    """Whether this module draws the mask itself (unrolled threefry, or the native kernel) rather
    than jax.random.bernoulli: concrete sizes (not mk.function's None dimensions), a threefry key,
    fewer than 2**32 elements, the CPU backend."""
    return (all(type(d) is int for d in shape) and jax.default_backend() == "cpu"
            and _threefry_key_words(key) is not None and int(np.prod(shape, dtype=np.int64)) < 2 ** 32
            and isinstance(keep, float))


def _keep_threshold(keep):
    """jax's uniform is u = (bits >> 9) * 2**-23 exactly, so u < keep <=> (bits >> 9) < this."""
    return min(int(np.ceil(np.float64(np.float32(keep)) * 2.0 ** 23)), 2 ** 23)


def dropout(x, key, rate):
    """Inverted dropout: kept elements scaled by 1 / (1 - rate), dropped ones zero."""
    if rate == 0:
        return x
    mask = dropout_mask(key, x.shape, rate)
    return jnp.where(mask, x / jnp.asarray(1.0 - rate, x.dtype), jnp.zeros((), x.dtype))
