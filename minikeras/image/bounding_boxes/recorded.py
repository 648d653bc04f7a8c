"""A bounding box function's pure jax forward called as one recorded op (``ops.jax_call``):
its gradient is ``jax.vjp`` of the forward, itself recorded, so the box utilities are
differentiable on the tape (to any order) wherever Keras's are."""
import functools

import jax
import numpy as np

from minikeras.ops.jax_call import call_jax
from minikeras.tensor import Tensor, Variable


def is_array(value):
    """Whether ``value`` is an input of the op (an array) rather than a static parameter."""
    return isinstance(value, (Tensor, Variable, np.ndarray, np.generic, jax.Array, list))


def as_input(value):
    """A Tensor or Variable as it is; anything else array-like as a NumPy array."""
    return value if isinstance(value, (Tensor, Variable)) else np.asarray(value)


def _pure(forward, names, static, *arrays):
    out = forward(**dict(zip(names, arrays)), **static)
    return out if isinstance(out, tuple) else (out,)


def box_op(name, forward, **arguments):
    """``forward(**arguments)`` as one op named ``name``: the array arguments are its inputs,
    the others (None, numbers, strings, tuples) static parameters. Returns a Tensor, or a tuple
    of Tensors where ``forward`` returns a tuple."""
    names = tuple(k for k, v in arguments.items() if is_array(v))
    static = {k: v for k, v in arguments.items() if k not in names}
    key = (name, forward.__module__, forward.__qualname__, names, tuple(sorted(static.items())))
    outs = call_jax(functools.partial(_pure, forward, names, static), [as_input(arguments[k]) for k in names],
                    name=name, key=key)
    return outs[0] if len(outs) == 1 else outs


def box_shape(boxes):
    """The shape of ``boxes`` (a Tensor, an array or nested lists)."""
    return tuple(boxes.shape) if hasattr(boxes, "shape") else as_input(boxes).shape


def size_input(value):
    """A height, width, offset or centre as an input of the op (None stays None): one compiled
    program serves every image size, and a division by it stays a division, as in Keras (XLA
    would make a division by a constant a multiplication by its reciprocal)."""
    if isinstance(value, (bool, int, float, np.generic)):
        return np.asarray(value, "int32" if isinstance(value, (int, np.integer)) else "float32")
    return value
