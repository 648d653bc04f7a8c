"""Overlap losses for segmentation masks, with Keras 3's formulas: Dice and Tversky. With
``axis=None`` (Keras's default) the sums run over the whole batch, one loss for all of it."""
from minikeras.backend import epsilon
from minikeras.losses.base import LossFunctionWrapper, to_float_tensor, to_tensor
from minikeras.ops.reduce import reduce_sum


def _prepare(y_true, y_pred):
    y_pred = to_float_tensor(y_pred)
    return to_tensor(y_true, y_pred.dtype), y_pred


def dice(y_true, y_pred, axis=None):
    """``1 - 2 * sum(y_true * y_pred) / (sum(y_true) + sum(y_pred) + epsilon())`` over ``axis``."""
    y_true, y_pred = _prepare(y_true, y_pred)
    intersection = reduce_sum(y_true * y_pred, axis=axis)
    return 1.0 - 2.0 * intersection / (reduce_sum(y_true, axis=axis) + reduce_sum(y_pred, axis=axis) + epsilon())


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    """``1 - TP / (TP + alpha * FP + beta * FN + epsilon())`` over ``axis``, with Keras's terms:
    ``TP = sum(y_true * y_pred)``, ``FP = sum((1 - y_pred) * y_true)``, ``FN = sum(y_pred * (1 - y_true))``."""
    y_true, y_pred = _prepare(y_true, y_pred)
    intersection = reduce_sum(y_true * y_pred, axis=axis)
    fp = reduce_sum((1.0 - y_pred) * y_true, axis=axis)
    fn = reduce_sum(y_pred * (1.0 - y_true), axis=axis)
    return 1.0 - intersection / (intersection + fp * alpha + fn * beta + epsilon())


class Dice(LossFunctionWrapper):
    """The Dice loss (see ``dice``)."""

    def __init__(self, reduction="sum_over_batch_size", name="dice", axis=None, dtype=None):
        super().__init__(dice, name=name, reduction=reduction, dtype=dtype, axis=axis)
        self.axis = axis


class Tversky(LossFunctionWrapper):
    """The Tversky loss (see ``tversky``); ``alpha = beta = 0.5`` is the Dice loss."""

    def __init__(self, alpha=0.5, beta=0.5, reduction="sum_over_batch_size", name="tversky", axis=None, dtype=None):
        super().__init__(tversky, name=name, reduction=reduction, dtype=dtype, alpha=alpha, beta=beta, axis=axis)
        self.alpha, self.beta, self.axis = alpha, beta, axis
