"""Accuracy metrics: per-sample match functions and their running-mean metric classes.

Each function follows Keras 3 exactly (shape handling, dtype casts, ties in top-k) and
returns a float Tensor with one value per sample (``accuracy`` and ``binary_accuracy``: per
element, which the running mean averages to one value per sample, so that 1-D labels count
each example rather than each batch).
"""
import jax.numpy as jnp

from minikeras.backend import floatx
from minikeras.metrics.base import MeanMetricWrapper, Metric, squeeze_or_expand_to_same_rank
from minikeras.tensor import Tensor, to_array


def _accuracy(y_true, y_pred):
    y_pred = to_array(y_pred)
    y_true = to_array(y_true).astype(y_pred.dtype)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    return (y_true == y_pred).astype(floatx())  # per element: Mean averages a sample's elements


def _binary_accuracy(y_true, y_pred, threshold=0.5):
    y_true, y_pred = to_array(y_true), to_array(y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    y_pred = (y_pred > jnp.asarray(threshold, y_pred.dtype)).astype(y_true.dtype)
    return (y_true == y_pred).astype(floatx())


def _categorical_accuracy(y_true, y_pred):
    y_true = jnp.argmax(to_array(y_true), axis=-1)
    y_pred = to_array(y_pred)
    original_shape = y_true.shape
    reshape_matches = y_true.ndim == y_pred.ndim
    if reshape_matches:
        y_true = jnp.squeeze(y_true, -1)
    y_pred = jnp.argmax(y_pred, axis=-1).astype(y_true.dtype)
    matches = (y_true == y_pred).astype(floatx())
    return jnp.reshape(matches, original_shape) if reshape_matches else matches


def _sparse_categorical_accuracy(y_true, y_pred):
    y_true, y_pred = to_array(y_true), to_array(y_pred)
    original_shape = y_true.shape
    # labels of shape (n, 1) are compared as (n,)
    reshape_matches = y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1
    if reshape_matches:
        y_true = jnp.squeeze(y_true, -1)
    y_pred = jnp.argmax(y_pred, axis=-1).astype(y_true.dtype)
    matches = (y_true == y_pred).astype(floatx())
    if reshape_matches:
        matches = jnp.reshape(matches, original_shape)
    if matches.ndim > 1 and matches.shape[-1] == 1:
        matches = jnp.squeeze(matches, -1)
    return matches


def _in_top_k(targets, predictions, k):
    """Whether each target's score is among the ``k`` largest of its row (ties count as in,
    as in ``tf.math.in_top_k``)."""
    at_label = jnp.take_along_axis(predictions, targets[..., None], axis=-1)
    at_label = jnp.where(jnp.isnan(at_label), -jnp.inf, at_label)
    rank = 1 + jnp.sum(predictions > at_label, axis=-1)
    return rank <= k


def _sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_true, y_pred = to_array(y_true), to_array(y_pred)
    original_shape = y_true.shape
    if y_pred.ndim > 2:
        y_pred = jnp.reshape(y_pred, (-1, y_pred.shape[-1]))
    reshape_matches = y_true.ndim > 1
    if reshape_matches:
        y_true = jnp.reshape(y_true, (-1,))
    matches = _in_top_k(y_true.astype("int32"), y_pred, k).astype(floatx())
    return jnp.reshape(matches, original_shape) if reshape_matches else matches


def _top_k_categorical_accuracy(y_true, y_pred, k=5):
    return _sparse_top_k_categorical_accuracy(jnp.argmax(to_array(y_true), axis=-1), y_pred, k)


def accuracy(y_true, y_pred):
    """1.0 where ``y_pred`` equals ``y_true`` exactly, else 0.0, element by element."""
    return Tensor(_accuracy(y_true, y_pred))


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """1.0 where ``y_pred > threshold`` equals the 0/1 label, else 0.0, element by element."""
    return Tensor(_binary_accuracy(y_true, y_pred, threshold))


def categorical_accuracy(y_true, y_pred):
    """1.0 where ``argmax(y_pred)`` equals ``argmax(y_true)`` (one-hot labels), else 0.0."""
    return Tensor(_categorical_accuracy(y_true, y_pred))


def sparse_categorical_accuracy(y_true, y_pred):
    """1.0 where ``argmax(y_pred)`` equals the integer (or float) label, else 0.0; labels
    of shape ``(n,)`` or ``(n, 1)``."""
    return Tensor(_sparse_categorical_accuracy(y_true, y_pred))


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1.0 where the one-hot label's class is among the ``k`` highest scores."""
    return Tensor(_top_k_categorical_accuracy(y_true, y_pred, k))


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1.0 where the integer label is among the ``k`` highest scores."""
    return Tensor(_sparse_top_k_categorical_accuracy(y_true, y_pred, k))


class BuiltinMeanMetric(MeanMetricWrapper):
    """A MeanMetricWrapper over one of our own functions of jax arrays (compiled with the
    update); its config is its arguments."""

    _direction = "up"
    _pure_jax_fn = True

    def get_config(self):
        return {**Metric.get_config(self), **self._fn_kwargs}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Accuracy(BuiltinMeanMetric):
    """How often predictions equal labels exactly.

    >>> m = mk.metrics.Accuracy()
    >>> m.update_state([[1], [2], [3], [4]], [[0], [2], [3], [4]])
    >>> float(m.result())
    0.75
    """

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(_accuracy, name=name, dtype=dtype)


class BinaryAccuracy(BuiltinMeanMetric):
    """How often ``y_pred > threshold`` matches the binary label."""

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        if threshold is not None and (threshold <= 0 or threshold >= 1):
            raise ValueError("Invalid value for argument `threshold`. Expected a value in interval (0, 1). "
                             f"Received: threshold={threshold}")
        super().__init__(_binary_accuracy, name=name, dtype=dtype, threshold=threshold)
        self.threshold = threshold


class CategoricalAccuracy(BuiltinMeanMetric):
    """How often ``argmax(y_pred)`` matches one-hot labels (logits work as well as
    probabilities)."""

    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(_categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(BuiltinMeanMetric):
    """How often ``argmax(y_pred)`` matches integer labels of shape ``(n,)`` or ``(n, 1)``.

    >>> m = mk.metrics.SparseCategoricalAccuracy()
    >>> m.update_state([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]])
    >>> float(m.result())
    0.5
    """

    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(_sparse_categorical_accuracy, name=name, dtype=dtype)


class TopKCategoricalAccuracy(BuiltinMeanMetric):
    """How often the one-hot label's class is among the ``k`` highest predictions."""

    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype=None):
        super().__init__(_top_k_categorical_accuracy, name=name, dtype=dtype, k=k)
        self.k = k


class SparseTopKCategoricalAccuracy(BuiltinMeanMetric):
    """How often the integer label is among the ``k`` highest predictions."""

    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy", dtype=None):
        super().__init__(_sparse_top_k_categorical_accuracy, name=name, dtype=dtype, k=k)
        self.k = k
