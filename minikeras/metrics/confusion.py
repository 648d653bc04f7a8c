"""Metrics counted from a confusion matrix at thresholds (Keras 3's): TruePositives,
FalsePositives, TrueNegatives, FalseNegatives, Precision, Recall, and the "X at a given Y"
family (SensitivityAtSpecificity, SpecificityAtSensitivity, PrecisionAtRecall,
RecallAtPrecision).

State Variables, names and order are Keras 3's (``accumulator``; ``true_positives``,
``false_positives``, ...), one entry per threshold.
"""
import functools

import jax
import jax.numpy as jnp

from minikeras.metrics import confusion_update
from minikeras.metrics.base import Metric
from minikeras.tensor import Tensor

_NAMES = {"tp": "true_positives", "fp": "false_positives", "tn": "true_negatives", "fn": "false_negatives"}


def divide_no_nan(x, y):
    """``x / y``, 0 where ``y`` is 0."""
    return jnp.where(y == 0, jnp.zeros_like(x), x / jnp.where(y == 0, jnp.ones_like(y), y))


class _CountsMetric(Metric):
    """A metric whose state is confusion-matrix counts at ``self.thresholds``: subclasses call
    ``_add_counts`` (or set ``_count_keys`` and the Variables) and may set ``top_k``, ``class_id``."""

    _direction = "up"
    _key = None  # the one count of TruePositives & co., held in `accumulator`
    top_k = None
    class_id = None

    def _add_counts(self, keys, shape):
        self._count_keys = tuple(keys)
        for key in keys:
            setattr(self, _NAMES[key], self.add_variable(shape, name=_NAMES[key]))

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds this batch's (weighted) counts at each threshold."""
        increments = confusion_update.confusion_increments(
            y_true, y_pred, sample_weight, thresholds=self.thresholds, keys=self._count_keys, top_k=self.top_k,
            class_id=self.class_id, evenly=self._thresholds_distributed_evenly, dtype=self.dtype)
        for key in self._count_keys:
            self._variable(key).assign_add(increments[key])

    def _variable(self, key):
        return self.accumulator if key == self._key else getattr(self, _NAMES[key])

    def _value(self, key):
        return self._variable(key)._read_array()


class _ConfusionMatrixConditionCount(_CountsMetric):
    """One count (``accumulator``) at each threshold; a scalar result for one threshold."""

    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.thresholds = confusion_update.parse_thresholds(thresholds, 0.5)
        self._thresholds_distributed_evenly = confusion_update.evenly_distributed(self.thresholds)
        self.accumulator = self.add_variable((len(self.thresholds),), name="accumulator")
        self._count_keys = (self._key,)

    def result(self):
        value = self.accumulator._read_array()
        return Tensor(value[0] if len(self.thresholds) == 1 else value)

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds}


class TruePositives(_ConfusionMatrixConditionCount):
    """The (weighted) number of true positives: label non-zero, ``y_pred > threshold``.

    >>> m = mk.metrics.TruePositives()
    >>> m.update_state([0, 1, 1, 1], [1, 0, 1, 1])
    >>> float(m.result())
    2.0
    """

    _key = "tp"


class FalsePositives(_ConfusionMatrixConditionCount):
    """The (weighted) number of false positives: label 0, ``y_pred > threshold``."""

    _key = "fp"


class TrueNegatives(_ConfusionMatrixConditionCount):
    """The (weighted) number of true negatives: label 0, ``y_pred <= threshold``."""

    _key = "tn"


class FalseNegatives(_ConfusionMatrixConditionCount):
    """The (weighted) number of false negatives: label non-zero, ``y_pred <= threshold``."""

    _key = "fn"


class _PrecisionOrRecall(_CountsMetric):
    _second = None  # 'fp' for precision, 'fn' for recall

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.top_k = top_k
        self.class_id = class_id
        default = 0.5 if top_k is None else confusion_update.NEG_INF
        self.thresholds = confusion_update.parse_thresholds(thresholds, default)
        self._thresholds_distributed_evenly = confusion_update.evenly_distributed(self.thresholds)
        self._add_counts(("tp", self._second), (len(self.thresholds),))

    def result(self):
        tp = self._value("tp")
        value = divide_no_nan(tp, tp + self._value(self._second))
        return Tensor(value[0] if len(self.thresholds) == 1 else value)

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds, "top_k": self.top_k,
                "class_id": self.class_id}


class Precision(_PrecisionOrRecall):
    """``tp / (tp + fp)``: of the predictions above the threshold, the share that are positive.

    Args:
      thresholds: a float or a list of floats in [0, 1] (default 0.5; with ``top_k``, every
        kept prediction counts); a list gives one value per threshold.
      top_k: count only the ``k`` highest predictions of each row as positive.
      class_id: measure one class (a column of ``y_true``/``y_pred``).

    >>> m = mk.metrics.Precision()
    >>> m.update_state([0, 1, 1, 1], [1, 0, 1, 1])
    >>> round(float(m.result()), 4)
    0.6667
    """

    _second = "fp"


