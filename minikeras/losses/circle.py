"""The Circle loss for metric learning (Sun et al. 2020), with Keras 3's formula: ``y_pred`` are
L2-normalized embeddings, ``y_true`` their class ids; pairs of the same class are pulled
together and pairs of different classes pushed apart, each weighted by how far it is from its
optimum. The per-sample losses come with a mask of the positive ones, so that the reduction
averages over those (as Keras's loss mask does)."""
from minikeras.losses.base import LossFunctionWrapper, to_float_tensor
from minikeras.ops.array import transpose
from minikeras.ops.creation import eye
from minikeras.ops.elementwise import cast
from minikeras.ops.linalg import matmul
from minikeras.ops.math import equal, logical_and, logical_not, maximum, softplus, where
from minikeras.ops.reduce import reduce_logsumexp
from minikeras.ops.reshape import reshape


def _pos_neg_masks(query_labels, key_labels, remove_diagonal):
    query_labels = reshape(query_labels, (-1, 1)) if query_labels.ndim == 1 else query_labels
    key_labels = reshape(key_labels, (-1, 1)) if key_labels.ndim == 1 else key_labels
    positive = equal(query_labels, transpose(key_labels))
    negative = logical_not(positive)
    if remove_diagonal:
        off_diagonal = logical_not(cast(eye(query_labels.shape[0], key_labels.shape[0]), "bool"))
        positive = logical_and(positive, off_diagonal)
    return positive, negative


def circle(y_true, y_pred, ref_labels=None, ref_embeddings=None, remove_diagonal=True, gamma=80, margin=0.4):
    """The per-sample Circle loss of ``y_pred`` (batch, dim) against ``ref_embeddings`` (default:
    the batch itself) with class ids ``y_true`` and ``ref_labels``."""
    y_pred = to_float_tensor(y_pred)
    y_true = cast(y_true, "int32")
    ref_embeddings = y_pred if ref_embeddings is None else to_float_tensor(ref_embeddings)
    ref_labels = y_true if ref_labels is None else cast(ref_labels, "int32")
    distances = maximum(1.0 - matmul(y_pred, transpose(ref_embeddings)), 0.0)
    positive, negative = _pos_neg_masks(y_true, ref_labels, remove_diagonal)
    pos_weights = maximum((margin + distances) * cast(positive, distances.dtype), 0.0)
    neg_weights = maximum((1.0 + margin - distances) * cast(negative, distances.dtype), 0.0)
    pos_wdists = -1.0 * gamma * pos_weights * (margin - distances)
    neg_wdists = gamma * neg_weights * ((1.0 - margin) - distances)
    p_loss = reduce_logsumexp(where(positive, pos_wdists, float("-inf")), axis=1)
    n_loss = reduce_logsumexp(where(negative, neg_wdists, float("-inf")), axis=1)
    return softplus(p_loss + n_loss)


class Circle(LossFunctionWrapper):
    """The Circle loss (see ``circle``), averaged over the samples whose loss is positive."""

    def __init__(self, gamma=80.0, margin=0.4, remove_diagonal=True, reduction="sum_over_batch_size", name="circle",
                 dtype=None):
        super().__init__(circle, name=name, reduction=reduction, dtype=dtype, gamma=gamma, margin=margin,
                         remove_diagonal=remove_diagonal)
        self.gamma, self.margin, self.remove_diagonal = gamma, margin, remove_diagonal

    def _call_with_mask(self, y_true, y_pred):
        losses = self.call(y_true, y_pred)
        return losses, losses > 0
