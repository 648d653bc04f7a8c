"""R2Score: the coefficient of determination, ``1 - SS_res / SS_tot`` per output column,
accumulated over batches (Keras 3's ``keras.metrics.R2Score``)."""
import functools
import warnings

import jax
import jax.numpy as jnp

from minikeras.metrics.base import Metric, squeeze_or_expand_to_same_rank
from minikeras.tensor import Tensor, to_array


class R2Score(Metric):
    """How much of the labels' variance the predictions explain, for inputs of shape (n, outputs).

    Args:
      class_aggregation: 'uniform_average' (the mean over outputs), 'variance_weighted_average'
        (weighted by each output's variance) or None (one score per output).
      num_regressors: the number of independent variables, for the adjusted R2 (0: plain R2).

    >>> m = mk.metrics.R2Score()
    >>> m.update_state([[1.0], [4.0], [3.0]], [[2.0], [4.0], [4.0]])
    >>> round(float(m.result()), 4)
    0.5714
    """

    _direction = "up"

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        valid = (None, "uniform_average", "variance_weighted_average")
        if class_aggregation not in valid:
            raise ValueError(f"Invalid value for argument `class_aggregation`. Expected one of {valid}. "
                             f"Received: class_aggregation={class_aggregation}")
        if num_regressors < 0:
            raise ValueError("Invalid value for argument `num_regressors`. Expected a value >= 0. "
                             f"Received: num_regressors={num_regressors}")
        self.class_aggregation = class_aggregation
        self.num_regressors = num_regressors
        self.num_samples = self.add_variable((), name="num_samples")
        self._built = False

    def _build(self, y_true_shape, y_pred_shape):
        if len(y_pred_shape) != 2 or len(y_true_shape) != 2:
            raise ValueError("R2Score expects 2D inputs with shape (batch_size, output_dim). Received input shapes: "
                             f"y_pred.shape={tuple(y_pred_shape)} and y_true.shape={tuple(y_true_shape)}.")
        shape = (y_pred_shape[-1],)
        self.squared_sum = self.add_variable(shape, name="squared_sum")
        self.sum = self.add_variable(shape, name="sum")
        self.total_mse = self.add_variable(shape, name="residual")
        self.count = self.add_variable(shape, name="count")
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds this batch's sums of labels, squared labels and squared residuals per column."""
        y_true = to_array(y_true, self.dtype)
        y_pred = to_array(y_pred, self.dtype)
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        if not self._built:
            self._build(y_true.shape, y_pred.shape)
        weight = None if sample_weight is None else to_array(sample_weight, self.dtype)
        increments = _increments(y_true, y_pred, weight)
        for variable, increment in zip((self.sum, self.squared_sum, self.total_mse, self.count, self.num_samples),
                                       increments):
            variable.assign_add(increment)

    def result(self):
        if not self._built:
            return Tensor(jnp.zeros((), self.dtype))
        score = _score(self.sum._read_array(), self.squared_sum._read_array(), self.total_mse._read_array(),
                       self.count._read_array(), aggregation=self.class_aggregation)
        if self.num_regressors != 0:
            score = self._adjusted(score)
        return Tensor(score)

    def _adjusted(self, score):
        """The adjusted R2, or the plain one (with Keras's warning) when there are too few samples."""
        n = self.num_samples._read_array()
        p = float(self.num_regressors)
        too_few = n - 1 <= p
        if not isinstance(too_few, jax.core.Tracer) and bool(too_few):
            warnings.warn("More independent predictors than datapoints in adjusted R2 score. Falling back to "
                          "standard R2 score." if p > n - 1 else
                          "Division by zero in Adjusted R2 score. Falling back to standard R2 score.", stacklevel=3)
        adjusted = 1.0 - (1.0 - score) * (n - 1.0) / jnp.where(too_few, 1.0, n - p - 1.0)
        return jnp.where(too_few, score, adjusted)

    def get_config(self):
        return {**super().get_config(), "class_aggregation": self.class_aggregation,
                "num_regressors": self.num_regressors}


@jax.jit
def _increments(y_true, y_pred, weight):
    """This batch's per-column (sum, sum of squares, squared residuals, weight) and element count."""
    weight = jnp.ones((), y_true.dtype) if weight is None else weight
    if weight.ndim == 1:
        weight = jnp.expand_dims(weight, 1)
    weight = jnp.broadcast_to(weight, y_true.shape)
    weighted = y_true * weight
    return (jnp.sum(weighted, axis=0), jnp.sum(y_true * weighted, axis=0),
            jnp.sum((y_true - y_pred) ** 2 * weight, axis=0), jnp.sum(weight, axis=0),
            jnp.asarray(y_true.size, y_true.dtype))


@functools.partial(jax.jit, static_argnames="aggregation")
def _score(total_sum, squared_sum, total_mse, count, *, aggregation):
    mean = total_sum / count
    total = squared_sum - total_sum * mean
    raw = 1 - total_mse / total
    raw = jnp.where(jnp.isinf(raw), 0.0, raw)
    if aggregation == "uniform_average":
        return jnp.mean(raw)
    if aggregation == "variance_weighted_average":
        return jnp.sum(total * raw) / jnp.sum(total)
    return raw
