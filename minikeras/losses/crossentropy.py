"""Cross-entropy losses: binary, categorical (one-hot labels) and sparse categorical (integer labels).

With ``from_logits=True`` they work on log-probabilities computed stably (log-sigmoid,
log-softmax), so logits of +-1e4 give finite losses and gradients. Probabilities are clipped to
[epsilon(), 1 - epsilon()] first (``keras.config.epsilon()``, read at each call), as Keras does.
"""
import warnings

import numpy as np

from minikeras.activations import log_softmax
from minikeras.backend import DEFAULT_EPSILON, epsilon
from minikeras.errors import InvalidArgumentError
from minikeras.losses.base import (
    Loss,
    LossFunctionWrapper,
    concrete_numpy,
    squeeze_or_expand_to_same_rank,
    to_float_tensor,
    to_tensor,
)
from minikeras.ops.array import expand_dims, one_hot, squeeze
from minikeras.ops.math import cast, log, log_sigmoid, maximum, minimum, not_equal, where
from minikeras.ops.nn_losses import (
    sparse_categorical_crossentropy_from_logits,
    sparse_categorical_crossentropy_of_probabilities,
)
from minikeras.ops.reduce import reduce_mean, reduce_sum


def _clip_probabilities(p):
    eps = epsilon()
    return minimum(maximum(p, eps), 1.0 - eps)


