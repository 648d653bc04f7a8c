"""Sparse class labels checked once per ``fit``/``evaluate``, on the host.

Inside the compiled step a label outside ``[0, classes)`` selects nothing: its loss is 0 and
the model trains on nothing, silently (TensorFlow raises on the CPU). Checking every batch
inside the program would cost a host round trip per step, so ``fit`` and ``evaluate`` check
labels held in memory (NumPy arrays, lists, Tensors) once, before the first step, against the
width of the model's output; a Dataset's labels are not read ahead.
"""
import numpy as np

from minikeras.losses.base import LossFunctionWrapper
from minikeras.losses.crossentropy import (
    SparseCategoricalCrossentropy,
    check_class_labels,
    sparse_categorical_crossentropy,
)
from minikeras.tensor import Tensor


def _sparse_spec(loss):
    """``(ignore_class, axis, name)`` when ``loss`` takes sparse class labels, else None."""
    if isinstance(loss, SparseCategoricalCrossentropy):
        return loss.ignore_class, loss.axis, loss.name
    if isinstance(loss, LossFunctionWrapper) and loss.fn is sparse_categorical_crossentropy:
        kwargs = getattr(loss, "_fn_kwargs", {})
        return kwargs.get("ignore_class"), kwargs.get("axis", -1), loss.name
    return None


def _labels(y):
    """``y`` as a NumPy array when it is held in memory, else None."""
    if isinstance(y, Tensor):
        return np.asarray(y.numpy())
    if isinstance(y, np.ndarray):
        return y
    if isinstance(y, (list, tuple)) and y and all(np.isscalar(v) for v in y):
        return np.asarray(y)
    return None


def check_sparse_labels(model, y, what):
    """Raises ``mk.errors.InvalidArgumentError`` naming the first label of ``y`` outside
    ``[0, classes)`` when ``model`` (one output, of known width) is compiled with a sparse
    categorical cross-entropy; does nothing where either is unknown. ``what`` names ``y`` in
    the message ("fit's y")."""
    spec = _sparse_spec(getattr(model, "loss", None))
    outputs = getattr(model, "outputs", None)
    labels = _labels(y) if spec is not None else None
    if labels is None or not outputs or len(outputs) != 1 or labels.dtype.kind not in "iuf":
        return
    ignore_class, axis, name = spec
    shape = tuple(outputs[0].shape)
    if not shape:
        return
    num_classes = shape[axis]
    if not isinstance(num_classes, int):
        return
    if labels.ndim == len(shape) and labels.ndim and labels.shape[-1] == 1:
        labels = labels[..., 0]
    check_class_labels(labels, num_classes, ignore_class, name, what=what)
