"""``to_categorical`` and ``normalize``: NumPy in, NumPy out (a Tensor in, a Tensor out), as Keras 3."""
import numpy as np

from minikeras.ops.array import one_hot, reshape
from minikeras.ops.math import divide, maximum
from minikeras.ops.norm import norm
from minikeras.tensor import Tensor, Variable


def to_categorical(x, num_classes=None):
    """Converts a class vector (integers) to a one-hot matrix, the class axis last.

    A trailing axis of size 1 is dropped first (labels of shape (n, 1) give (n, num_classes)).

    Args:
      x: integer class values from 0 to ``num_classes - 1`` (array-like, or a Tensor).
      num_classes: the number of classes; None infers ``max(x) + 1``.

    Returns:
      A float64 NumPy array (a float32 Tensor when ``x`` is a Tensor).

    Example:
      >>> to_categorical([0, 2, 1], num_classes=3)
      array([[1., 0., 0.], [0., 0., 1.], [0., 1., 0.]])
    """
    if isinstance(x, (Tensor, Variable)):
        shape = tuple(x.shape)
        if len(shape) > 1 and shape[-1] == 1:
            x = reshape(x, shape[:-1])
        if num_classes is None:
            num_classes = int(np.max(x.numpy())) + 1
        return one_hot(x, int(num_classes))
    x = np.array(x, dtype="int64")
    shape = x.shape
    if len(shape) > 1 and shape[-1] == 1:
        shape = shape[:-1]
    x = x.reshape(-1)
    if not num_classes:
        num_classes = int(np.max(x)) + 1
    if x.size and (x.min() < 0 or x.max() >= num_classes):
        raise IndexError(f"to_categorical expects class values in [0, {num_classes}), received values from "
                         f"{x.min()} to {x.max()}")
    categorical = np.zeros((x.shape[0], num_classes))
    categorical[np.arange(x.shape[0]), x] = 1
    return categorical.reshape(shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    """Divides ``x`` by its ``order``-norm along ``axis`` (an all-zero slice stays zero).

    Returns:
      A NumPy array for a NumPy input, else a Tensor.
    """
    if isinstance(x, np.ndarray):
        norms = np.atleast_1d(np.linalg.norm(x, order, axis))
        norms[norms == 0] = 1
        return x / np.expand_dims(norms, -1 if axis is None else axis)
    norms = norm(x, ord=order, axis=axis, keepdims=True)
    return divide(x, maximum(norms, 1e-12))
