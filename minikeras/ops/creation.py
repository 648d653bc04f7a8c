"""Tensors from values: constant, zeros, ones, fill, eye, range, linspace."""
import jax.numpy as jnp
import numpy as np

from minikeras.backend import floatx
from minikeras.dtypes import as_dtype
from minikeras.tensor import Tensor, Variable, to_array


def constant(value, dtype=None, shape=None, name=None):
    """A Tensor holding ``value`` (converted to ``dtype``; broadcast to ``shape`` if given).

    >>> mk.constant([1, 2])
    mk.Tensor([1 2], shape=(2,), dtype=int32)
    """
    array = to_array(value, as_dtype(dtype))
    if shape is not None:
        shape = tuple(shape)
        if array.size == 1 or array.shape == shape:
            array = jnp.broadcast_to(array.reshape(()) if array.size == 1 else array, shape)
        elif array.size == int(np.prod(shape)):
            array = array.reshape(shape)
        else:
            raise TypeError(f"Eager execution of mk.constant with {array.size} values cannot have shape {list(shape)}")
    return Tensor(array)


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """Returns ``value`` as a Tensor (a Tensor unchanged; a Variable read; arrays and numbers converted)."""
    if isinstance(value, Tensor) and (dtype is None or value.dtype == as_dtype(dtype)):
        return value
    if isinstance(value, Tensor):
        raise ValueError(f"Tensor conversion requested dtype {as_dtype(dtype).name} for a Tensor with dtype "
                         f"{value.dtype.name}")
    if isinstance(value, Variable):
        return value.value() if dtype is None else Tensor(to_array(value, as_dtype(dtype)))
    if dtype is None and dtype_hint is not None and isinstance(value, (int, float, list, tuple)):
        return Tensor(to_array(value, as_dtype(dtype_hint)))
    return Tensor(to_array(value, as_dtype(dtype)))


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(n) for n in np.asarray(shape).reshape(-1).tolist()) if not isinstance(shape, tuple) else \
        tuple(int(n) for n in shape)


def zeros(shape, dtype=None, name=None):
    """A Tensor of zeros (float32 by default)."""
    return Tensor(jnp.zeros(_shape(shape), as_dtype(dtype) or floatx()))


def ones(shape, dtype=None, name=None):
    """A Tensor of ones (float32 by default)."""
    return Tensor(jnp.ones(_shape(shape), as_dtype(dtype) or floatx()))


def fill(dims, value, name=None):
    """A Tensor of shape ``dims`` filled with ``value`` (dtype from the value)."""
    scalar = to_array(value)
    return Tensor(jnp.full(_shape(dims), scalar, scalar.dtype))


def zeros_like(input, dtype=None, name=None):  # noqa: A002
    """Zeros with the shape (and dtype) of ``input``."""
    x = input if isinstance(input, (Tensor, Variable)) else Tensor(to_array(input))
    return Tensor(jnp.zeros(x.shape, as_dtype(dtype) or x.dtype))


def ones_like(input, dtype=None, name=None):  # noqa: A002
    """Ones with the shape (and dtype) of ``input``."""
    x = input if isinstance(input, (Tensor, Variable)) else Tensor(to_array(input))
    return Tensor(jnp.ones(x.shape, as_dtype(dtype) or x.dtype))


def eye(num_rows, num_columns=None, batch_shape=None, dtype=None, name=None):
    """An identity matrix (optionally batched)."""
    matrix = jnp.eye(int(num_rows), None if num_columns is None else int(num_columns), dtype=as_dtype(dtype) or floatx())
    if batch_shape is not None:
        matrix = jnp.broadcast_to(matrix, tuple(batch_shape) + matrix.shape)
    return Tensor(matrix)


def range(start, limit=None, delta=1, dtype=None, name=None):  # noqa: A001 - TensorFlow's name
    """Numbers from ``start`` up to (not including) ``limit`` in steps of ``delta``."""
    if limit is None:
        start, limit = 0, start
    values = [float(v) if isinstance(v, (Tensor, Variable)) else v for v in (start, limit, delta)]
    if dtype is None:
        dtype = floatx() if any(isinstance(v, float) for v in values) else np.int32
    return Tensor(jnp.arange(*values, dtype=as_dtype(dtype)))


def linspace(start, stop, num, axis=0, name=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive."""
    return Tensor(jnp.linspace(to_array(start, floatx()), to_array(stop, floatx()), int(num), axis=axis))
