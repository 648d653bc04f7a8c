"""Clipping by value and by norm, with TensorFlow's formulas and return values."""
import jax.numpy as jnp

from minikeras.ops.math import maximum, minimum, sqrt, where
from minikeras.ops.reduce import reduce_sum
from minikeras.symbolic import KerasTensor
from minikeras.tensor import Tensor, Variable, to_array


def _t(x):
    return x if isinstance(x, (Tensor, Variable, KerasTensor)) else Tensor(to_array(x))


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Clips ``t`` elementwise to [clip_value_min, clip_value_max]."""
    t = _t(t)
    return minimum(maximum(t, clip_value_min), clip_value_max)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """Scales ``t`` so its L2 norm (over ``axes``) is at most ``clip_norm``:
    ``t * clip_norm / max(norm(t), clip_norm)``."""
    t = _t(t)
    l2sum = reduce_sum(t * t, axis=axes, keepdims=True)
    positive = l2sum > 0
    l2norm = where(positive, sqrt(where(positive, l2sum, 1.0)), l2sum)
    return t * clip_norm / maximum(l2norm, clip_norm)


def global_norm(t_list, name=None):
    """sqrt(sum of squared L2 norms) of the tensors in ``t_list`` (None entries ignored)."""
    squares = [reduce_sum(_t(t) * _t(t)) for t in t_list if t is not None]
    if not squares:
        raise ValueError("global_norm needs at least one tensor that is not None")
    total = squares[0]
    for s in squares[1:]:
        total = total + s
    return sqrt(total)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scales every tensor by ``clip_norm / max(global_norm, clip_norm)``.

    Returns:
      ``(list_clipped, global_norm)``, as ``tf.clip_by_global_norm``; None entries stay None.
    """
    if isinstance(t_list, (Tensor, Variable)) or not hasattr(t_list, "__iter__"):
        raise TypeError(f"clip_by_global_norm expects a list of tensors, received {type(t_list).__name__}")
    t_list = list(t_list)
    norm = global_norm(t_list) if use_norm is None else _t(use_norm)
    clip = _t(jnp.asarray(to_array(clip_norm), norm.dtype))
    scale = clip * minimum(1.0 / norm, 1.0 / clip)
    clipped = [None if t is None else _t(t) * scale for t in t_list]
    return clipped, norm