class Recall(_PrecisionOrRecall):
    """``tp / (tp + fn)``: of the positive labels, the share predicted above the threshold
    (arguments as ``Precision``'s).

    >>> m = mk.metrics.Recall()
    >>> m.update_state([0, 1, 1, 1], [1, 0, 1, 1])
    >>> round(float(m.result()), 4)
    0.6667
    """

    _second = "fn"


class SensitivitySpecificityBase(_CountsMetric):
    """All four counts at ``num_thresholds`` evenly spaced thresholds in [0, 1] (0.5 alone when
    ``num_thresholds`` is 1); ``result`` finds the best of one rate where another reaches ``value``."""

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        if num_thresholds <= 0:
            raise ValueError("Argument `num_thresholds` must be an integer > 0. "
                             f"Received: num_thresholds={num_thresholds}")
        self.value = value
        self.class_id = class_id
        if num_thresholds == 1:
            self.thresholds = [0.5]
            self._thresholds_distributed_evenly = False
        else:
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self.thresholds = [0.0] + inner + [1.0]
            self._thresholds_distributed_evenly = True
        self._add_counts(("tp", "fp", "tn", "fn"), (len(self.thresholds),))

    def _max_under_constraint(self, constrained, dependent):
        """The largest ``dependent`` rate among thresholds where ``constrained >= value`` (0 if none)."""
        counts = [self._value(k) for k in ("tp", "fp", "tn", "fn")]
        return Tensor(_best_under_constraint(*counts, self.value, constrained=constrained, dependent=dependent))

    def get_config(self):
        return {**super().get_config(), "class_id": self.class_id}


def _check_rate(name, value):
    if value < 0 or value > 1:
        raise ValueError(f"Argument `{name}` must be in the range [0, 1]. Received: {name}={value}")


class SensitivityAtSpecificity(SensitivitySpecificityBase):
    """The best sensitivity (recall) among thresholds whose specificity is at least ``specificity``."""

    def __init__(self, specificity, num_thresholds=200, class_id=None, name=None, dtype=None):
        _check_rate("specificity", specificity)
        self.specificity = specificity
        self.num_thresholds = num_thresholds
        super().__init__(specificity, num_thresholds=num_thresholds, class_id=class_id, name=name, dtype=dtype)

    def result(self):
        return self._max_under_constraint("specificity", "recall")

    def get_config(self):
        return {**super().get_config(), "num_thresholds": self.num_thresholds, "specificity": self.specificity}


class SpecificityAtSensitivity(SensitivitySpecificityBase):
    """The best specificity among thresholds whose sensitivity (recall) is at least ``sensitivity``."""

    def __init__(self, sensitivity, num_thresholds=200, class_id=None, name=None, dtype=None):
        _check_rate("sensitivity", sensitivity)
        self.sensitivity = sensitivity
        self.num_thresholds = num_thresholds
        super().__init__(sensitivity, num_thresholds=num_thresholds, class_id=class_id, name=name, dtype=dtype)

    def result(self):
        return self._max_under_constraint("recall", "specificity")

    def get_config(self):
        return {**super().get_config(), "num_thresholds": self.num_thresholds, "sensitivity": self.sensitivity}


class PrecisionAtRecall(SensitivitySpecificityBase):
    """The best precision among thresholds whose recall is at least ``recall``."""

    def __init__(self, recall, num_thresholds=200, class_id=None, name=None, dtype=None):
        _check_rate("recall", recall)
        self.recall = recall
        self.num_thresholds = num_thresholds
        super().__init__(value=recall, num_thresholds=num_thresholds, class_id=class_id, name=name, dtype=dtype)

    def result(self):
        return self._max_under_constraint("recall", "precision")

    def get_config(self):
        return {**super().get_config(), "num_thresholds": self.num_thresholds, "recall": self.recall}


class RecallAtPrecision(SensitivitySpecificityBase):
    """The best recall among thresholds whose precision is at least ``precision``."""

    def __init__(self, precision, num_thresholds=200, class_id=None, name=None, dtype=None):
        _check_rate("precision", precision)
        self.precision = precision
        self.num_thresholds = num_thresholds
        super().__init__(value=precision, num_thresholds=num_thresholds, class_id=class_id, name=name, dtype=dtype)

    def result(self):
        return self._max_under_constraint("precision", "recall")

    def get_config(self):
        return {**super().get_config(), "num_thresholds": self.num_thresholds, "precision": self.precision}


@functools.partial(jax.jit, static_argnames=("constrained", "dependent"))
def _best_under_constraint(tp, fp, tn, fn, value, *, constrained, dependent):
    rates = {"recall": divide_no_nan(tp, tp + fn), "specificity": divide_no_nan(tn, tn + fp),
             "precision": divide_no_nan(tp, tp + fp)}
    feasible = rates[constrained] >= value
    return jnp.max(jnp.where(feasible, rates[dependent], 0.0), initial=0.0)
