"""Error and cross-entropy metrics: running means of per-sample losses (Keras 3 formulas)."""
import jax
import jax.numpy as jnp

from minikeras.backend import epsilon
from minikeras.metrics.accuracy import BuiltinMeanMetric
from minikeras.metrics.base import Mean, squeeze_or_expand_to_same_rank
from minikeras.tensor import Tensor, to_array


def _pair(y_true, y_pred):
    y_pred = to_array(y_pred)
    y_true = to_array(y_true).astype(y_pred.dtype)
    return squeeze_or_expand_to_same_rank(y_true, y_pred)


def _mean_squared_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return jnp.mean(jnp.square(y_true - y_pred), axis=-1)


def _mean_absolute_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return jnp.mean(jnp.abs(y_true - y_pred), axis=-1)


def _binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0):
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        losses = -y_true * jax.nn.log_sigmoid(y_pred) - (1.0 - y_true) * jax.nn.log_sigmoid(-y_pred)
    else:
        y_pred = jnp.clip(y_pred, epsilon(), 1.0 - epsilon())
        losses = -(y_true * jnp.log(y_pred) + (1.0 - y_true) * jnp.log(1.0 - y_pred))
    return jnp.mean(losses, axis=-1)


def _log_probabilities(y_pred, from_logits, axis):
    if from_logits:
        return jax.nn.log_softmax(y_pred, axis=axis)
    y_pred = y_pred / jnp.sum(y_pred, axis=axis, keepdims=True)
    return jnp.log(jnp.clip(y_pred, epsilon(), 1.0 - epsilon()))


def _categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_pred = to_array(y_pred)
    y_true = to_array(y_true).astype(y_pred.dtype)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_true.shape[-1]
    return -jnp.sum(y_true * _log_probabilities(y_pred, from_logits, axis), axis=axis)


def _sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    y_pred = to_array(y_pred)
    y_true = to_array(y_true).astype("int32")
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = jnp.squeeze(y_true, -1)
    one_hot = jax.nn.one_hot(y_true, y_pred.shape[axis], axis=axis, dtype=y_pred.dtype)
    return -jnp.sum(one_hot * _log_probabilities(y_pred, from_logits, axis), axis=axis)


def mean_squared_error(y_true, y_pred):
    """``mean(square(y_true - y_pred), axis=-1)``."""
    return Tensor(_mean_squared_error(y_true, y_pred))


def mean_absolute_error(y_true, y_pred):
    """``mean(abs(y_true - y_pred), axis=-1)``."""
    return Tensor(_mean_absolute_error(y_true, y_pred))


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0):
    """Per-sample binary cross-entropy, averaged over the last axis."""
    return Tensor(_binary_crossentropy(y_true, y_pred, from_logits, label_smoothing))


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Per-sample cross-entropy against one-hot labels."""
    return Tensor(_categorical_crossentropy(y_true, y_pred, from_logits, label_smoothing, axis))


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    """Per-sample cross-entropy against integer labels."""
    return Tensor(_sparse_categorical_crossentropy(y_true, y_pred, from_logits, axis))


class _LowerIsBetter(BuiltinMeanMetric):
    _direction = "down"


class MeanSquaredError(_LowerIsBetter):
    """The running mean of ``mean(square(y_true - y_pred), axis=-1)``."""

    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(_mean_squared_error, name=name, dtype=dtype)


class MeanAbsoluteError(_LowerIsBetter):
    """The running mean of ``mean(abs(y_true - y_pred), axis=-1)``."""

    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(_mean_absolute_error, name=name, dtype=dtype)


class RootMeanSquaredError(Mean):
    """``sqrt`` of the running mean of squared errors (over all elements seen)."""

    _direction = "down"

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = to_array(y_true, self.dtype)
        y_pred = to_array(y_pred, self.dtype)
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        return super().update_state(jnp.square(y_pred - y_true), sample_weight=sample_weight)

    def result(self):
        return Tensor(jnp.sqrt(super().result()._value))


class BinaryCrossentropy(_LowerIsBetter):
    """The running mean of the binary cross-entropy."""

    def __init__(self, name="binary_crossentropy", dtype=None, from_logits=False, label_smoothing=0):
        super().__init__(_binary_crossentropy, name=name, dtype=dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing)


class CategoricalCrossentropy(_LowerIsBetter):
    """The running mean of the cross-entropy against one-hot labels."""

    def __init__(self, name="categorical_crossentropy", dtype=None, from_logits=False, label_smoothing=0,
                 axis=-1):
        super().__init__(_categorical_crossentropy, name=name, dtype=dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)


class SparseCategoricalCrossentropy(_LowerIsBetter):
    """The running mean of the cross-entropy against integer labels."""

    def __init__(self, name="sparse_categorical_crossentropy", dtype=None, from_logits=False, axis=-1):
        super().__init__(_sparse_categorical_crossentropy, name=name, dtype=dtype, from_logits=from_logits,
                         axis=axis)
