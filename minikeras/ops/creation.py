"""Tensors from values: constant, zeros, ones, fill, eye, range, linspace."""
import jax.numpy as jnp
import numpy as np

from minikeras import _context
from minikeras.backend import floatx, folding_constants
from minikeras.dtypes import as_dtype, requested_dtype, string
from minikeras.ops.shape import shape_argument
from minikeras.string_tensor import StringTensor, is_string_value, string_tensor
from minikeras.tensor import Tensor, Variable, to_array


def constant(value, dtype=None, shape=None, name=None):
    """A Tensor holding ``value`` (converted to ``dtype``; broadcast to ``shape`` if given).

    >>> mk.constant([1, 2])
    mk.Tensor([1 2], shape=(2,), dtype=int32)
    >>> mk.constant("text")  # strings: a string Tensor on the host (minikeras.string_tensor)
    mk.Tensor(b'text', shape=(), dtype=string)
    """
    if is_string_value(value) or as_dtype(dtype) is string:
        return _string_constant(value, shape)
    try:
        array = to_array(value, as_dtype(dtype))
    except ValueError as error:
        if isinstance(value, (list, tuple)) and "inhomogeneous" in str(error):  # TensorFlow's message
            raise ValueError(f"Can't convert non-rectangular Python sequence to Tensor: {value!r}") from None
        raise
    if shape is not None:
        shape = tuple(shape)
        if array.size == 1 or array.shape == shape:
            return _made(lambda: jnp.broadcast_to(array.reshape(()) if array.size == 1 else array, shape), array)
        if array.size == int(np.prod(shape)):
            return _made(lambda: array.reshape(shape), array)
        raise TypeError(f"Eager execution of mk.constant with {array.size} values cannot have shape {list(shape)}")
    return Tensor(array)


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """Returns ``value`` as a Tensor (a Tensor unchanged; a Variable read; arrays and numbers converted)."""
    if isinstance(value, Tensor) and (dtype is None or value.dtype == as_dtype(dtype)):
        return value
    if not isinstance(value, Tensor) and (is_string_value(value) or as_dtype(dtype) is string):
        return _string_constant(value, None)
    if isinstance(value, Tensor):
        raise ValueError(f"Tensor conversion requested dtype {as_dtype(dtype).name} for a Tensor with dtype "
                         f"{value.dtype.name}")
    if isinstance(value, Variable):
        return value.value() if dtype is None else Tensor(to_array(value, as_dtype(dtype)))
    if dtype is None and dtype_hint is not None and isinstance(value, (int, float, list, tuple)):
        return Tensor(to_array(value, as_dtype(dtype_hint)))
    return Tensor(to_array(value, as_dtype(dtype)))


def _string_constant(value, shape):
    if not is_string_value(value) and not (isinstance(value, (list, tuple)) and not value):
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype string")
    tensor = string_tensor(value)
    if shape is None or tuple(shape) == tensor.shape:
        return tensor
    array = tensor.numpy()
    if np.size(array) == 1:
        return StringTensor.of_bytes(np.broadcast_to(np.reshape(array, ()), tuple(shape)).copy())
    if np.size(array) == int(np.prod(shape)):
        return StringTensor.of_bytes(np.reshape(array, tuple(shape)))
    raise TypeError(f"Eager execution of mk.constant with {np.size(array)} values cannot have shape {list(shape)}")


def _made(make, *values):
    """``Tensor(make())``; a constant inside a trace unless ``values`` are traced or symbolic
    (``backend.folding_constants``)."""
    if _context.call_state.traces:
        with folding_constants(*values):
            return Tensor(make())
    return Tensor(make())


def zeros(shape, dtype=None, name=None):
    """A Tensor of zeros (float32 by default)."""
    shape = shape_argument(shape)
    return _made(lambda: jnp.zeros(shape, requested_dtype(dtype) or floatx()), shape)


def ones(shape, dtype=None, name=None):
    """A Tensor of ones (float32 by default)."""
    shape = shape_argument(shape)
    return _made(lambda: jnp.ones(shape, requested_dtype(dtype) or floatx()), shape)


def fill(dims, value, name=None):
    """A Tensor of shape ``dims`` filled with ``value`` (dtype from the value)."""
    scalar = to_array(value)
    shape = shape_argument(dims)
    return _made(lambda: jnp.full(shape, scalar, scalar.dtype), shape, scalar)


def zeros_like(input, dtype=None, name=None):  # noqa: A002
    """Zeros with the shape (and dtype) of ``input``."""
    x = input if isinstance(input, (Tensor, Variable)) else Tensor(to_array(input))
    return _made(lambda: jnp.zeros(x.shape, requested_dtype(dtype) or x.dtype), x.shape)


def ones_like(input, dtype=None, name=None):  # noqa: A002
    """Ones with the shape (and dtype) of ``input``."""
    x = input if isinstance(input, (Tensor, Variable)) else Tensor(to_array(input))
    return _made(lambda: jnp.ones(x.shape, requested_dtype(dtype) or x.dtype), x.shape)


def eye(num_rows, num_columns=None, batch_shape=None, dtype=None, name=None):
    """An identity matrix (optionally batched)."""
    def make():
        matrix = jnp.eye(int(num_rows), None if num_columns is None else int(num_columns),
                         dtype=requested_dtype(dtype) or floatx())
        return matrix if batch_shape is None else jnp.broadcast_to(matrix, tuple(batch_shape) + matrix.shape)

    return _made(make, batch_shape)


def range(start, limit=None, delta=1, dtype=None, name=None):  # noqa: A001 - TensorFlow's name
    """Numbers from ``start`` up to (not including) ``limit`` in steps of ``delta``."""
    if limit is None:
        start, limit = 0, start
    values = [float(v) if isinstance(v, (Tensor, Variable)) else v for v in (start, limit, delta)]
    if dtype is None:
        dtype = floatx() if any(isinstance(v, float) for v in values) else np.int32
    return _made(lambda: jnp.arange(*values, dtype=requested_dtype(dtype)), values)


def linspace(start, stop, num, axis=0, name=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive."""
    start, stop = to_array(start, floatx()), to_array(stop, floatx())
    return _made(lambda: jnp.linspace(start, stop, int(num), axis=axis), start, stop)
