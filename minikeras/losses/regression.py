"""Regression losses: squared, absolute and percentage error, Huber, and KL divergence.

Each function returns one loss per sample, the mean (or sum) over the last axis, as Keras's.
"""
from minikeras.losses.base import (
    LossFunctionWrapper,
    check_compatible,
    squeeze_or_expand_to_same_rank,
    to_float_tensor,
    to_tensor,
)
from minikeras.ops.math import abs as _abs, log, maximum, minimum, square, where
from minikeras.ops.reduce import reduce_mean, reduce_sum

EPSILON = 1e-7  # Keras's backend.epsilon()


def _prepare(name, y_true, y_pred):
    y_pred = to_float_tensor(y_pred)
    y_true = to_tensor(y_true, y_pred.dtype)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    check_compatible(name, y_true, y_pred)
    return y_true, y_pred


def mean_squared_error(y_true, y_pred):
    """``mean(square(y_true - y_pred), axis=-1)``."""
    y_true, y_pred = _prepare("mean_squared_error", y_true, y_pred)
    return reduce_mean(square(y_true - y_pred), axis=-1)


def mean_absolute_error(y_true, y_pred):
    """``mean(abs(y_true - y_pred), axis=-1)``."""
    y_true, y_pred = _prepare("mean_absolute_error", y_true, y_pred)
    return reduce_mean(_abs(y_true - y_pred), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    """``100 * mean(abs((y_true - y_pred) / max(abs(y_true), 1e-7)), axis=-1)``."""
    y_true, y_pred = _prepare("mean_absolute_percentage_error", y_true, y_pred)
    diff = _abs((y_true - y_pred) / maximum(_abs(y_true), EPSILON))
    return 100.0 * reduce_mean(diff, axis=-1)


def huber(y_true, y_pred, delta=1.0):
    """Quadratic for small errors, linear for large: per element, with ``e = y_pred - y_true``,
    ``0.5 * e^2`` if ``|e| <= delta`` else ``delta * |e| - 0.5 * delta^2``; mean over the last axis."""
    y_true, y_pred = _prepare("huber", y_true, y_pred)
    delta = float(delta)
    error = y_pred - y_true
    abs_error = _abs(error)
    return reduce_mean(where(abs_error <= delta, 0.5 * square(error), delta * abs_error - 0.5 * delta * delta),
                       axis=-1)


def kl_divergence(y_true, y_pred):
    """``sum(y_true * log(y_true / y_pred), axis=-1)``, both clipped to [1e-7, 1]."""
    y_true, y_pred = _prepare("kl_divergence", y_true, y_pred)
    y_true = minimum(maximum(y_true, EPSILON), 1.0)
    y_pred = minimum(maximum(y_pred, EPSILON), 1.0)
    return reduce_sum(y_true * log(y_true / y_pred), axis=-1)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
kld = KLD = kullback_leibler_divergence = kl_divergence


class MeanSquaredError(LossFunctionWrapper):
    """Mean of squared errors: ``mean(square(y_true - y_pred))``."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error", dtype=None):
        super().__init__(mean_squared_error, name=name, reduction=reduction, dtype=dtype)


class MeanAbsoluteError(LossFunctionWrapper):
    """Mean of absolute errors: ``mean(abs(y_true - y_pred))``."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error", dtype=None):
        super().__init__(mean_absolute_error, name=name, reduction=reduction, dtype=dtype)


class MeanAbsolutePercentageError(LossFunctionWrapper):
    """``100 * mean(abs((y_true - y_pred) / y_true))`` (denominator at least 1e-7)."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_percentage_error", dtype=None):
        super().__init__(mean_absolute_percentage_error, name=name, reduction=reduction, dtype=dtype)


class Huber(LossFunctionWrapper):
    """Huber loss with threshold ``delta`` (see ``huber``)."""

    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss", dtype=None):
        super().__init__(huber, name=name, reduction=reduction, dtype=dtype, delta=delta)
        self.delta = delta


class KLDivergence(LossFunctionWrapper):
    """Kullback-Leibler divergence ``sum(y_true * log(y_true / y_pred))``."""

    def __init__(self, reduction="sum_over_batch_size", name="kl_divergence", dtype=None):
        super().__init__(kl_divergence, name=name, reduction=reduction, dtype=dtype)


__all__ = ["mean_squared_error", "mean_absolute_error", "mean_absolute_percentage_error", "huber",
           "kl_divergence", "MeanSquaredError", "MeanAbsoluteError", "MeanAbsolutePercentageError", "Huber",
           "KLDivergence"]
