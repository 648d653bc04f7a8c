"""Intersection-over-union metrics (Keras 3's ``IoU``, ``BinaryIoU``, ``MeanIoU``): a confusion
matrix of class ids accumulated over batches, ``tp / (tp + fp + fn)`` per class."""
import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.backend import epsilon
from minikeras.dtypes import as_dtype
from minikeras.metrics.base import Metric
from minikeras.tensor import Tensor, to_array


def _int_dtype():
    """Keras's default dtype for the matrix, 'int' (int64), as 32 bits where jax keeps no 64-bit ints."""
    return as_dtype(jax.dtypes.canonicalize_dtype("int64"))


class _IoUBase(Metric):
    """The ``total_confusion_matrix`` state (rows: labels, columns: predictions)."""

    _direction = "up"

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        super().__init__(name=name, dtype=dtype or _int_dtype())
        self.num_classes = num_classes
        self.ignore_class = ignore_class
        self.sparse_y_true = sparse_y_true
        self.sparse_y_pred = sparse_y_pred
        self.axis = axis
        self.total_cm = self.add_variable((num_classes, num_classes), name="total_confusion_matrix")

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds this batch's (weighted) pairs (label, prediction); ids outside ``[0, num_classes)``
        and ``ignore_class`` labels are left out."""
        weight = None
        if sample_weight is not None:
            weight = to_array(sample_weight)
            if np.issubdtype(weight.dtype, np.floating) and np.issubdtype(self.dtype, np.integer):
                warnings.warn("You are passing weight as `float`, but dtype is `int`. This may result in an incorrect "
                              "weight due to type casting Consider using integer weights.", stacklevel=2)
        self.total_cm.assign_add(_confusion_matrix(
            to_array(y_true), to_array(y_pred), weight, num_classes=self.num_classes, ignore_class=self.ignore_class,
            sparse_y_true=self.sparse_y_true, sparse_y_pred=self.sparse_y_pred, axis=self.axis,
            dtype=self.dtype.name))

    def get_config(self):
        return {**super().get_config(), "num_classes": self.num_classes, "ignore_class": self.ignore_class,
                "sparse_y_true": self.sparse_y_true, "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


class IoU(_IoUBase):
    """The mean IoU of the classes in ``target_class_ids`` (classes never seen are left out).

    >>> m = mk.metrics.IoU(num_classes=2, target_class_ids=[0])
    >>> m.update_state([0, 0, 1, 1], [0, 1, 0, 1])
    >>> round(float(m.result()), 4)
    0.3333
    """

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        super().__init__(num_classes, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=sparse_y_true, sparse_y_pred=sparse_y_pred, axis=axis)
        if max(target_class_ids) >= num_classes:
            raise ValueError(f"Target class id {max(target_class_ids)} is out of range, which is [0, {num_classes}).")
        self.target_class_ids = list(target_class_ids)

    def result(self):
        return Tensor(_mean_iou(self.total_cm._read_array(), tuple(self.target_class_ids), axis=self.axis,
                                fuzz=epsilon()))

    def get_config(self):
        return {**super().get_config(), "target_class_ids": self.target_class_ids}


class BinaryIoU(IoU):
    """IoU of a binary task: ``y_pred >= threshold`` is class 1."""

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        super().__init__(num_classes=2, target_class_ids=target_class_ids, name=name, dtype=dtype)
        self.threshold = threshold

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = (to_array(y_pred, "float32") >= self.threshold).astype(self.dtype)
        return super().update_state(to_array(y_true).astype(self.dtype), y_pred, sample_weight)

    def get_config(self):
        return {"target_class_ids": self.target_class_ids, "threshold": self.threshold, "name": self.name,
                "dtype": self.dtype.name}


class MeanIoU(IoU):
    """The mean IoU over all ``num_classes`` classes (those never seen are left out of the mean).

    >>> m = mk.metrics.MeanIoU(num_classes=2)
    >>> m.update_state([0, 0, 1, 1], [0, 1, 0, 1])
    >>> round(float(m.result()), 4)
    0.3333
    """

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        super().__init__(num_classes, list(range(num_classes)), name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=sparse_y_true, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        config = super().get_config()
        del config["target_class_ids"]
        return config


@functools.partial(jax.jit, static_argnames=("num_classes", "ignore_class", "sparse_y_true", "sparse_y_pred", "axis",
                                             "dtype"))
def _confusion_matrix(y_true, y_pred, weight, *, num_classes, ignore_class, sparse_y_true, sparse_y_pred, axis, dtype):
    """This batch's matrix: rows labels, columns predictions; pairs with an id outside
    ``[0, num_classes)`` or labelled ``ignore_class`` are left out."""
    if not sparse_y_true:
        y_true = jnp.argmax(y_true, axis=axis)
    if not sparse_y_pred:
        y_pred = jnp.argmax(y_pred, axis=axis)
    y_true = jnp.reshape(y_true.astype(dtype), (-1,))
    y_pred = jnp.reshape(y_pred.astype(dtype), (-1,))
    if weight is None:
        weight = jnp.ones((), dtype)
    else:
        weight = jnp.reshape(weight.astype(dtype), (-1,)) if weight.ndim > 1 else weight.astype(dtype)
    weight = jnp.broadcast_to(weight, y_true.shape)
    valid = (y_true >= 0) & (y_true < num_classes) & (y_pred >= 0) & (y_pred < num_classes)
    if ignore_class is not None:
        valid = valid & (y_true != ignore_class)
    y_true, y_pred = jnp.where(valid, y_true, 0), jnp.where(valid, y_pred, 0)
    weight = jnp.where(valid, weight, 0)
    return jnp.zeros((num_classes, num_classes), dtype).at[y_true, y_pred].add(weight)


@functools.partial(jax.jit, static_argnames=("target_class_ids", "axis", "fuzz"))
def _mean_iou(matrix, target_class_ids, *, axis, fuzz):
    """The mean IoU of the target classes that were seen (a class never seen is left out)."""
    matrix = matrix.astype("float32")
    true_positives = jnp.diag(matrix)
    denominator = jnp.sum(matrix, axis=0) + jnp.sum(matrix, axis=1) - true_positives
    ids = jnp.asarray(target_class_ids, "int32")
    true_positives, denominator = true_positives[ids], denominator[ids]
    valid = denominator > 1e-9
    iou = jnp.where(valid, true_positives / (denominator + fuzz), 0.0)
    return jnp.sum(iou, axis=axis) / (jnp.sum(valid.astype("float32")) + fuzz)


class OneHotIoU(IoU):
    """``IoU`` for one-hot labels (argmax along ``axis``); predictions are scores unless
    ``sparse_y_pred``."""

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None, sparse_y_pred=False,
                 axis=-1):
        super().__init__(num_classes, target_class_ids, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        config = super().get_config()
        del config["sparse_y_true"]
        return config


class OneHotMeanIoU(MeanIoU):
    """``MeanIoU`` for one-hot labels (argmax along ``axis``); predictions are scores unless
    ``sparse_y_pred``."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, name=name, dtype=dtype, ignore_class=ignore_class, sparse_y_true=False,
                         sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        config = super().get_config()
        del config["sparse_y_true"]
        return config
