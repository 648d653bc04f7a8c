"""``set_random_seed``: one call seeds Python, NumPy and minikeras."""
import random

import numpy as np

from minikeras.ops.random import set_seed


def set_random_seed(seed):
    """Seeds Python's ``random``, NumPy's global generator and ``mk.random`` (random ops, weight
    initializers, Dropout, ``Dataset.shuffle``), so that a program repeats exactly.

    Raises:
      ValueError: if ``seed`` is not an integer.
    """
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise ValueError(f"Expected `seed` argument to be an integer. Received: seed={seed} (of type {type(seed)})")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed)
    set_seed(seed)
