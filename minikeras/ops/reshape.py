"""``reshape``, the one shape op below the others: reductions, broadcasting and the other shape
ops (array.py) are all written with it, so it depends on none of them."""
import math

import jax.numpy as jnp
import numpy as np
from jax.export import is_symbolic_dim

from minikeras.errors import invalid_argument
from minikeras.ops.primitive import Primitive
from minikeras.ops.shape import with_sizes
from minikeras.string_tensor import StringTensor
from minikeras.symbolic import KerasTensor
from minikeras.tensor import Tensor, Variable, to_array


def static_shape(shape, what):
    """``shape`` (a list, tuple, array or Tensor of ints) as a tuple of Python ints.

    Raises:
      TypeError naming ``what`` (the op asking) when ``shape`` is not a list of ints.
    """
    shape = with_sizes(shape)
    if isinstance(shape, (Tensor, Variable)):
        shape = np.asarray(shape).tolist()
    try:  # a symbolic size (a None dimension of mk.function's input signature) stays as it is
        return tuple(n if is_symbolic_dim(n) else int(n)
                     for n in (shape if isinstance(shape, (list, tuple)) else np.asarray(shape).tolist()))
    except (TypeError, ValueError):
        raise TypeError(f"{what} expects a shape as a list/tuple of ints, received {shape!r}") from None


_reshape = Primitive("reshape", lambda x, *, shape: jnp.reshape(x, shape))
_reshape.defgrad(lambda g, out, x, *, shape: reshape(g, x.shape))


def reshape(tensor, shape, name=None):
    """Gives ``tensor`` a new shape with the same number of elements (one -1 is inferred)."""
    if type(tensor) is Tensor and type(shape) is tuple:
        fast = _reshape_ints(tensor, shape)
        if fast is not None:
            return fast
    x = tensor if isinstance(tensor, (Tensor, Variable, KerasTensor)) else Tensor(to_array(tensor))
    shape = static_shape(shape, "reshape")
    if isinstance(x, KerasTensor):  # sizes unknown until run: the model's call checks them
        return _reshape(x, shape=shape)
    if not all(type(n) is int for n in shape + x.shape):
        return _reshape(x, shape=shape)  # symbolic sizes: jax checks them
    known = int(np.prod([n for n in shape if n != -1], dtype=np.int64))
    size = x.size
    if shape.count(-1) > 1 or (-1 not in shape and known != size) or (-1 in shape and (known == 0 or size % known)):
        raise invalid_argument(
            "Reshape", f"Cannot reshape a tensor with {size} elements to shape {list(shape)} ({known} elements); "
            f"input shape {x.shape}")
    if isinstance(x, StringTensor):  # strings stay on the host (expand_dims and squeeze come here too)
        return StringTensor.of_bytes(np.reshape(np.asarray(x), shape))
    return _reshape(x, shape=shape)


def _reshape_ints(x, shape):
    """The common eager call, a Tensor to a tuple of Python ints without -1 (a generator loop's
    ``mk.reshape(next_id, (1, 1))``), with no conversions: it runs between a compiled call and
    the read of its result. None where the general path applies (-1, symbolic sizes, another
    element count, which that path reports)."""
    size = 1
    for n in shape:
        if type(n) is not int or n < 0:
            return None
        size *= n
    dims = x._value.shape
    for n in dims:
        if type(n) is not int:
            return None
    if math.prod(dims) != size:
        return None
    return _reshape(x, shape=shape)
