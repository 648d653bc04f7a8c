"""Hinge losses for -1/1 labels (0/1 labels are converted, as Keras 3 does): hinge, squared
hinge, categorical hinge. Each function returns one loss per sample."""
from minikeras.losses.base import LossFunctionWrapper, to_float_tensor, to_tensor
from minikeras.ops.math import equal, logical_or, maximum, square, where
from minikeras.ops.reduce import reduce_all, reduce_max, reduce_mean, reduce_sum


def _prepare(y_true, y_pred):
    y_pred = to_float_tensor(y_pred)
    return to_tensor(y_true, y_pred.dtype), y_pred


def convert_binary_labels_to_hinge(y_true):
    """``2 * y_true - 1`` when every label is 0 or 1, else the labels unchanged (Keras's rule,
    decided over the whole tensor)."""
    is_binary = reduce_all(logical_or(equal(y_true, 0.0), equal(y_true, 1.0)))
    return where(is_binary, 2.0 * y_true - 1.0, y_true)


def hinge(y_true, y_pred):
    """``mean(maximum(1 - y_true * y_pred, 0), axis=-1)``."""
    y_true, y_pred = _prepare(y_true, y_pred)
    return reduce_mean(maximum(1.0 - convert_binary_labels_to_hinge(y_true) * y_pred, 0.0), axis=-1)


def squared_hinge(y_true, y_pred):
    """``mean(square(maximum(1 - y_true * y_pred, 0)), axis=-1)``."""
    y_true, y_pred = _prepare(y_true, y_pred)
    return reduce_mean(square(maximum(1.0 - convert_binary_labels_to_hinge(y_true) * y_pred, 0.0)), axis=-1)


def categorical_hinge(y_true, y_pred):
    """``maximum(neg - pos + 1, 0)`` with ``pos = sum(y_true * y_pred)`` and
    ``neg = max((1 - y_true) * y_pred)`` over the last axis (one-hot labels)."""
    y_true, y_pred = _prepare(y_true, y_pred)
    pos = reduce_sum(y_true * y_pred, axis=-1)
    neg = reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return maximum(neg - pos + 1.0, 0.0)


class Hinge(LossFunctionWrapper):
    """``mean(maximum(1 - y_true * y_pred, 0))`` (see ``hinge``)."""

    def __init__(self, reduction="sum_over_batch_size", name="hinge", dtype=None):
        super().__init__(hinge, name=name, reduction=reduction, dtype=dtype)


class SquaredHinge(LossFunctionWrapper):
    """``mean(square(maximum(1 - y_true * y_pred, 0)))`` (see ``squared_hinge``)."""

    def __init__(self, reduction="sum_over_batch_size", name="squared_hinge", dtype=None):
        super().__init__(squared_hinge, name=name, reduction=reduction, dtype=dtype)


class CategoricalHinge(LossFunctionWrapper):
    """``maximum(neg - pos + 1, 0)`` (see ``categorical_hinge``)."""

    def __init__(self, reduction="sum_over_batch_size", name="categorical_hinge", dtype=None):
        super().__init__(categorical_hinge, name=name, reduction=reduction, dtype=dtype)
