"""Randomness saved with a weights file, so that training resumes exactly.

    /seed_generator/vars       attrs: name='seed_generator', data_order_seed=<int>
    /seed_generator/vars/0     the global generator's state (uint32, shape (2,))

The group has the layout of a Keras 3 ``SeedGenerator`` (one ``(2,)`` uint32 state variable
in ``<path>/vars/0``). It holds the state of ``mk.random``'s global generator, which every
random op draws from (Dropout's masks included, compiled or not), and, when the model has been
fit, the seed of fit's shuffle order (``model.data_order_seed``): with both restored, the
next epochs draw the same masks and visit the examples in the same order as they would have
without the interruption. Keras 3 does not read this group; files without it (Keras's)
leave the generator as it is.
"""
import warnings

import numpy as np

from minikeras.ops.random import get_generator_state, set_generator_state

GROUP = "seed_generator/vars"


def write(h5file, model):
    """Writes the generator state (and the model's data-order seed, if any) into an open file."""
    group = h5file.create_group(GROUP)
    group.attrs["name"] = "seed_generator"
    seed = getattr(model, "data_order_seed", None)
    if seed is not None:
        group.attrs["data_order_seed"] = np.uint64(seed)
    group.create_dataset("0", data=get_generator_state())


def read(h5file, filename):
    """``restore(model)`` for the random state in ``h5file``, checked now and applied later,
    once every other check of the file has passed: a no-op without one, or (with a warning
    naming the file) when the stored state does not fit this process's generator."""
    group = h5file.get(GROUP)
    if group is None or "0" not in group:
        return lambda model: None
    state = np.asarray(group["0"][()])
    expected = get_generator_state()
    if state.shape != expected.shape or state.dtype != expected.dtype:
        warnings.warn(f"'{filename}': its random generator state ({state.dtype}, shape {state.shape}) does not fit "
                      f"this process's generator ({expected.dtype}, shape {expected.shape}: another jax PRNG "
                      "implementation?); the weights load, the random state is not restored", stacklevel=4)
        return lambda model: None
    seed = group.attrs.get("data_order_seed")

    def restore(model):
        set_generator_state(state)
        if seed is not None and hasattr(model, "data_order_seed"):
            model.data_order_seed = int(seed)

    return restore
