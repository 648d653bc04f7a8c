"""Counts of true/false positives/negatives at thresholds: what the confusion metrics and AUC add
to their state on each batch (Keras 3's ``update_confusion_matrix_variables``, in jax).

A prediction is positive at threshold ``t`` when ``y_pred > t``. Each batch becomes one compiled
program per (configuration, input shapes): ``confusion_increments`` returns the increments and the
metric adds them to its Variables, eagerly or inside a compiled step alike.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.backend import epsilon
from minikeras.metrics.base import squeeze_or_expand_to_same_rank
from minikeras.tensor import to_array

NEG_INF = -1e10  # the threshold that top_k uses: every kept prediction is above it
KEYS = ("tp", "fp", "tn", "fn")


def parse_thresholds(thresholds, default):
    """The thresholds as a list of floats, each checked to lie in [0, 1]."""
    if thresholds is None:
        return [default]
    values = list(thresholds) if isinstance(thresholds, (list, tuple, np.ndarray)) else [thresholds]
    invalid = [t for t in values if t is None or t < 0 or t > 1]
    if invalid:
        raise ValueError(f"Threshold values must be in [0, 1]. Received: {invalid}")
    return [float(t) for t in values]


def evenly_distributed(thresholds):
    """Whether ``thresholds`` are ``i / (n - 1)`` for ``i < n`` (n >= 3): then each prediction
    falls in one bucket and the counts are cumulative sums, O(n + batch) instead of O(n * batch)."""
    n = len(thresholds)
    if n < 3:
        return False
    return bool(np.allclose(thresholds, np.arange(n, dtype=np.float32) / (n - 1), atol=epsilon()))


def confusion_increments(y_true, y_pred, sample_weight=None, *, thresholds, keys=KEYS, top_k=None, class_id=None,
                         multi_label=False, label_weights=None, evenly=False, dtype="float32"):
    """The weighted counts this batch adds, as ``{key: array}`` for each of ``keys``
    ('tp', 'fp', 'tn', 'fn'): shape ``(len(thresholds),)``, or ``(len(thresholds), labels)``
    with ``multi_label``.

    Args:
      y_true: labels, cast to bool (any non-zero value is positive).
      y_pred: scores, compared with each threshold (``y_pred > t``).
      sample_weight: None, or weights broadcastable to ``y_true``.
      thresholds: floats (a list; kept static in the compiled program).
      top_k: keep only the ``k`` highest scores of each row (the rest count as negative).
      class_id: count only this column of ``y_true`` and ``y_pred``.
      multi_label: count each column separately instead of flattening.
      label_weights: per-column weights, applied when flattening.
      evenly: ``thresholds`` are evenly distributed (``evenly_distributed``): use buckets.
    """
    if multi_label and label_weights is not None:
        raise ValueError("`label_weights` for multilabel data should be handled outside of "
                         "`update_confusion_matrix_variables` when `multi_label` is True.")
    y_pred = to_array(y_pred)
    if class_id is not None and y_pred.ndim == 1:
        raise ValueError("When class_id is provided, y_pred must be a 2D array with shape (num_samples, num_classes), "
                         f"found shape: {tuple(y_pred.shape)}")
    program = _compiled(tuple(float(t) for t in thresholds), tuple(keys), top_k, class_id, bool(multi_label),
                        None if label_weights is None else tuple(np.asarray(label_weights, np.float64).tolist()),
                        bool(evenly), str(np.dtype(dtype)))
    weight = None if sample_weight is None else to_array(sample_weight)
    return program(to_array(y_true), y_pred, weight)


@functools.lru_cache(maxsize=None)
def _compiled(thresholds, keys, top_k, class_id, multi_label, label_weights, evenly, dtype):
    def increments(y_true, y_pred, sample_weight):
        y_true = y_true.astype(dtype)
        y_pred = y_pred.astype(dtype)
        y_pred, y_true = squeeze_or_expand_to_same_rank(y_pred, y_true)
        if sample_weight is not None:
            sample_weight = jnp.expand_dims(sample_weight.astype(dtype), -1)
            _, sample_weight = squeeze_or_expand_to_same_rank(y_true, sample_weight, expand_rank_1=False)
        if top_k is not None:
            y_pred = _filter_top_k(y_pred, top_k)
        if class_id is not None:
            y_true, y_pred = y_true[..., class_id, None], y_pred[..., class_id, None]
        weights = _weights(y_pred, sample_weight, label_weights, multi_label, dtype)
        args = (y_true, y_pred, weights, jnp.asarray(thresholds, dtype), keys, multi_label)
        if evenly:
            return _bucketed(*args, with_epsilon=thresholds[0] < 0.0 or thresholds[-1] > 1.0)
        return _compared(*args)

    return jax.jit(increments)


def _weights(y_pred, sample_weight, label_weights, multi_label, dtype):
    """Sample weights times label weights, broadcast to ``y_pred`` (flattened unless multi-label);
    None when neither is given."""
    weights = None
    if sample_weight is not None:
        weights = jnp.broadcast_to(sample_weight, y_pred.shape)
    if label_weights is not None:
        per_label = jnp.broadcast_to(jnp.asarray(label_weights, dtype)[None], y_pred.shape)
        weights = per_label if weights is None else weights * per_label
    if weights is not None and not multi_label:
        weights = jnp.reshape(weights, (-1,))
    return weights


def _filter_top_k(x, k):
    """``x`` with all but the ``k`` highest values of each row set to NEG_INF."""
    _, indices = jax.lax.top_k(x, k)
    mask = jnp.sum(jax.nn.one_hot(indices, x.shape[-1], dtype=x.dtype), axis=-2)
    return x * mask + NEG_INF * (1 - mask)


def _compared(y_true, y_pred, weights, thresholds, keys, multi_label):
    """Every prediction against every threshold: O(thresholds * predictions)."""
    if multi_label:
        preds, labels = y_pred[None], y_true.astype(bool)[None]
        thresholds = jnp.reshape(thresholds, (-1,) + (1,) * y_pred.ndim)
    else:
        preds, labels = jnp.reshape(y_pred, (1, -1)), jnp.reshape(y_true.astype(bool), (1, -1))
        thresholds = thresholds[:, None]
    pred_is_pos = preds > thresholds
    conditions = {"tp": (labels, pred_is_pos), "fp": (~labels, pred_is_pos),
                  "tn": (~labels, ~pred_is_pos), "fn": (labels, ~pred_is_pos)}
    out = {}
    for key in keys:
        label, pred = conditions[key]
        both = jnp.logical_and(label, pred)
        counted = both.astype(y_pred.dtype) if weights is None else jnp.where(both, weights[None], 0)
        out[key] = jnp.sum(counted, axis=1).astype(y_pred.dtype)
    return out


def _bucketed(y_true, y_pred, weights, thresholds, keys, multi_label, with_epsilon):
    """Evenly spaced thresholds: each prediction lands in one bucket (``ceil(p * (n - 1)) - 1``,
    so that a prediction equal to a threshold is not above it), and the count at threshold ``i``
    is the sum of the buckets from ``i`` up."""
    n = thresholds.shape[0]
    weights = jnp.asarray(1.0, y_pred.dtype) if weights is None else weights
    y_pred = jnp.clip(y_pred, 0.0, 1.0)
    y_true = y_true.astype(bool).astype(y_pred.dtype)
    if not multi_label:
        y_true, y_pred = jnp.reshape(y_true, (-1,)), jnp.reshape(y_pred, (-1,))
    true_labels = y_true * weights
    false_labels = (1.0 - y_true) * weights
    buckets = jnp.ceil(y_pred * (n - 1)) - 1
    if with_epsilon:  # the first threshold is below 0: every prediction is above it
        buckets = jnp.maximum(buckets, 0)
    buckets = buckets.astype("int32")

    def above(labels):
        def per_column(values, ids):
            # ids of -1 (predictions of 0) fall outside [0, n) and are dropped
            summed = jax.ops.segment_sum(values, ids, num_segments=n)
            return jnp.flip(jnp.cumsum(jnp.flip(summed)))
        if multi_label:
            return jnp.transpose(jax.vmap(per_column)(jnp.transpose(labels), jnp.transpose(buckets)))
        return per_column(labels, buckets)

    tp, fp = above(true_labels), above(false_labels)
    out = {}
    if "tp" in keys:
        out["tp"] = tp
    if "fp" in keys:
        out["fp"] = fp
    if "tn" in keys:
        out["tn"] = jnp.sum(false_labels, axis=0 if multi_label else None) - fp
    if "fn" in keys:
        out["fn"] = jnp.sum(true_labels, axis=0 if multi_label else None) - tp
    return out
