"""Random numbers from one seed-generator Variable, so compiled calls draw fresh values.

``set_seed(s)`` makes every later draw repeatable: eager ops, ops inside ``mk.function``
(the generator state is a Variable that the compiled program reads and advances), and
weight initializers (which draw from a separate, Python-side stream so that layers built
inside a trace get concrete initial values).

The generator Variable is created on first use (``get_global_generator``), not at import:
creating a jax array starts a jax backend, and ``import minikeras`` must not, so that
``mk.distribute.initialize`` (``jax.distributed.initialize``) can still run after it.
"""
import os

import jax
import jax.numpy as jnp
import numpy as np

from minikeras import _context
from minikeras.backend import floatx
from minikeras.dtypes import as_dtype, index_dtype, requested_dtype
from minikeras.ops.array import gather
from minikeras.ops.shape import shape_argument
from minikeras.tensor import Tensor, Variable, to_array
from minikeras.xla_cpu.dropout import split_key_data

_state = {"seed": None, "initializer_draws": 0, "host_draws": {}, "generator": None}


def set_seed(seed):
    """Sets the global seed: later random ops and initializers repeat exactly."""
    seed = int(seed)
    _state["seed"] = seed
    _state["initializer_draws"] = 0
    _state["host_draws"] = {}
    get_global_generator().assign(jax.random.key_data(jax.random.key(seed)))


def global_seed():
    """The seed last given to ``set_seed``, or None."""
    return _state["seed"]


def get_global_generator():
    """The Variable holding the random generator's state (advanced by every draw).

    Created on the first call, from a seed drawn from the OS (``set_seed`` then replaces its
    state). A first call inside ``mk.function`` creates it as process state all the same:
    the function reads it like any Variable made before it was traced.
    """
    generator = _state["generator"]
    if generator is None:
        seed = int.from_bytes(os.urandom(4), "little")
        with _context.outside_traces():
            generator = Variable(lambda: jax.random.key_data(jax.random.key(seed)), trainable=False,
                                 name="random_generator")
        _state["generator"] = generator
    return generator


def get_generator_state():
    """The global generator's state as a NumPy array (the key data of a jax PRNG key: uint32,
    shape (2,) for the default threefry), e.g. to save it with a checkpoint."""
    return np.asarray(get_global_generator().numpy())


def set_generator_state(state):
    """Restores a state from ``get_generator_state``: later draws (eager, compiled, dropout)
    repeat the ones that followed it.

    Raises:
      ValueError: if ``state`` has another shape or dtype than the generator's.
    """
    generator = get_global_generator()
    state = np.asarray(state)
    if state.shape != tuple(generator.shape) or state.dtype != np.dtype(generator.dtype.name):
        raise ValueError(f"mk.random.set_generator_state: the generator's state is {np.dtype(generator.dtype.name)} "
                         f"of shape {tuple(generator.shape)}, received {state.dtype} of shape {state.shape}")
    generator.assign(state)


_split = jax.jit(lambda data: jax.random.split(jax.random.wrap_key_data(data)))


def next_key(seed=None):
    """A fresh jax PRNG key; advances the global generator (inside ``mk.function`` too)."""
    return key_from(get_global_generator(), seed)


def key_from(generator, seed=None):
    """A fresh jax PRNG key from ``generator``, a Variable holding a key's data (uint32, shape
    (2,)), which it advances; inside ``mk.function`` the compiled program advances it."""
    data = generator._read_array()
    if isinstance(data, jax.core.Tracer):
        state, key_data = split_key_data(data)  # the same bits as jax.random.split, less to compile
        generator.assign(state)
        key = jax.random.wrap_key_data(key_data)
    else:
        pair = _split(data)
        generator.assign(jax.random.key_data(pair[0]))
        key = pair[1]
    if seed is not None:
        key = jax.random.fold_in(key, int(seed))
    return key


def initializer_rng(seed=None):
    """A NumPy Generator for weight initializers: from ``seed`` if given, else the next draw of
    a host-side stream under the global seed. Host sampling needs no XLA compile per weight
    shape, which would otherwise dominate building a model."""
    if seed is not None:
        return np.random.default_rng(int(seed))
    if _state["seed"] is None:
        _state["seed"] = int.from_bytes(os.urandom(4), "little")
    _state["initializer_draws"] += 1
    return np.random.default_rng([_state["seed"], 0x5EED, _state["initializer_draws"]])


# numpy_seed's sequences, each with the number that keeps its seeds apart from the others'
_HOST_STREAMS = {"numpy": 0, "seed_generator": 1}


