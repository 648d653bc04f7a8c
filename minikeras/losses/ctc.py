"""Connectionist temporal classification as a Keras loss: ``y_true`` (batch, max_length) integer
labels padded with 0 (which is also the blank class), ``y_pred`` (batch, time, classes) logits."""
from minikeras.losses.base import LossFunctionWrapper, to_float_tensor, to_tensor
from minikeras.ops.creation import ones
from minikeras.ops.ctc import ctc_loss
from minikeras.ops.elementwise import cast
from minikeras.ops.math import not_equal
from minikeras.ops.reduce import reduce_sum


def ctc(y_true, y_pred):
    """The CTC loss per sequence: every label sequence's length is its count of non-zero labels,
    every output sequence is used whole."""
    y_pred = to_float_tensor(y_pred)
    y_true = to_tensor(y_true)
    if y_true.ndim != 2:
        raise ValueError("Targets `y_true` are expected to be a tensor of shape `(batch_size, max_length)` in integer "
                         f"format. Received: y_true.shape={tuple(y_true.shape)}")
    if y_pred.ndim != 3:
        raise ValueError("Logits `y_pred` are expected to be a tensor of shape `(batch_size, max_length, "
                         f"num_classes)`. Received: y_pred.shape={tuple(y_pred.shape)}")
    batch, time = y_pred.shape[0], y_pred.shape[1]
    label_length = cast(reduce_sum(cast(not_equal(y_true, 0), "int32"), axis=-1), "int32")
    return ctc_loss(cast(y_true, "int32"), y_pred, label_length, ones((batch,), dtype="int32") * time, mask_index=0)


class CTC(LossFunctionWrapper):
    """The CTC loss (see ``ctc``)."""

    def __init__(self, reduction="sum_over_batch_size", name="ctc", dtype=None):
        super().__init__(ctc, name=name, reduction=reduction, dtype=dtype)
