"""Regression losses: squared, absolute, percentage and squared logarithmic error, Huber, log-cosh,
Poisson, cosine similarity and KL divergence.

Each function returns one loss per sample, the mean (or sum) over the last axis, as Keras's.
"""
from minikeras.backend import epsilon
from minikeras.losses.base import (
    LossFunctionWrapper,
    check_compatible,
    squeeze_or_expand_to_same_rank,
    to_float_tensor,
    to_tensor,
)
from minikeras.ops.math import abs as _abs, log, maximum, minimum, rsqrt, softplus, square, where
from minikeras.ops.reduce import reduce_mean, reduce_sum


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
    """``100 * mean(abs((y_true - y_pred) / max(abs(y_true), epsilon())), axis=-1)``."""
    y_true, y_pred = _prepare("mean_absolute_percentage_error", y_true, y_pred)
    diff = _abs((y_true - y_pred) / maximum(_abs(y_true), epsilon()))
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
    """``sum(y_true * log(y_true / y_pred), axis=-1)``, both clipped to [epsilon(), 1]."""
    y_true, y_pred = _prepare("kl_divergence", y_true, y_pred)
    eps = epsilon()
    y_true = minimum(maximum(y_true, eps), 1.0)
    y_pred = minimum(maximum(y_pred, eps), 1.0)
    return reduce_sum(y_true * log(y_true / y_pred), axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    """``mean(square(log(y_pred + 1) - log(y_true + 1)), axis=-1)``, both at least epsilon()."""
    y_true, y_pred = _prepare("mean_squared_logarithmic_error", y_true, y_pred)
    eps = epsilon()
    first_log = log(maximum(y_pred, eps) + 1.0)
    second_log = log(maximum(y_true, eps) + 1.0)
    return reduce_mean(square(first_log - second_log), axis=-1)


def log_cosh(y_true, y_pred):
    """``mean(log(cosh(y_pred - y_true)), axis=-1)``, computed as ``x + softplus(-2x) - log(2)``
    so that it does not overflow for large errors."""
    y_true, y_pred = _prepare("log_cosh", y_true, y_pred)
    error = y_pred - y_true
    return reduce_mean(error + softplus(error * -2.0) - 0.6931471805599453, axis=-1)


def poisson(y_true, y_pred):
    """``mean(y_pred - y_true * log(y_pred + epsilon()), axis=-1)``."""
    y_pred = to_float_tensor(y_pred)
    y_true = to_tensor(y_true, y_pred.dtype)
    return reduce_mean(y_pred - y_true * log(y_pred + epsilon()), axis=-1)


def l2_normalize(x, axis=-1):
    """``x * minimum(rsqrt(sum(x^2, axis)), 1 / epsilon())``: Keras's ``ops.normalize`` (a zero vector stays zero)."""
    return x * minimum(rsqrt(reduce_sum(square(x), axis=axis, keepdims=True)), 1.0 / epsilon())


def cosine_similarity(y_true, y_pred, axis=-1):
    """``-sum(l2_normalize(y_true) * l2_normalize(y_pred), axis)``: -1 for the same direction, 0
    for orthogonal vectors (and for a zero vector), 1 for opposite ones."""
    y_true, y_pred = _prepare("cosine_similarity", y_true, y_pred)
    return -reduce_sum(l2_normalize(y_true, axis) * l2_normalize(y_pred, axis), axis=axis)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
kld = KLD = kullback_leibler_divergence = kl_divergence
msle = MSLE = mean_squared_logarithmic_error


class MeanSquaredError(LossFunctionWrapper):
    """Mean of squared errors: ``mean(square(y_true - y_pred))``."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error", dtype=None):
        super().__init__(mean_squared_error, name=name, reduction=reduction, dtype=dtype)


class MeanAbsoluteError(LossFunctionWrapper):
    """Mean of absolute errors: ``mean(abs(y_true - y_pred))``."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error", dtype=None):
        super().__init__(mean_absolute_error, name=name, reduction=reduction, dtype=dtype)


class MeanAbsolutePercentageError(LossFunctionWrapper):
    """``100 * mean(abs((y_true - y_pred) / y_true))`` (denominator at least epsilon())."""

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


class MeanSquaredLogarithmicError(LossFunctionWrapper):
    """``mean(square(log(y_pred + 1) - log(y_true + 1)))``."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_logarithmic_error", dtype=None):
        super().__init__(mean_squared_logarithmic_error, name=name, reduction=reduction, dtype=dtype)


class LogCosh(LossFunctionWrapper):
    """``mean(log(cosh(y_pred - y_true)))``."""

    def __init__(self, reduction="sum_over_batch_size", name="log_cosh", dtype=None):
        super().__init__(log_cosh, name=name, reduction=reduction, dtype=dtype)


class Poisson(LossFunctionWrapper):
    """``mean(y_pred - y_true * log(y_pred + epsilon()))``."""

    def __init__(self, reduction="sum_over_batch_size", name="poisson", dtype=None):
        super().__init__(poisson, name=name, reduction=reduction, dtype=dtype)


class CosineSimilarity(LossFunctionWrapper):
    """The negated cosine similarity along ``axis`` (see ``cosine_similarity``). As Keras 3's, its
    config leaves ``axis`` out."""

    def __init__(self, axis=-1, reduction="sum_over_batch_size", name="cosine_similarity", dtype=None):
        super().__init__(cosine_similarity, name=name, reduction=reduction, dtype=dtype, axis=axis)

    def get_config(self):
        config = super().get_config()
        config.pop("axis", None)
        return config


__all__ = ["mean_squared_error", "mean_absolute_error", "mean_absolute_percentage_error", "huber",
           "kl_divergence", "MeanSquaredError", "MeanAbsoluteError", "MeanAbsolutePercentageError", "Huber",
           "KLDivergence", "mean_squared_logarithmic_error", "log_cosh", "poisson", "cosine_similarity",
           "MeanSquaredLogarithmicError", "LogCosh", "Poisson", "CosineSimilarity"]