def numpy_seed(stream="numpy"):
    """A seed for host-side randomness: the same sequence of seeds after each ``set_seed(s)``,
    fresh ones otherwise. Each ``stream`` is a sequence of its own, so that drawing from one does
    not move another: 'numpy' for NumPy randomness (``mk.data.Dataset.shuffle`` without
    ``seed=``, ``fit``'s data order), 'seed_generator' for ``SeedGenerator(None)``'s seeds."""
    seed = _state["seed"]
    if seed is None:
        return int.from_bytes(os.urandom(8), "little") >> 1
    if stream not in _HOST_STREAMS:
        raise ValueError(f"numpy_seed: stream must be one of {sorted(_HOST_STREAMS)}, received {stream!r}")
    draws = _state["host_draws"]
    draws[stream] = draws.get(stream, 0) + 1
    # the 'numpy' stream keeps the entropy it had before there were streams: the same seeds
    entropy = [seed % (1 << 63), draws[stream]] + ([] if stream == "numpy" else [_HOST_STREAMS[stream]])
    return int(np.random.SeedSequence(entropy).generate_state(1, np.uint64)[0] >> 1)


def _float_dtype(dtype, what):
    dtype = as_dtype(dtype) or floatx()
    if dtype.kind != "f" and dtype != jnp.bfloat16:
        raise ValueError(f"mk.random.{what} needs a floating dtype, received {dtype.name}")
    return dtype


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None, name=None):
    """Samples from a normal distribution (differentiable in ``mean`` and ``stddev``)."""
    dtype = _float_dtype(dtype, "normal")
    z = Tensor(jax.random.normal(next_key(seed), shape_argument(shape), dtype))
    return _affine(z, stddev, mean)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None, name=None):
    """Normal samples cut at two standard deviations (resampled, as TensorFlow does)."""
    dtype = _float_dtype(dtype, "truncated_normal")
    z = Tensor(jax.random.truncated_normal(next_key(seed), -2.0, 2.0, shape_argument(shape), dtype))
    return _affine(z, stddev, mean)


def uniform(shape, minval=0, maxval=None, dtype=None, seed=None, name=None):
    """Samples uniformly from [minval, maxval); integer dtypes need ``maxval``."""
    dtype = as_dtype(dtype) or floatx()
    shape = shape_argument(shape)
    if dtype.kind in "iu":
        if maxval is None:
            raise ValueError("mk.random.uniform with an integer dtype needs maxval")
        return Tensor(jax.random.randint(next_key(seed), shape, int(minval), int(maxval), dtype))
    maxval = 1.0 if maxval is None else maxval
    u = Tensor(jax.random.uniform(next_key(seed), shape, dtype))
    if isinstance(minval, (int, float)) and isinstance(maxval, (int, float)):
        return _affine(u, float(maxval - minval), float(minval))
    return u * (maxval - minval) + minval


def gamma(shape, alpha, beta=None, dtype=None, seed=None, name=None):
    """Samples of Gamma(``alpha``, rate ``beta``) as ``tf.random.gamma`` draws them: the result
    has shape ``shape + broadcast(alpha, beta).shape`` (one ``shape``-sized draw per pair of
    parameters), mean ``alpha / beta`` and variance ``alpha / beta**2``; ``beta`` None is 1.
    A draw, not differentiable in ``alpha`` or ``beta``; a parameter <= 0 gives NaN, as in TensorFlow.

    Example: ``g1 = gamma([n], 0.2); g2 = gamma([n], 0.2); g1 / (g1 + g2)`` is Beta(0.2, 0.2)."""
    dtype = _float_dtype(dtype, "gamma")
    alpha = jnp.asarray(to_array(alpha), dtype)
    rate = jnp.ones((), dtype) if beta is None else jnp.asarray(to_array(beta), dtype)
    out_shape = tuple(shape_argument(shape)) + jnp.broadcast_shapes(alpha.shape, rate.shape)
    draws = jax.random.gamma(next_key(seed), jnp.broadcast_to(alpha, out_shape), out_shape, dtype)
    return Tensor(draws / rate)


def _affine(z, scale, shift):
    if isinstance(scale, (int, float)) and isinstance(shift, (int, float)):
        if scale == 1.0 and shift == 0.0:
            return z
        return Tensor(z._value * scale + jnp.asarray(shift, z.dtype))
    return z * scale + shift


def shuffle(value, seed=None, name=None):
    """Randomly permutes ``value`` along its first axis."""
    x = value if isinstance(value, (Tensor, Variable)) else Tensor(to_array(value))
    permutation = jax.random.permutation(next_key(seed), x.shape[0])
    return gather(x, permutation)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """Draws ``num_samples`` class indices per row of ``logits`` [batch, classes]."""
    logits = to_array(logits)
    keys = next_key(seed)
    samples = jax.random.categorical(keys, logits[:, None, :], axis=-1, shape=(logits.shape[0], int(num_samples)))
    return Tensor(samples.astype(requested_dtype(dtype) or index_dtype()))  # TF's default: int64
