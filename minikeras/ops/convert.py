"""Argument handling shared by ops: tensor conversion, dtype agreement, axis normalisation."""
import numpy as np

from minikeras.dtypes import string_refusal
from minikeras.errors import invalid_argument
from minikeras.symbolic import KerasTensor
from minikeras.tensor import Tensor, Variable, python_scalar, to_array


def dtype_of(x):
    if isinstance(x, (Tensor, Variable)):
        return x.dtype
    if hasattr(x, "dtype") and not isinstance(x, (int, float, bool)):
        return np.dtype(x.dtype)
    return None


def binary_args(op_name, x, y):
    """Converts ``x`` and ``y`` for a binary op: Python numbers take the other operand's dtype;
    two tensors of different dtypes are an error, as in TensorFlow."""
    x_py = isinstance(x, (int, float, bool)) and not isinstance(x, np.generic)
    y_py = isinstance(y, (int, float, bool)) and not isinstance(y, np.generic)
    if x_py and not y_py:
        y = _as_operand(y)
        return _python_scalar(op_name, x, y.dtype, 0), y
    if y_py and not x_py:
        x = _as_operand(x)
        return x, _python_scalar(op_name, y, x.dtype, 1)
    x, y = _as_operand(x), _as_operand(y)
    if x.dtype != y.dtype:
        raise TypeError(
            f"cannot compute {op_name} as input #1(zero-based) was expected to be a {x.dtype.name} tensor but is a "
            f"{y.dtype.name} tensor. Cast one of them with mk.cast.")
    return x, y


def _as_operand(x):
    return x if isinstance(x, (Tensor, Variable, KerasTensor)) else Tensor(to_array(x))


def _python_scalar(op_name, value, dtype, index):
    dtype = np.dtype(dtype)
    if dtype.kind == "O":
        raise string_refusal(f"cannot compute {op_name} of a string mk.Tensor and {value!r}")
    if isinstance(value, float) and dtype.kind in "biu":
        raise TypeError(
            f"cannot compute {op_name}: input #{index}(zero-based) is the Python float {value!r}, but the other "
            f"input is a {dtype.name} tensor. Cast the tensor with mk.cast(x, mk.float32) first.")
    return python_scalar(value, dtype)  # cached: jnp.asarray costs more than a small op


def normalize_axis(axis, ndim, op_name):
    """None -> None; int or sequence -> sorted tuple of non-negative axes, validated."""
    if axis is None:
        return None
    if isinstance(axis, (Tensor, Variable)) or hasattr(axis, "__array__"):
        axis = np.asarray(axis).tolist()
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    result = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < max(ndim, 1):
            raise invalid_argument(op_name, f"{op_name}: axis {a} is out of range for a tensor of rank {ndim}")
        result.append(a % ndim if ndim else 0)
    return tuple(sorted(set(result)))
