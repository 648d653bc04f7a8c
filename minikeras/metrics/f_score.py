"""F-scores (Keras 3's ``FBetaScore`` and ``F1Score``): per-class true/false positives and false
negatives of thresholded predictions, combined as ``(1 + beta^2) P R / (beta^2 P + R)``."""
import functools

import jax
import jax.numpy as jnp

from minikeras.backend import epsilon
from minikeras.metrics.base import Metric
from minikeras.tensor import Tensor, to_array


class FBetaScore(Metric):
    """The F-beta score of multi-class or multi-label predictions of shape (n, classes).

    Args:
      average: None (one score per class), 'micro' (counts pooled over classes), 'macro' (the
        mean of the classes' scores) or 'weighted' (weighted by each class's number of labels).
      beta: a float > 0; recall is ``beta`` times as important as precision.
      threshold: a float in (0, 1]: predictions above it are positive; None: each row's largest
        prediction is positive.

    >>> m = mk.metrics.FBetaScore(beta=2.0, threshold=0.5)
    >>> m.update_state([[1, 0], [0, 1]], [[0.9, 0.2], [0.6, 0.8]])
    >>> [round(v, 4) for v in m.result().numpy().tolist()]
    [0.8333, 1.0]
    """

    _direction = "up"

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if average not in (None, "micro", "macro", "weighted"):
            raise ValueError("Invalid `average` argument value. Expected one of: {None, 'micro', 'macro', 'weighted'}. "
                             f"Received: average={average}")
        if not isinstance(beta, float):
            raise ValueError(f"Invalid `beta` argument value. It should be a Python float. Received: beta={beta} of "
                             f"type '{type(beta)}'")
        if beta <= 0.0:
            raise ValueError(f"Invalid `beta` argument value. It should be > 0. Received: beta={beta}")
        if threshold is not None:
            if not isinstance(threshold, float):
                raise ValueError("Invalid `threshold` argument value. It should be a Python float. Received: "
                                 f"threshold={threshold} of type '{type(threshold)}'")
            if threshold > 1.0 or threshold <= 0.0:
                raise ValueError("Invalid `threshold` argument value. It should verify 0 < threshold <= 1. "
                                 f"Received: threshold={threshold}")
        self.average = average
        self.beta = beta
        self.threshold = threshold
        self.axis = None if average == "micro" else 0
        self._built = False

    def _build(self, y_true_shape, y_pred_shape):
        if len(y_pred_shape) != 2 or len(y_true_shape) != 2:
            raise ValueError(f"{type(self).__name__} expects 2D inputs with shape (batch_size, output_dim). Received "
                             f"input shapes: y_pred.shape={tuple(y_pred_shape)} and "
                             f"y_true.shape={tuple(y_true_shape)}.")
        shape = () if self.average == "micro" else (y_pred_shape[-1],)
        self.true_positives = self.add_variable(shape, name="true_positives")
        self.false_positives = self.add_variable(shape, name="false_positives")
        self.false_negatives = self.add_variable(shape, name="false_negatives")
        self.intermediate_weights = self.add_variable(shape, name="intermediate_weights")
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds this batch's (weighted) counts, per class unless ``average='micro'``."""
        y_true = to_array(y_true, self.dtype)
        y_pred = to_array(y_pred, self.dtype)
        if not self._built:
            self._build(y_true.shape, y_pred.shape)
        weight = None if sample_weight is None else to_array(sample_weight, self.dtype)
        increments = _increments(y_true, y_pred, weight, threshold=self.threshold, axis=self.axis)
        for variable, increment in zip((self.true_positives, self.false_positives, self.false_negatives,
                                        self.intermediate_weights), increments):
            variable.assign_add(increment)

    def result(self):
        if not self._built:
            return Tensor(jnp.zeros((), self.dtype))
        counts = [v._read_array() for v in (self.true_positives, self.false_positives, self.false_negatives,
                                            self.intermediate_weights)]
        return Tensor(_score(*counts, beta=self.beta, average=self.average, fuzz=epsilon()))

    def reset_state(self):
        if self._built:
            super().reset_state()

    def get_config(self):
        return {**super().get_config(), "average": self.average, "beta": self.beta, "threshold": self.threshold}


class F1Score(FBetaScore):
    """The harmonic mean of precision and recall, ``2 P R / (P + R)`` (``FBetaScore`` with beta 1).

    >>> m = mk.metrics.F1Score(threshold=0.5)
    >>> m.update_state([[1, 0], [0, 1]], [[0.9, 0.2], [0.6, 0.8]])
    >>> [round(v, 4) for v in m.result().numpy().tolist()]
    [0.6667, 1.0]
    """

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)

    def get_config(self):
        config = super().get_config()
        del config["beta"]
        return config


@functools.partial(jax.jit, static_argnames=("threshold", "axis"))
def _increments(y_true, y_pred, weight, *, threshold, axis):
    """This batch's (true positives, false positives, false negatives, label counts)."""
    if threshold is None:
        # each row's maximum is positive; a row of zeros stays all negative
        y_pred = jnp.logical_and(y_pred >= jnp.max(y_pred, axis=-1, keepdims=True), jnp.abs(y_pred) > 1e-9)
    else:
        y_pred = y_pred > threshold
    y_pred = y_pred.astype(y_true.dtype)

    def weighted_sum(value):
        if weight is not None:
            value = value * jnp.expand_dims(weight, 1)
        return jnp.sum(value, axis=axis)

    return (weighted_sum(y_pred * y_true), weighted_sum(y_pred * (1 - y_true)), weighted_sum((1 - y_pred) * y_true),
            weighted_sum(y_true))


@functools.partial(jax.jit, static_argnames=("beta", "average", "fuzz"))
def _score(tp, fp, fn, label_counts, *, beta, average, fuzz):
    precision = tp / (tp + fp + fuzz)
    recall = tp / (tp + fn + fuzz)
    score = precision * recall / (beta ** 2 * precision + recall + fuzz) * (1 + beta ** 2)
    if average == "weighted":
        return jnp.sum(score * label_counts / (jnp.sum(label_counts) + fuzz))
    if average is not None:
        return jnp.mean(score)
    return score
