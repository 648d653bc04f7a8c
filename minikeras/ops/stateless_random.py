"""``mk.random.stateless_*``: random draws that are a pure function of ``(shape, seed)``.

The seed is two integers (shape (2,), as TF's): they are the key of jax's threefry generator,
so the same seed gives the same values eagerly, inside ``mk.function`` and across runs. The bits
are jax's, not TensorFlow's Philox: shapes, dtypes and distributions match TF, values do not.
Each draw is one compiled jax function per (distribution, shape, dtype), seed and parameters
passed as arrays, so new seeds and parameter values compile nothing.
"""
import functools

import jax
import jax.numpy as jnp

from minikeras.dtypes import as_dtype, canonical_dtype
from minikeras.errors import InvalidArgumentError
from minikeras.ops.shape import shape_argument
from minikeras.tensor import Tensor, Variable, to_array


def key_of_seed(seed):
    """The jax key whose data are ``seed``'s two integers (taken modulo 2**32; an int64 seed's
    high words are folded in). Traceable."""
    if seed.dtype.itemsize == 8:
        key = jax.random.wrap_key_data((seed & 0xFFFFFFFF).astype(jnp.uint32))
        return jax.random.fold_in(key, ((seed[0] >> 32) ^ ((seed[1] >> 32) * 31)).astype(jnp.uint32))
    return jax.random.wrap_key_data(seed.astype(jnp.uint32))


def _seed(seed, what):
    array = to_array(seed)
    if tuple(array.shape) != (2,):
        raise InvalidArgumentError(None, None, f"{what}: seed must have shape [2], not {list(array.shape)}")
    if not jnp.issubdtype(array.dtype, jnp.integer):
        raise InvalidArgumentError(None, None, f"{what}: seed must be integers (int32 or int64), received "
                                               f"{array.dtype.name}")
    return array


@functools.partial(jax.jit, static_argnames=("kind", "shape", "dtype"))
def draw(key, kind, shape, dtype, a=None, b=None):
    """One draw from the jax key ``key``: 'normal' and 'truncated_normal' (times ``b`` plus ``a``),
    'uniform' (floats in [a, b)), 'randint' (integers in [a, b)), 'bits' (the dtype's full range),
    'binomial' (``a`` trials of probability ``b``)."""
    if kind == "normal":
        return jax.random.normal(key, shape, dtype) * b.astype(dtype) + a.astype(dtype)
    if kind == "truncated_normal":
        return jax.random.truncated_normal(key, -2.0, 2.0, shape, dtype) * b.astype(dtype) + a.astype(dtype)
    if kind == "uniform":
        return jax.random.uniform(key, shape, dtype) * (b - a).astype(dtype) + a.astype(dtype)
    if kind == "randint":
        return jax.random.randint(key, shape, a, b, dtype)
    if kind == "bits":
        return jax.random.bits(key, shape, jnp.dtype(f"uint{jnp.dtype(dtype).itemsize * 8}")).view(dtype)
    if kind == "binomial":
        counts = jnp.broadcast_to(a.astype(jnp.float32), shape)
        probs = jnp.broadcast_to(b.astype(jnp.float32), shape)
        return jax.random.binomial(key, counts, probs, shape).astype(dtype)
    raise ValueError(kind)


def _float(dtype, what):
    dtype = canonical_dtype(as_dtype(dtype))
    if dtype.kind != "f" and dtype != jnp.bfloat16:
        raise ValueError(f"mk.random.{what} needs a floating dtype, received {dtype.name}")
    return dtype


def _tensor_param(value):
    return isinstance(value, (Tensor, Variable))


def _location_scale(key, kind, shape, dtype, mean, stddev):
    if _tensor_param(mean) or _tensor_param(stddev):  # differentiable in mean and stddev
        z = Tensor(draw(key, kind, shape, dtype, jnp.zeros((), dtype), jnp.ones((), dtype)))
        return z * stddev + mean
    return Tensor(draw(key, kind, shape, dtype, to_array(mean), to_array(stddev)))


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype="float32", name=None, alg="auto_select"):
    """Normal samples determined by ``seed`` (differentiable in Tensor ``mean`` and ``stddev``)."""
    key = key_of_seed(_seed(seed, "stateless_normal"))
    return _location_scale(key, "normal", shape_argument(shape), _float(dtype, "stateless_normal"), mean, stddev)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype="float32", name=None, alg="auto_select"):
    """Normal samples cut at two standard deviations, determined by ``seed``."""
    key = key_of_seed(_seed(seed, "stateless_truncated_normal"))
    return _location_scale(key, "truncated_normal", shape_argument(shape),
                           _float(dtype, "stateless_truncated_normal"), mean, stddev)


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype="float32", name=None, alg="auto_select"):
    """Uniform samples in [minval, maxval) determined by ``seed``; integer dtypes take both bounds,
    or neither (the dtype's full range)."""
    key = key_of_seed(_seed(seed, "stateless_uniform"))
    return uniform_from_key(key, shape_argument(shape), minval, maxval, canonical_dtype(as_dtype(dtype)))


