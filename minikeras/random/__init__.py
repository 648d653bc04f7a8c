"""``mk.random``: random ops on the global generator (``minikeras.ops.random``), ``Generator``
objects with their own state, and the ``stateless_*`` ops whose values depend only on a seed."""
from minikeras.ops.random import (  # noqa: F401
    categorical, gamma, get_generator_state, get_global_generator, normal, set_generator_state, set_seed, shuffle,
    truncated_normal, uniform)
from minikeras.ops.stateless_random import (  # noqa: F401
    split, stateless_binomial, stateless_categorical, stateless_normal, stateless_truncated_normal, stateless_uniform)
from minikeras.random.generator import Generator  # noqa: F401
