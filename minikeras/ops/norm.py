"""``tf.norm``: vector p-norms and matrix norms ('fro', 1, 2, inf), with gradients."""
import numpy as np

from minikeras.errors import invalid_argument
from minikeras.ops.array import expand_dims, squeeze, transpose
from minikeras.ops.elementwise import abs as abs_, sqrt, square
from minikeras.ops.linalg import as_tensor
from minikeras.ops.linalg_eig import svd
from minikeras.ops.math import pow as pow_, where
from minikeras.ops.reduce import reduce_max, reduce_sum

_EUCLIDEAN = ("euclidean", "fro")


def _safe_sqrt(squared):
    # the Euclidean norm's gradient at 0 is 0, not NaN
    safe = where(squared > 0, squared, 1.0)
    return where(squared > 0, sqrt(safe), 0.0)


def _vector_norm(x, ord, axis, keepdims):  # noqa: A002
    if ord in _EUCLIDEAN or ord == 2:
        return _safe_sqrt(reduce_sum(square(x), axis=axis, keepdims=keepdims))
    if ord == 1:
        return reduce_sum(abs_(x), axis=axis, keepdims=keepdims)
    if ord == np.inf:
        return reduce_max(abs_(x), axis=axis, keepdims=keepdims)
    p = float(ord)
    return pow_(reduce_sum(pow_(abs_(x), p), axis=axis, keepdims=keepdims), 1.0 / p)


def _matrix_norm(x, ord, axes, keepdims):  # noqa: A002
    rows, cols = axes
    if ord in _EUCLIDEAN:
        result = _safe_sqrt(reduce_sum(square(x), axis=axes, keepdims=True))
    elif ord == 1:  # largest column sum
        result = reduce_max(reduce_sum(abs_(x), axis=rows, keepdims=True), axis=cols, keepdims=True)
    elif ord == np.inf:  # largest row sum
        result = reduce_max(reduce_sum(abs_(x), axis=cols, keepdims=True), axis=rows, keepdims=True)
    else:  # 2: the largest singular value
        perm_x = _move_to_end(x, rows, cols)
        result = svd(perm_x, compute_uv=False)[..., 0]
        result = expand_dims(expand_dims(result, -1), -1)
        result = _move_back(result, rows, cols)
    return result if keepdims else squeeze(result, axis=list(axes))


def _move_to_end(x, rows, cols):
    from_axes = [i for i in range(x.ndim) if i not in (rows, cols)] + [rows, cols]
    return x if from_axes == list(range(x.ndim)) else _transpose(x, from_axes)


def _move_back(result, rows, cols):
    ndim = result.ndim
    order = [i for i in range(ndim) if i not in (rows, cols)] + [rows, cols]
    inverse = list(np.argsort(order))
    return result if order == list(range(ndim)) else _transpose(result, inverse)


def _transpose(x, perm):
    return transpose(x, tuple(int(p) for p in perm))


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):  # noqa: A002 - TensorFlow's names
    """The norm of vectors or matrices, as ``tf.norm``.

    ``axis`` None: the whole tensor as one vector. An int: vector norms along it, ``ord``
    'euclidean' (2), 1, np.inf or any p > 0. A pair of ints: matrix norms over those axes,
    ``ord`` 'fro'/'euclidean', 1 (largest column sum), 2 (largest singular value) or np.inf
    (largest row sum). The Euclidean norm's gradient at 0 is 0.
    """
    x = as_tensor(tensor)
    keepdims = bool(keepdims)
    if isinstance(ord, str) and ord not in _EUCLIDEAN:
        raise ValueError(f"norm: ord must be 'euclidean', 'fro', 1, 2, np.inf or a positive number, received {ord!r}")
    if axis is not None and not isinstance(axis, (int, np.integer)):
        axes = tuple(int(a) % x.ndim for a in np.atleast_1d(np.asarray(axis)).tolist())
        if len(axes) == 2:
            if axes[0] == axes[1]:
                raise invalid_argument("norm", f"norm: the two matrix axes must differ, received {axis!r}")
            if not (ord in _EUCLIDEAN or ord in (1, 2, np.inf)):
                raise ValueError(f"norm: matrix ord must be 'fro', 'euclidean', 1, 2 or np.inf, received {ord!r}")
            return _matrix_norm(x, ord, axes, keepdims)
        if len(axes) != 1:
            raise ValueError(f"norm: axis must be None, an int or a pair of ints, received {axis!r}")
        axis = axes[0]
    if not isinstance(ord, str) and not ord > 0:
        raise ValueError(f"norm: ord must be positive, received {ord!r}")
    if ord == "fro" and axis is not None:
        raise ValueError("norm: ord='fro' is a matrix norm: give axis as a pair of ints")
    return _vector_norm(x, ord, None if axis is None else int(axis) % max(x.ndim, 1), keepdims)
