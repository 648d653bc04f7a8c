"""Metrics that are running means of a Keras loss function, as Keras 3 defines them: hinge,
squared and categorical hinge, percentage and squared logarithmic error, log-cosh error, KL
divergence, Poisson, cosine similarity (positive: 1 for the same direction). Each update runs
the loss function of ``minikeras.losses`` on jax arrays, compiled with the update."""
import functools

from minikeras import losses
from minikeras.metrics.accuracy import BuiltinMeanMetric
from minikeras.metrics.base import Metric
from minikeras.tensor import to_array


def _on_arrays(loss_fn):
    """``loss_fn`` as a function of jax arrays returning an array (a BuiltinMeanMetric's ``fn``)."""
    @functools.wraps(loss_fn)
    def fn(y_true, y_pred, **kwargs):
        return to_array(loss_fn(y_true, y_pred, **kwargs))

    return fn


def cosine_similarity(y_true, y_pred, axis=-1):
    """``sum(l2_normalize(y_true) * l2_normalize(y_pred), axis)``: 1 for the same direction."""
    return -losses.cosine_similarity(y_true, y_pred, axis=axis)


_hinge, _squared_hinge, _categorical_hinge = map(_on_arrays, (losses.hinge, losses.squared_hinge,
                                                              losses.categorical_hinge))
_mape, _msle, _log_cosh = map(_on_arrays, (losses.mean_absolute_percentage_error,
                                           losses.mean_squared_logarithmic_error, losses.log_cosh))
_kl_divergence, _poisson, _cosine = map(_on_arrays, (losses.kl_divergence, losses.poisson, cosine_similarity))


class _NameAndDtypeConfig(BuiltinMeanMetric):
    """Keras 3's config of these metrics: only ``name`` and ``dtype``."""

    def get_config(self):
        return Metric.get_config(self)


class _LowerIsBetter(_NameAndDtypeConfig):
    _direction = "down"


class Hinge(_LowerIsBetter):
    """The running mean of ``hinge`` (labels -1/1, or 0/1 converted)."""

    def __init__(self, name="hinge", dtype=None):
        super().__init__(_hinge, name=name, dtype=dtype)


class SquaredHinge(_LowerIsBetter):
    """The running mean of ``squared_hinge``."""

    def __init__(self, name="squared_hinge", dtype=None):
        super().__init__(_squared_hinge, name=name, dtype=dtype)


class CategoricalHinge(_LowerIsBetter):
    """The running mean of ``categorical_hinge``."""

    def __init__(self, name="categorical_hinge", dtype=None):
        super().__init__(_categorical_hinge, name=name, dtype=dtype)


class MeanAbsolutePercentageError(_LowerIsBetter):
    """The running mean of ``100 * mean(abs((y_true - y_pred) / y_true))``."""

    def __init__(self, name="mean_absolute_percentage_error", dtype=None):
        super().__init__(_mape, name=name, dtype=dtype)


class MeanSquaredLogarithmicError(_LowerIsBetter):
    """The running mean of ``mean(square(log(y_pred + 1) - log(y_true + 1)))``."""

    def __init__(self, name="mean_squared_logarithmic_error", dtype=None):
        super().__init__(_msle, name=name, dtype=dtype)


class LogCoshError(_LowerIsBetter):
    """The running mean of ``mean(log(cosh(y_pred - y_true)))`` (named 'logcosh', as Keras's)."""

    def __init__(self, name="logcosh", dtype=None):
        super().__init__(_log_cosh, name=name, dtype=dtype)


class KLDivergence(_NameAndDtypeConfig):
    """The running mean of ``sum(y_true * log(y_true / y_pred))``."""

    def __init__(self, name="kl_divergence", dtype=None):
        super().__init__(_kl_divergence, name=name, dtype=dtype)


class Poisson(_NameAndDtypeConfig):
    """The running mean of ``mean(y_pred - y_true * log(y_pred + epsilon()))`` (``keras.config.epsilon()``)."""

    def __init__(self, name="poisson", dtype=None):
        super().__init__(_poisson, name=name, dtype=dtype)


class CosineSimilarity(_NameAndDtypeConfig):
    """The running mean of the cosine similarity along ``axis`` (as Keras 3's, its config leaves
    ``axis`` out)."""

    def __init__(self, name="cosine_similarity", dtype=None, axis=-1):
        super().__init__(_cosine, name=name, dtype=dtype, axis=axis)


hinge, squared_hinge, categorical_hinge = losses.hinge, losses.squared_hinge, losses.categorical_hinge
mean_absolute_percentage_error = losses.mean_absolute_percentage_error
mean_squared_logarithmic_error = losses.mean_squared_logarithmic_error
log_cosh, kl_divergence, poisson, huber = losses.log_cosh, losses.kl_divergence, losses.poisson, losses.huber
binary_focal_crossentropy = losses.binary_focal_crossentropy
categorical_focal_crossentropy = losses.categorical_focal_crossentropy