def _same_shape(name, y_true, y_pred, hint=""):
    if y_true.shape != y_pred.shape:
        raise ValueError(f"{name}: y_true and y_pred must have the same shape, received y_true.shape={y_true.shape}, "
                         f"y_pred.shape={y_pred.shape}.{hint}")


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Per element ``-(t * log(p) + (1 - t) * log(1 - p))``, mean over ``axis``.

    ``label_smoothing`` moves the labels toward 0.5: ``t * (1 - s) + 0.5 * s``.
    """
    y_pred = to_float_tensor(y_pred)
    y_true = to_tensor(y_true, y_pred.dtype)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    _same_shape("binary_crossentropy", y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        elementwise = -y_true * log_sigmoid(y_pred) - (1.0 - y_true) * log_sigmoid(-y_pred)
    else:
        p = _clip_probabilities(y_pred)
        elementwise = -(y_true * log(p) + (1.0 - y_true) * log(1.0 - p))
    return reduce_mean(elementwise, axis=axis)


def _log_probabilities(y_pred, from_logits, axis):
    if from_logits:
        return log_softmax(y_pred, axis=axis)
    p = y_pred / reduce_sum(y_pred, axis=axis, keepdims=True)
    return log(_clip_probabilities(p))


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """``-sum(y_true * log(softmax or normalised y_pred), axis)`` for one-hot (or soft) labels.

    ``label_smoothing`` s: ``y_true * (1 - s) + s / num_classes``.
    """
    if isinstance(axis, bool):
        raise ValueError(f"`axis` must be of type `int`. Received: axis={axis} of type {type(axis)}")
    y_pred = to_float_tensor(y_pred)
    y_true = to_tensor(y_true, y_pred.dtype)
    hint = ""
    if y_true.ndim == y_pred.ndim - 1 or (y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1 != y_pred.shape[-1]):
        hint = (" These look like integer class labels: use sparse_categorical_crossentropy "
                "(SparseCategoricalCrossentropy) for them, or one-hot encode them with mk.one_hot.")
    _same_shape("categorical_crossentropy", y_true, y_pred, hint)
    if y_pred.ndim and y_pred.shape[-1] == 1:
        warnings.warn("In loss categorical_crossentropy, expected y_pred.shape to be (batch_size, num_classes) with "
                      f"num_classes > 1. Received: y_pred.shape={y_pred.shape}. Consider using 'binary_crossentropy' "
                      "if you only have 2 classes.", SyntaxWarning, stacklevel=2)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_true.shape[-1]
    return -reduce_sum(y_true * _log_probabilities(y_pred, from_logits, axis), axis=axis)


def _sparse_crossentropy(y_true, y_pred, from_logits, ignore_class, axis, name):
    """Per-sample losses and, with ``ignore_class``, the validity mask."""
    y_pred = to_float_tensor(y_pred)
    y_true = to_tensor(y_true)
    if y_pred.ndim < 1:
        raise ValueError(f"{name}: y_pred must have a class axis, received y_pred.shape={y_pred.shape}")
    axis = axis % y_pred.ndim
    if y_true.ndim == y_pred.ndim and y_true.ndim and y_true.shape[-1] == 1:
        y_true = squeeze(y_true, -1)
    expected = y_pred.shape[:axis] + y_pred.shape[axis + 1:]
    if y_true.shape != expected:
        hint = ""
        if y_true.shape == y_pred.shape:
            hint = (" These look like one-hot labels: use categorical_crossentropy (CategoricalCrossentropy) for them, "
                    "or pass the class indices (mk.argmax(y, axis=-1)).")
        raise ValueError(f"{name} expects integer class labels y_true of shape {expected} (y_pred's shape without its "
                         f"class axis), received y_true.shape={y_true.shape}, y_pred.shape={y_pred.shape}.{hint}")
    num_classes = y_pred.shape[axis]
    _check_label_range(name, y_true, num_classes, ignore_class)
    valid = None
    if ignore_class is not None:
        valid = not_equal(y_true, cast(ignore_class, y_true.dtype))
        y_true = where(valid, y_true, 0)
        # A uniform row where labels are ignored keeps the forward and backward passes finite.
        y_pred = where(expand_dims(valid, axis), y_pred, 1.0)
    labels = y_true if y_true.dtype.kind in "iu" else cast(y_true, "int32")
    if not from_logits and axis == y_pred.ndim - 1 and epsilon() == DEFAULT_EPSILON:
        # one op (ops.nn_losses), whose native kernels clip with the default epsilon
        losses = sparse_categorical_crossentropy_of_probabilities(labels, y_pred)
    elif from_logits and axis == y_pred.ndim - 1:  # one op: no one-hot rows over the classes
        losses = sparse_categorical_crossentropy_from_logits(labels, y_pred)
    else:
        target = one_hot(labels, num_classes, axis=axis, dtype=y_pred.dtype)
        losses = -reduce_sum(target * _log_probabilities(y_pred, from_logits, axis), axis=axis)
    if valid is not None:
        losses = where(valid, losses, 0.0)
    return losses, valid


def _check_label_range(name, y_true, num_classes, ignore_class):
    labels = concrete_numpy(y_true)
    if labels is not None:
        check_class_labels(labels, num_classes, ignore_class, name)


def check_class_labels(labels, num_classes, ignore_class=None, name="sparse_categorical_crossentropy",
                       what="labels"):
    """Raises ``mk.errors.InvalidArgumentError`` (TensorFlow's error on the CPU) when a value of
    the NumPy array ``labels`` is not a class index in ``[0, num_classes)`` (``ignore_class``
    excepted), naming the first such value, its position and the number of classes; a
    ``ValueError`` when a float label is not a whole number."""
    labels = np.asarray(labels)
    if labels.size == 0:
        return
    outside = (labels < 0) | (labels >= num_classes)
    if ignore_class is not None:
        outside &= labels != ignore_class
    if outside.any():
        position = tuple(int(i) for i in np.unravel_index(int(np.argmax(outside)), labels.shape))
        value = labels[position]
        shown = " ".join(str(v) for v in labels.ravel()[:10]) + (" ..." if labels.size > 10 else "")
        raise InvalidArgumentError(
            None, name, f"{name}: received a label value of {value} at position "
            f"{position[0] if len(position) == 1 else position} of {what} which is outside the valid range of "
            f"[0, {num_classes}) (y_pred has {num_classes} classes).  Label values: {shown}")
    if labels.dtype.kind == "f" and not np.array_equal(labels, np.round(labels)):
        raise ValueError(f"{name}: labels must be integer class indices, received non-integer values such as "
                         f"{labels[labels != np.round(labels)][0]}")


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    """Categorical cross-entropy with integer class labels (shape of y_pred without its class axis;
    a trailing 1 is allowed). ``ignore_class``: labels equal to it contribute a loss of 0."""
    return _sparse_crossentropy(y_true, y_pred, from_logits, ignore_class, axis, "sparse_categorical_crossentropy")[0]


sparse_categorical_crossentropy.integer_labels = True  # LossFunctionWrapper passes y_true uncast


bce = BCE = binary_crossentropy


class BinaryCrossentropy(LossFunctionWrapper):
    """Binary cross-entropy for 0/1 labels (see ``binary_crossentropy``).

    Args:
      from_logits: y_pred are logits (any real number) rather than probabilities.
      label_smoothing: in [0, 1]; labels become ``t * (1 - s) + 0.5 * s``.
      axis: the axis the mean is taken over.
    """

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="binary_crossentropy", dtype=None):
        super().__init__(binary_crossentropy, name=name, reduction=reduction, dtype=dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)
        self.from_logits = from_logits
        self.label_smoothing = label_smoothing
        self.axis = axis


class CategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy for one-hot labels (see ``categorical_crossentropy``).

    Args:
      from_logits: y_pred are logits rather than probabilities.
      label_smoothing: in [0, 1]; labels become ``y * (1 - s) + s / num_classes``.
      axis: the class axis.
    """

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="categorical_crossentropy", dtype=None):
        super().__init__(categorical_crossentropy, name=name, reduction=reduction, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits = from_logits
        self.label_smoothing = label_smoothing
        self.axis = axis


class SparseCategoricalCrossentropy(Loss):
    """Cross-entropy for integer class labels (see ``sparse_categorical_crossentropy``).

    Args:
      from_logits: y_pred are logits rather than probabilities.
      ignore_class: a label value whose samples are left out; the mean is over the others.
      axis: the class axis of y_pred.
    """

    _integer_labels = True

    def __init__(self, from_logits=False, ignore_class=None, axis=-1, reduction="sum_over_batch_size",
                 name="sparse_categorical_crossentropy", dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.from_logits = from_logits
        self.ignore_class = ignore_class
        self.axis = axis

    def _call_with_mask(self, y_true, y_pred):
        return _sparse_crossentropy(y_true, y_pred, self.from_logits, self.ignore_class, self.axis, self.name)

    def call(self, y_true, y_pred):
        return self._call_with_mask(y_true, y_pred)[0]

    def get_config(self):
        return {**super().get_config(), "from_logits": self.from_logits, "ignore_class": self.ignore_class,
                "axis": self.axis}
