"""``keras.random``'s draws: Keras 3's functions, signatures, dtypes, seeding rules and errors.

``seed`` is an int (the same int gives the same values, as a stateless draw), a
``SeedGenerator`` (each draw advances it: fresh values, repeatable from its seed), a jax key
(``jax.random.PRNGKey(s)``, as Keras on JAX takes it) or None (the global generator of
``mk.random``, which ``keras.utils.set_random_seed`` seeds; unlike Keras 3 on JAX, allowed
inside compiled steps, where it advances like any Variable). A seed becomes the
jax threefry key ``[seed, counter]`` Keras 3 on JAX uses, so an int seed or a SeedGenerator
draws the bits Keras 3 on JAX draws with the same jax version. Each function returns an
``mk.Tensor``; ``normal``, ``truncated_normal`` and ``uniform`` are differentiable in Tensor
``mean``/``stddev``/``minval``/``maxval``, ``dropout`` in its input.
"""
import jax
import jax.numpy as jnp
import numpy as np

from minikeras.backend import floatx
from minikeras.dtypes import as_dtype, canonical_dtype
from minikeras.ops.math import where
from minikeras.ops.random import next_key
from minikeras.ops.shape import shape_argument
from minikeras.random.seed_generator import SeedGenerator
from minikeras.tensor import Tensor, Variable, to_array


def draw_key(seed):
    """The jax key of a ``seed`` argument (advancing a SeedGenerator or the global generator)."""
    if isinstance(seed, SeedGenerator):
        return jax.random.wrap_key_data(seed.next())
    if isinstance(seed, int):
        return jax.random.wrap_key_data(jnp.asarray(np.array([seed & 0xFFFFFFFF, 0], dtype=np.uint32)))
    if seed is None:
        return next_key()
    if isinstance(seed, jax.Array):  # a jax key (its data, or a typed key), as Keras on JAX takes it
        return seed if jax.dtypes.issubdtype(seed.dtype, jax.dtypes.prng_key) else jax.random.wrap_key_data(seed)
    raise ValueError("Argument `seed` must be either an integer or an instance of `SeedGenerator`. "
                     f"Received: seed={seed} (of type {type(seed)})")


def _dtype(dtype):
    return canonical_dtype(as_dtype(dtype)) if dtype is not None else floatx()


def _parameter(value):
    """A distribution's parameter as jax takes it: a Python number stays weakly typed (so that a
    float16 draw takes ``alpha=2.0``), anything else becomes its array."""
    return jnp.asarray(value) if isinstance(value, (int, float)) else to_array(value)


def _is_tensor(value):
    return isinstance(value, (Tensor, Variable))


def _shift_scale(sample, scale, shift):
    """``sample * scale + shift``: on the tape where ``scale`` or ``shift`` is a Tensor."""
    if _is_tensor(scale) or _is_tensor(shift):
        return Tensor(sample) * scale + shift
    return Tensor(sample * jnp.asarray(to_array(scale), sample.dtype) + jnp.asarray(to_array(shift), sample.dtype))


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Samples of a normal distribution (``floatx()`` by default)."""
    sample = jax.random.normal(draw_key(seed), shape=shape_argument(shape), dtype=_dtype(dtype))
    return _shift_scale(sample, stddev, mean)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Normal samples beyond two standard deviations drawn again (a normal cut at +-2)."""
    sample = jax.random.truncated_normal(draw_key(seed), shape=shape_argument(shape), lower=-2.0, upper=2.0,
                                         dtype=_dtype(dtype))
    return _shift_scale(sample, stddev, mean)


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Samples uniform in ``[minval, maxval)``; floating dtypes only (``randint`` for integers)."""
    dtype = _dtype(dtype)
    if dtype.kind != "f" and dtype != jnp.bfloat16:
        raise ValueError(f"`keras.random.uniform` requires a floating point `dtype`. Received: dtype={dtype.name} ")
    key, shape = draw_key(seed), shape_argument(shape)
    if _is_tensor(minval) or _is_tensor(maxval):
        return Tensor(jax.random.uniform(key, shape=shape, dtype=dtype)) * (maxval - minval) + minval
    return Tensor(jax.random.uniform(key, shape=shape, dtype=dtype, minval=_parameter(minval),
                                     maxval=_parameter(maxval)))


def randint(shape, minval, maxval, dtype="int32", seed=None):
    """Integers uniform in ``[minval, maxval)``."""
    dtype = canonical_dtype(as_dtype(dtype))
    if dtype.kind not in "iu":
        raise ValueError(f"`keras.random.randint` requires an integer `dtype`. Received: dtype={dtype.name} ")
    return Tensor(jax.random.randint(draw_key(seed), shape=shape_argument(shape), dtype=dtype,
                                     minval=_parameter(minval), maxval=_parameter(maxval)))


def categorical(logits, num_samples, dtype="int32", seed=None):
    """``num_samples`` class indices per row of ``logits`` (batch, classes): shape (batch, num_samples)."""
    logits = to_array(logits)
    if logits.ndim != 2:
        raise ValueError("`logits` should be a 2-D tensor with shape [batch_size, num_classes]. "
                         f"Received: logits={np.asarray(logits)}")
    samples = jax.random.categorical(draw_key(seed), logits[..., None], shape=(logits.shape[0], int(num_samples)),
                                     axis=1)
    return Tensor(samples.astype(canonical_dtype(as_dtype(dtype))))


def dropout(inputs, rate, noise_shape=None, seed=None):
    """``inputs`` with each entry zeroed with probability ``rate`` and the rest scaled by
    ``1 / (1 - rate)``; ``noise_shape`` (None entries: the input's size) shares one draw along
    its axes of size 1."""
    x = inputs if _is_tensor(inputs) else Tensor(to_array(inputs))
    if rate == 1.0:
        return Tensor(jnp.zeros(x.shape, x.dtype))
    if rate == 0.0:
        return x
    keep_prob = 1.0 - rate
    shape = tuple(x.shape) if noise_shape is None else tuple(
        size if wanted is None else int(wanted) for size, wanted in zip(x.shape, noise_shape))
    mask = jnp.broadcast_to(jax.random.bernoulli(draw_key(seed), p=keep_prob, shape=shape), tuple(x.shape))
    return where(Tensor(mask), x / keep_prob, Tensor(jnp.zeros((), x.dtype)))


def shuffle(x, axis=0, seed=None):
    """``x`` with its entries along ``axis`` in a random order (each slice in its own order)."""
    return Tensor(jax.random.permutation(draw_key(seed), to_array(x), axis, independent=True))


def gamma(shape, alpha, dtype=None, seed=None):
    """Samples of a Gamma distribution of shape ``alpha`` (scale 1)."""
    return Tensor(jax.random.gamma(draw_key(seed), _parameter(alpha), shape=shape_argument(shape),
                                   dtype=_dtype(dtype)))


def binomial(shape, counts, probabilities, dtype=None, seed=None):
    """Successes in ``counts`` trials of probability ``probabilities`` (floats, ``floatx()`` by default)."""
    return Tensor(jax.random.binomial(draw_key(seed), n=_parameter(counts),
                                      p=_parameter(probabilities), shape=shape_argument(shape),
                                      dtype=_dtype(dtype)))


def beta(shape, alpha, beta, dtype=None, seed=None):
    """Samples of a Beta(``alpha``, ``beta``) distribution."""
    return Tensor(jax.random.beta(draw_key(seed), a=_parameter(alpha), b=_parameter(beta),
                                  shape=shape_argument(shape), dtype=_dtype(dtype)))
