"""Sorting: ``sort``, ``argsort`` and ``top_k`` (``tf.sort``, ``tf.argsort``, ``tf.math.top_k``).

The indices come from a non-differentiable primitive; the values are the input gathered
at those indices (``getitem`` with index arrays), so their gradient is the scatter-add
that ``getitem`` already has, of any order. Ties keep their original order (lower index
first) in both directions, as TensorFlow's kernels do.
"""
import collections

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.errors import invalid_argument
from minikeras.ops.array import getitem
from minikeras.ops.linalg import as_tensor
from minikeras.ops.primitive import Primitive

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])

_DIRECTIONS = ("ASCENDING", "DESCENDING")

_argsort = Primitive(
    "argsort",
    lambda x, *, axis, descending: jnp.argsort(x, axis=axis, stable=True, descending=descending).astype(jnp.int32),
    differentiable=False)
_top_k_indices = Primitive("top_k", lambda x, *, k: jax.lax.top_k(x, k)[1].astype(jnp.int32), differentiable=False)


def _axis(x, axis, op):
    if x.ndim == 0:
        raise invalid_argument(op, "expected a tensor of rank >= 1, received a scalar")
    if not -x.ndim <= axis < x.ndim:
        raise invalid_argument(op, f"axis {axis} is out of range for a tensor of rank {x.ndim} (shape {x.shape})")
    return axis % x.ndim


def _descending(direction):
    if direction not in _DIRECTIONS:
        raise ValueError(f"direction should be one of {', '.join(_DIRECTIONS)}, received {direction!r}")
    return direction == "DESCENDING"


def take_along_axis(x, indices, axis):
    """``x`` gathered at ``indices`` (a Tensor of the same rank) along ``axis``, as NumPy's
    ``take_along_axis``; differentiable in ``x``."""
    grids = list(np.ix_(*[np.arange(n) for n in indices.shape]))
    grids[axis] = indices._value
    return getitem(x, tuple(grids))


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The int32 indices that sort ``values`` along ``axis`` (``tf.argsort``); ties keep
    their order, so the sort is always stable."""
    x = as_tensor(values)
    return _argsort(x, axis=_axis(x, int(axis), "argsort"), descending=_descending(direction))


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """``values`` sorted along ``axis`` (``tf.sort``); differentiable (the gradient goes to
    the element each output came from)."""
    x = as_tensor(values)
    axis = _axis(x, int(axis), "sort")
    return take_along_axis(x, _argsort(x, axis=axis, descending=_descending(direction)), axis)


def top_k(input, k=1, sorted=True, index_type=None, name=None):  # noqa: A002 - TensorFlow's names
    """The ``k`` largest entries of the last axis and their int32 indices, largest first,
    ties by lower index (``tf.math.top_k``): a ``TopKV2(values, indices)`` named tuple.
    ``values`` is differentiable."""
    x = as_tensor(input)
    _axis(x, -1, "TopKV2")
    k = int(k)
    if k < 0:
        raise invalid_argument("TopKV2", f"Need k >= 0, got {k}")
    if x.shape[-1] < k:
        raise invalid_argument("TopKV2", f"input must have at least k columns. Had {x.shape[-1]}, needed {k}")
    indices = _top_k_indices(x, k=k)
    return TopKV2(take_along_axis(x, indices, x.ndim - 1), indices)