def uniform_from_key(key, shape, minval, maxval, dtype):
    """Uniform draws as TF's ``uniform`` (floats in [minval, maxval), integers in [minval, maxval)
    or, with both bounds None, over the dtype's range) from a jax key."""
    if dtype.kind in "iu":
        if minval is None and maxval is None:
            return Tensor(draw(key, "bits", shape, dtype))
        if minval is None or maxval is None:
            raise ValueError(f"For integer dtype {dtype.name}, minval and maxval must be both `None` or both "
                             f"non-`None`; got minval={minval} and maxval={maxval}")
        return Tensor(draw(key, "randint", shape, dtype, to_array(minval), to_array(maxval)))
    if dtype.kind != "f" and dtype != jnp.bfloat16:
        raise ValueError(f"mk.random uniform needs a floating or integer dtype, received {dtype.name}")
    minval = 0.0 if minval is None else minval
    maxval = 1.0 if maxval is None else maxval
    if _tensor_param(minval) or _tensor_param(maxval):
        u = Tensor(draw(key, "uniform", shape, dtype, jnp.zeros((), dtype), jnp.ones((), dtype)))
        return u * (maxval - minval) + minval
    return Tensor(draw(key, "uniform", shape, dtype, to_array(float(minval)), to_array(float(maxval))))


def binomial_from_key(key, shape, counts, probs, dtype):
    return Tensor(draw(key, "binomial", shape, dtype, to_array(counts), to_array(probs)))


def stateless_categorical(logits, num_samples, seed, dtype="int64", name=None):
    """``num_samples`` class indices per row of ``logits`` (batch, classes), determined by ``seed``."""
    dtype = canonical_dtype(as_dtype(dtype))
    logits = to_array(logits)
    if logits.ndim != 2:
        raise ValueError(f"stateless_categorical expects logits of shape (batch, classes), received shape "
                         f"{tuple(logits.shape)}")
    return Tensor(_categorical(key_of_seed(_seed(seed, "stateless_categorical")), logits, int(num_samples), dtype))


@functools.partial(jax.jit, static_argnames=("num_samples", "dtype"))
def _categorical(key, logits, num_samples, dtype):
    return jax.random.categorical(key, logits[:, None, :], axis=-1,
                                  shape=(logits.shape[0], num_samples)).astype(dtype)


def stateless_binomial(shape, seed, counts, probs, output_dtype="int32", name=None):
    """Binomial samples (``counts`` trials of probability ``probs``, broadcast to ``shape``),
    determined by ``seed``."""
    key = key_of_seed(_seed(seed, "stateless_binomial"))
    return binomial_from_key(key, shape_argument(shape), counts, probs, canonical_dtype(as_dtype(output_dtype)))


def split(seed, num=2, alg="auto_select"):
    """``num`` new seeds from ``seed`` (``tf.random.split``): a ``(num, 2)`` Tensor of ``seed``'s
    dtype, each row a seed for the ``stateless_*`` ops, a pure function of ``seed`` (jax's key split,
    so the values are not TensorFlow's).

    >>> seeds = mk.random.split(mk.constant([1, 2]), num=3)
    >>> mk.random.stateless_uniform((2,), seed=seeds[0]).shape
    (2,)
    """
    seed = _seed(seed, "split")
    if isinstance(num, bool) or not isinstance(num, int) or num < 0:
        raise ValueError(f"mk.random.split: num must be a non-negative Python int, received {num!r}")
    words = jax.random.key_data(jax.random.split(key_of_seed(seed), num))  # (num, 2) uint32
    if seed.dtype.itemsize == 4:
        return Tensor(jax.lax.bitcast_convert_type(words, seed.dtype))
    return Tensor(words.astype(seed.dtype))
