"""``mk.random.Generator``: a random generator object whose state is a Variable (``tf.random.Generator``).

    g = mk.random.Generator.from_seed(1)
    x = g.normal(shape=(2, 3))
    seed = g.make_seeds(2)[:, 0]     # a seed for mk.random.stateless_* ops

The state is the data of a jax threefry key (uint32, shape (2,)) in ``g.state``: every draw
advances it, inside ``mk.function`` too, and ``mk.train.Checkpoint(generator=g)`` saves and
restores it (a Generator is a Module). The bits are jax's, not TF's Philox: shapes, dtypes,
distributions and repeatability match TF, values do not.
"""
import os

import jax
import jax.numpy as jnp
import numpy as np

from minikeras import _context
from minikeras.dtypes import as_dtype, canonical_dtype, int64
from minikeras.module import Module
from minikeras.ops.random import key_from
from minikeras.ops.shape import shape_argument
from minikeras.ops.stateless_random import binomial_from_key, draw, uniform_from_key
from minikeras.tensor import Tensor, Variable, never_donate, to_array

ALGORITHM = "threefry"


def _key_data(seed):
    """The key data jax.random.key(seed) has, for any Python int (negative and 64-bit ones too)."""
    seed = int(seed) & 0xFFFFFFFFFFFFFFFF
    return np.array([seed >> 32, seed & 0xFFFFFFFF], dtype=np.uint32)


class Generator(Module):
    """A random number generator with its own state (``tf.random.Generator``).

    Make one with ``from_seed``, ``from_non_deterministic_state`` or ``from_state``.

    Args:
      copy_from: another Generator whose state to copy.
      state: the initial state (uint32 key data of shape (2,)).
      alg: the algorithm: 'threefry' (None, 'auto_select' and TF's names are accepted; the bits
        are always jax's threefry).
    """

    def __init__(self, copy_from=None, state=None, alg=None, name=None):
        super().__init__(name=name)
        if copy_from is not None:
            state = copy_from.state.numpy()
        if state is None:
            raise ValueError("Generator needs `copy_from` or `state`; use Generator.from_seed(seed) or "
                             "Generator.from_non_deterministic_state()")
        state = np.asarray(state)
        if state.shape != (2,):
            raise ValueError(f"Generator: a state is a threefry key's data of shape (2,), received shape {state.shape}")
        with _context.outside_traces():
            # read and advanced by Dataset.map threads while compiled steps run
            self.state = never_donate(Variable(state.astype(np.uint32), trainable=False, name="StateVar"))

    @classmethod
    def from_seed(cls, seed, alg=None):
        """A generator whose draws are determined by the integer ``seed``."""
        return cls(state=_key_data(seed), alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        """A generator seeded from the operating system's entropy."""
        return cls(state=_key_data(int.from_bytes(os.urandom(8), "little")), alg=alg)

    @classmethod
    def from_state(cls, state, alg=None):
        """A generator with the given state (from another generator's ``state``)."""
        return cls(state=np.asarray(to_array(state)), alg=alg)

    @property
    def algorithm(self):
        return ALGORITHM

    def reset(self, state):
        """Replaces the state."""
        self.state.assign(np.asarray(to_array(state)).astype(np.uint32))

    def reset_from_seed(self, seed):
        """Replaces the state with the one ``from_seed(seed)`` starts with."""
        self.state.assign(_key_data(seed))

    # -- draws ---------------------------------------------------------------------------
    def normal(self, shape, mean=0.0, stddev=1.0, dtype="float32", name=None):
        """Normal samples (float32 by default, as TF's)."""
        return self._location_scale("normal", shape, dtype, mean, stddev)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype="float32", name=None):
        """Normal samples cut at two standard deviations."""
        return self._location_scale("truncated_normal", shape, dtype, mean, stddev)

    def uniform(self, shape, minval=0, maxval=None, dtype="float32", name=None):
        """Uniform samples in [minval, maxval) (maxval defaults to 1 for floats); integer dtypes take
        both bounds, or neither for the dtype's full range."""
        dtype = canonical_dtype(as_dtype(dtype))
        if dtype.kind in "iu" and minval == 0 and maxval is None:
            raise ValueError(f"For integer dtype {dtype.name}, minval and maxval must be both `None` or both "
                             f"non-`None`; got minval={minval} and maxval={maxval}")
        return uniform_from_key(key_from(self.state), shape_argument(shape), minval, maxval, dtype)

    def uniform_full_int(self, shape, dtype="int64", name=None):
        """Integers over the whole range of ``dtype``."""
        return uniform_from_key(key_from(self.state), shape_argument(shape), None, None,
                                canonical_dtype(as_dtype(dtype)))

    def binomial(self, shape, counts, probs, dtype="int32", name=None):
        """Binomial samples: ``counts`` trials of probability ``probs`` (broadcast to ``shape``)."""
        return binomial_from_key(key_from(self.state), shape_argument(shape), counts, probs,
                                 canonical_dtype(as_dtype(dtype)))

    def make_seeds(self, count=1):
        """``count`` seeds for the ``stateless_*`` ops, as a (2, count) integer Tensor (int64 with
        64-bit dtypes enabled, else int32): ``g.make_seeds(count)[:, i]`` is the i-th seed."""
        dtype = canonical_dtype(int64)
        return Tensor(draw(key_from(self.state), "bits", (2, int(count)), dtype))

    def split(self, count=1):
        """``count`` new, independent Generators; this one advances."""
        if _traced(self.state):
            raise RuntimeError("Generator.split makes new Generators (new Variables): call it outside mk.function "
                               "and pass the generators in")
        return [Generator(state=jax.random.key_data(key_from(self.state))) for _ in range(int(count))]

    def _location_scale(self, kind, shape, dtype, mean, stddev):
        dtype = canonical_dtype(as_dtype(dtype))
        if dtype.kind != "f" and dtype != jnp.bfloat16:
            raise ValueError(f"Generator.{kind} needs a floating dtype, received {dtype.name}")
        key, shape = key_from(self.state), shape_argument(shape)
        if isinstance(mean, (Tensor, Variable)) or isinstance(stddev, (Tensor, Variable)):
            z = Tensor(draw(key, kind, shape, dtype, jnp.zeros((), dtype), jnp.ones((), dtype)))
            return z * stddev + mean
        return Tensor(draw(key, kind, shape, dtype, to_array(mean), to_array(stddev)))


def _traced(variable):
    return isinstance(variable.value()._value, jax.core.Tracer)
