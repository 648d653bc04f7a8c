"""AUC: the area under the ROC or precision-recall curve, from confusion-matrix counts at
thresholds (Keras 3's ``keras.metrics.AUC``, same state, interpolation and summation rules)."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.backend import epsilon
from minikeras.metrics import confusion_update
from minikeras.metrics.confusion import _CountsMetric, divide_no_nan
from minikeras.tensor import Tensor, to_array

_CURVES = {"ROC": "ROC", "roc": "ROC", "PR": "PR", "pr": "PR", "PRGAIN": "PRGAIN", "prgain": "PRGAIN"}


def _curve(key):
    name = _CURVES.get(key) if isinstance(key, str) else None
    if name is None:
        raise ValueError(f'Invalid AUC curve value: "{key}". Expected values are ["PR", "ROC", "PRGAIN"]')
    return name


def _summation(key):
    if key not in ("interpolation", "Interpolation", "majoring", "Majoring", "minoring", "Minoring"):
        raise ValueError(f'Invalid AUC summation method value: "{key}". '
                         'Expected values are ["interpolation", "majoring", "minoring"]')
    return key.lower()


class AUC(_CountsMetric):
    """The area under the ROC curve (``curve="ROC"``, recall against false-positive rate) or the
    precision-recall curve (``curve="PR"``), approximated by a Riemann sum over thresholds.

    Args:
      num_thresholds: thresholds evenly spaced over [0, 1] (200); ignored if ``thresholds``.
      curve: 'ROC', 'PR' or 'PRGAIN'.
      summation_method: 'interpolation' (trapezoids for ROC; for PR, interpolating true and
        false positives, as Davis & Goadrich 2006), 'minoring' or 'majoring'.
      thresholds: explicit thresholds in [0, 1] (0 and 1 are added, just outside).
      multi_label: labels of shape (n, labels) are scored per column and the AUCs averaged
        (by ``label_weights`` if given) instead of flattened together.
      num_labels: the number of columns with ``multi_label`` (else found on the first batch).
      label_weights: per-column weights (flattened counts, or the average with ``multi_label``).
      from_logits: apply a sigmoid to ``y_pred`` first.

    >>> m = mk.metrics.AUC(num_thresholds=3)
    >>> m.update_state([0, 0, 1, 1], [0, 0.5, 0.3, 0.9])
    >>> float(m.result())
    0.75
    """

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation", name=None, dtype=None,
                 thresholds=None, multi_label=False, num_labels=None, label_weights=None, from_logits=False):
        self._init_from_thresholds = thresholds is not None
        if thresholds is not None:
            self.num_thresholds = len(thresholds) + 2
            thresholds = sorted(confusion_update.parse_thresholds(thresholds, 0.5))
            self._thresholds_distributed_evenly = confusion_update.evenly_distributed(
                np.array([0.0] + thresholds + [1.0]))
        else:
            if num_thresholds <= 1:
                raise ValueError(f"Argument `num_thresholds` must be an integer > 1. Received: "
                                 f"num_thresholds={num_thresholds}")
            self.num_thresholds = num_thresholds
            thresholds = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self._thresholds_distributed_evenly = True
        # end points just outside [0, 1] so that predictions of exactly 0 or 1 are counted (epsilon() as
        # the metric is made, as Keras)
        self._thresholds = np.array([0.0 - epsilon()] + thresholds + [1.0 + epsilon()])
        self.curve = _curve(curve)
        self.summation_method = _summation(summation_method)
        super().__init__(name=name, dtype=dtype)
        self.multi_label = multi_label
        self.num_labels = num_labels
        self.label_weights = None if label_weights is None else np.asarray(label_weights, self.dtype)
        self._from_logits = from_logits
        self._built = False
        if multi_label:
            if num_labels:
                self._build((None, num_labels))
        else:
            if num_labels:
                raise ValueError("`num_labels` is needed only when `multi_label` is True.")
            self._build(None)

    @property
    def thresholds(self):
        """The thresholds, with the two end points."""
        return list(self._thresholds)

    def _build(self, shape):
        if self.multi_label:
            if len(shape) != 2:
                raise ValueError(f"`y_pred` must have rank 2 when `multi_label=True`. Found rank {len(shape)}. "
                                 f"Full shape received for `y_pred`: {tuple(shape)}")
            self._num_labels = shape[1]
            variable_shape = (self.num_thresholds, self._num_labels)
        else:
            variable_shape = (self.num_thresholds,)
        self._add_counts(("tp", "fp", "tn", "fn"), variable_shape)
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds this batch's counts at every threshold."""
        y_pred = to_array(y_pred)
        if not self._built:
            self._build(y_pred.shape)
        if self._from_logits:
            y_pred = jax.nn.sigmoid(y_pred)
        increments = confusion_update.confusion_increments(
            y_true, y_pred, sample_weight, thresholds=self._thresholds, keys=self._count_keys,
            multi_label=self.multi_label, label_weights=None if self.multi_label else self.label_weights,
            evenly=self._thresholds_distributed_evenly, dtype=self.dtype)
        for key in self._count_keys:
            self._variable(key).assign_add(increments[key])

    def reset_state(self):
        if self._built:
            super().reset_state()

    def result(self):
        if not self._built:
            return Tensor(jnp.zeros((), self.dtype))
        counts = [self._value(k) for k in ("tp", "fp", "tn", "fn")]
        weights = None if self.label_weights is None else jnp.asarray(self.label_weights)
        return Tensor(_area(*counts, weights, curve=self.curve, summation=self.summation_method,
                            multi_label=self.multi_label))

    def get_config(self):
        config = {**super().get_config(), "num_thresholds": self.num_thresholds, "curve": self.curve,
                  "summation_method": self.summation_method, "multi_label": self.multi_label,
                  "num_labels": self.num_labels,
                  "label_weights": None if self.label_weights is None else self.label_weights.tolist(),
                  "from_logits": self._from_logits}
        if self._init_from_thresholds:
            config["thresholds"] = self.thresholds[1:-1]
        return config


