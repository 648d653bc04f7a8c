"""Cross-entropies that down-weight easy examples: binary and categorical focal cross-entropy
(Lin et al. 2017) and the generalized cross-entropy for noisy labels (Zhang & Sabuncu 2018),
with Keras 3's formulas and defaults. Each function returns one loss per sample."""
import warnings

from minikeras.backend import epsilon
from minikeras.losses.base import LossFunctionWrapper, to_float_tensor, to_tensor
from minikeras.ops.array import one_hot
from minikeras.ops.clip import clip_by_value
from minikeras.ops.elementwise import cast
from minikeras.ops.math import log, pow as _pow, sigmoid
from minikeras.ops.nn_losses import softmax
from minikeras.ops.reduce import reduce_mean, reduce_sum


def _prepare(y_true, y_pred):
    y_pred = to_float_tensor(y_pred)
    return to_tensor(y_true, y_pred.dtype), y_pred


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False,
                              label_smoothing=0.0, axis=-1):
    """``mean((1 - p_t)^gamma * bce, axis)`` with ``p_t = y * p + (1 - y) * (1 - p)``; with
    ``apply_class_balancing`` each term is weighted ``alpha`` (label 1) or ``1 - alpha`` (label 0)."""
    y_true, y_pred = _prepare(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        y_pred = sigmoid(y_pred)
    p = clip_by_value(y_pred, epsilon(), 1.0 - epsilon())
    bce = -(y_true * log(p) + (1.0 - y_true) * log(1.0 - p))
    p_t = y_true * y_pred + (1.0 - y_true) * (1.0 - y_pred)
    focal_bce = _pow(1.0 - p_t, gamma) * bce
    if apply_class_balancing:
        focal_bce = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * focal_bce
    return reduce_mean(focal_bce, axis=axis)


def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                                   axis=-1):
    """``sum(alpha * (1 - p)^gamma * -y * log(p), axis)`` over probabilities ``p`` rescaled to
    sum to 1 and clipped to [epsilon(), 1 - epsilon()]."""
    if isinstance(axis, bool):
        raise ValueError(f"`axis` must be of type `int`. Received: axis={axis} of type {type(axis)}")
    y_true, y_pred = _prepare(y_true, y_pred)
    if y_pred.shape[-1] == 1:
        warnings.warn("In loss categorical_focal_crossentropy, expected y_pred.shape to be (batch_size, num_classes) "
                      f"with num_classes > 1. Received: y_pred.shape={tuple(y_pred.shape)}. Consider using "
                      "'binary_crossentropy' if you only have 2 classes.", SyntaxWarning, stacklevel=2)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_true.shape[-1]
    if from_logits:
        y_pred = softmax(y_pred, axis=axis)
    output = y_pred / reduce_sum(y_pred, axis=axis, keepdims=True)
    output = clip_by_value(output, epsilon(), 1.0 - epsilon())
    cce = -y_true * log(output)
    return reduce_sum(alpha * _pow(1.0 - output, gamma) * cce, axis=axis)


def categorical_generalized_cross_entropy(y_true, y_pred, q):
    """``(1 - p^q) / q`` with ``p`` the probability of the true class (``y_true`` class ids)."""
    y_pred = to_float_tensor(y_pred)
    p = reduce_sum(y_pred * one_hot(cast(y_true, "int32"), y_pred.shape[-1], dtype=y_pred.dtype), axis=-1)
    return (1.0 - _pow(p, q)) / q


class BinaryFocalCrossentropy(LossFunctionWrapper):
    """Binary focal cross-entropy (see ``binary_focal_crossentropy``)."""

    def __init__(self, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                 axis=-1, reduction="sum_over_batch_size", name="binary_focal_crossentropy", dtype=None):
        super().__init__(binary_focal_crossentropy, name=name, reduction=reduction, dtype=dtype,
                         apply_class_balancing=apply_class_balancing, alpha=alpha, gamma=gamma,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.apply_class_balancing, self.alpha, self.gamma = apply_class_balancing, alpha, gamma
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis


class CategoricalFocalCrossentropy(LossFunctionWrapper):
    """Categorical focal cross-entropy (see ``categorical_focal_crossentropy``)."""

    def __init__(self, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_focal_crossentropy", dtype=None):
        super().__init__(categorical_focal_crossentropy, name=name, reduction=reduction, dtype=dtype, alpha=alpha,
                         gamma=gamma, from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.alpha, self.gamma = alpha, gamma
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis


class CategoricalGeneralizedCrossEntropy(LossFunctionWrapper):
    """Generalized cross-entropy (see ``categorical_generalized_cross_entropy``); ``q`` in (0, 1)."""

    def __init__(self, q=0.5, reduction="sum_over_batch_size", name="categorical_generalized_cross_entropy",
                 dtype=None):
        if not 0 < q < 1:
            raise ValueError(f"CategoricalGeneralizedCrossEntropy: q must be in the interval (0, 1). Received: q={q}")
        super().__init__(categorical_generalized_cross_entropy, name=name, reduction=reduction, dtype=dtype, q=q)
        self.q = q
