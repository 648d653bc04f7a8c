"""``keras.random.SeedGenerator``: a seed whose state advances with every random draw.

    class Noise(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.seed_generator = keras.random.SeedGenerator(1337)

        def call(self, x):
            return x + keras.random.normal(keras.ops.shape(x), seed=self.seed_generator)

The state is Keras 3's: a non-trainable uint32 Variable ``seed_generator_state`` holding
``[seed, counter]``, which every draw advances by one (inside ``mk.function`` and ``fit`` too:
the compiled step reads and writes it like any Variable). A layer holding one lists the state
in ``variables`` and ``non_trainable_variables``, not in ``weights``, and weights files do not
store it, as Keras 3's. Unlike Keras 3 on JAX, a SeedGenerator no layer holds still advances
in a compiled step (Keras's state stays frozen there, so each step repeats the same draws).
"""
import random as python_random

import jax
import jax.numpy as jnp
import numpy as np

from minikeras import _context
from minikeras.backend import is_tracer
from minikeras.module import Module
from minikeras.ops.random import global_seed, numpy_seed
from minikeras.tensor import Variable, never_donate, to_array

_INCREMENT = np.array([0, 1], dtype=np.uint32)


def default_seed():
    """The seed of a ``SeedGenerator(None)``, in Keras's default range [1, 1e9]: the next of a
    sequence of its own (a shuffled Dataset does not move it), fixed by the global seed once
    ``mk.random.set_seed`` (or ``keras.utils.set_random_seed``) has run, so that layers drawing
    from their own generators (the recurrent cells' dropout) repeat like every other random op;
    else Python's ``random``, as Keras draws it."""
    if global_seed() is None:
        return python_random.randint(1, int(1e9))
    return numpy_seed("seed_generator") % int(1e9) + 1


class SeedGenerator(Module):
    """A random seed with state, for ``keras.random``'s ``seed=`` argument.

    Args:
      seed: an int (the first draws' values are then fixed), or None for a random one.
      name: the generator's name (``seed_generator``, ``seed_generator_1``, ... by default).
    """

    def __init__(self, seed=None, name=None, **kwargs):
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
        super().__init__(name=name)
        self._initial_seed = seed
        if seed is None:
            seed = default_seed()
        if not isinstance(seed, int):
            raise ValueError(f"Argument `seed` must be an integer. Received: seed={seed}")
        with _context.outside_traces():
            # a layer's generator may be advanced by Dataset.map threads while compiled steps run
            self.state = never_donate(Variable(np.array([seed & 0xFFFFFFFF, 0], dtype=np.uint32), trainable=False,
                                               name="seed_generator_state"))
        self.state.path = f"{self.name}/seed_generator_state"

    def next(self, ordered=True):
        """The current state (uint32, shape (2,): a jax threefry key's data); the state advances,
        by one in the counter (``ordered``) or to a new scrambled value."""
        current = to_array(self.state)
        if is_tracer(current):  # a compiled step: the update is part of its program
            self.state.assign(self._advanced(current, jnp, ordered))
            return current
        # Eagerly the update is a host computation (no jax op to dispatch), and a constant under
        # an abstract evaluation by plain jax.eval_shape, which leaves the state concrete.
        with jax.ensure_compile_time_eval():
            current = np.asarray(current)
            self.state.assign(self._advanced(current, np, ordered))
        return current

    @staticmethod
    def _advanced(current, numeric, ordered):
        if ordered:
            return current + numeric.asarray(_INCREMENT)
        return (current + numeric.uint32(1)) * numeric.uint32(5387) % numeric.uint32(933199)

    def get_config(self):
        return {"seed": self._initial_seed, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)