@functools.partial(jax.jit, static_argnames=("curve", "summation", "multi_label"))
def _area(tp, fp, tn, fn, label_weights, *, curve, summation, multi_label):
    """The area under the curve from the counts at each threshold (one compiled program)."""
    if curve == "PR" and summation == "interpolation":
        return _average(_interpolated_pr_terms(tp, fp, fn), label_weights, multi_label)
    recall = divide_no_nan(tp, tp + fn)
    if curve == "ROC":
        x, y = divide_no_nan(fp, fp + tn), recall
    elif curve == "PR":
        x, y = recall, divide_no_nan(tp, tp + fp)
    else:  # PRGAIN: gains scaled by positives / negatives, clamped as Keras does
        scale = divide_no_nan(tp + fn, tn + fp)
        recall_gain = jnp.maximum(jnp.where(tp == 0, 0.0, 1.0 - scale * divide_no_nan(fn, tp)), 0.0)
        precision_gain = jnp.where(tp == 0, 1.0, 1.0 - scale * divide_no_nan(fp, tp))
        x, y = recall_gain, precision_gain
    if summation == "interpolation":
        heights = (y[:-1] + y[1:]) / 2.0
    elif summation == "minoring":
        heights = jnp.minimum(y[:-1], y[1:])
    else:
        heights = jnp.maximum(y[:-1], y[1:])
    return _average((x[:-1] - x[1:]) * heights, label_weights, multi_label)


def _interpolated_pr_terms(tp, fp, fn):
    """The PR curve's area between thresholds with precision interpolated (Davis & Goadrich):
    between two thresholds, true positives grow linearly with all positives ``p``."""
    dtp = tp[:-1] - tp[1:]
    p = tp + fp
    dp = p[:-1] - p[1:]
    prec_slope = divide_no_nan(dtp, jnp.maximum(dp, 0))
    intercept = tp[1:] - prec_slope * p[1:]
    safe_p_ratio = jnp.where(jnp.logical_and(p[:-1] > 0, p[1:] > 0), divide_no_nan(p[:-1], jnp.maximum(p[1:], 0)),
                             jnp.ones_like(p[1:]))
    return divide_no_nan(prec_slope * (dtp + intercept * jnp.log(safe_p_ratio)), jnp.maximum(tp[1:] + fn[1:], 0))


def _average(by_threshold, label_weights, multi_label):
    """The sum over thresholds; with ``multi_label``, the (weighted) mean of the columns' sums."""
    if not multi_label:
        return jnp.sum(by_threshold)
    by_label = jnp.sum(by_threshold, axis=0)
    if label_weights is None:
        return jnp.mean(by_label)
    return divide_no_nan(jnp.sum(by_label * label_weights), jnp.sum(label_weights))
