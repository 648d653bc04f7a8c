"""Correlation metrics (Keras 3's ``PearsonCorrelation`` and ``ConcordanceCorrelation``): the
running mean over samples of a correlation coefficient computed along ``axis`` of each."""
from minikeras.backend import epsilon
from minikeras.losses.base import squeeze_or_expand_to_same_rank, to_float_tensor, to_tensor
from minikeras.metrics.accuracy import BuiltinMeanMetric
from minikeras.metrics.base import Metric
from minikeras.ops.math import square
from minikeras.ops.reduce import reduce_mean, reduce_std, reduce_variance
from minikeras.tensor import to_array


def _prepare(y_true, y_pred):
    y_pred = to_float_tensor(y_pred)
    return squeeze_or_expand_to_same_rank(to_tensor(y_true, y_pred.dtype), y_pred)


def pearson_correlation(y_true, y_pred, axis=-1):
    """``mean(z(y_true) * z(y_pred), axis)`` with ``z`` the standardized values along ``axis``."""
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true = y_true - reduce_mean(y_true, axis=axis, keepdims=True)
    y_pred = y_pred - reduce_mean(y_pred, axis=axis, keepdims=True)
    y_true = y_true / reduce_std(y_true, axis=axis, keepdims=True)
    y_pred = y_pred / reduce_std(y_pred, axis=axis, keepdims=True)
    return reduce_mean(y_true * y_pred, axis=axis)


def concordance_correlation(y_true, y_pred, axis=-1):
    """Lin's concordance coefficient along ``axis``, as Keras 3 computes it:
    ``mean(2 * (y_true - mean(y_pred)) * (y_pred - mean(y_pred)) / (var(y_true) + var(y_pred) +
    (mean(y_true) - mean(y_pred))^2 + epsilon()))``."""
    y_true, y_pred = _prepare(y_true, y_pred)
    true_mean = reduce_mean(y_true, axis=axis, keepdims=True)
    pred_mean = reduce_mean(y_pred, axis=axis, keepdims=True)
    true_var = reduce_variance(y_true - true_mean, axis=axis, keepdims=True)
    pred_var = reduce_variance(y_pred - pred_mean, axis=axis, keepdims=True)
    covar = (y_true - pred_mean) * (y_pred - pred_mean)
    norm = true_var + pred_var + square(true_mean - pred_mean)
    return reduce_mean(2.0 * covar / (norm + epsilon()), axis=axis)


def _pearson(y_true, y_pred, axis=-1):
    return to_array(pearson_correlation(y_true, y_pred, axis))


def _concordance(y_true, y_pred, axis=-1):
    return to_array(concordance_correlation(y_true, y_pred, axis))


class _Correlation(BuiltinMeanMetric):
    def get_config(self):
        return {**Metric.get_config(self), "axis": self.axis}


class PearsonCorrelation(_Correlation):
    """The running mean of ``pearson_correlation``."""

    def __init__(self, name="pearson_correlation", dtype=None, axis=-1):
        super().__init__(_pearson, name=name, dtype=dtype, axis=axis)
        self.axis = axis


class ConcordanceCorrelation(_Correlation):
    """The running mean of ``concordance_correlation``."""

    def __init__(self, name="concordance_correlation", dtype=None, axis=-1):
        super().__init__(_concordance, name=name, dtype=dtype, axis=axis)
        self.axis = axis
