"""``fit(class_weight=...)``: per-class weights turned into per-sample weights, as Keras 3 does."""
import numpy as np

from minikeras.backend import floatx
from minikeras.tensor import Tensor, Variable


def _check_class_weight(class_weight):
    if not isinstance(class_weight, dict):
        raise TypeError(f"fit: `class_weight` must be a dict mapping class indices to weights, received "
                        f"{class_weight!r}")


def class_weight_dataset(dataset, class_weight):
    """``dataset`` (batches of ``(x, y)``) with each batch's sample weights from ``class_weight``
    added, ``(x, y, sample_weight)``, as Keras 3 maps a ``tf.data.Dataset``.

    Raises (when a batch is drawn):
      ValueError: for batches that already carry sample weights or have no labels.
    """
    _check_class_weight(class_weight)

    def weigh(*element):
        if len(element) != 2:
            if len(element) == 3:
                raise ValueError("You cannot `class_weight` and `sample_weight` at the same time.")
            raise ValueError(f"fit: `class_weight` needs a Dataset of (x, y) batches, received elements of "
                             f"{len(element)} parts")
        x, y = element
        return x, y, class_weight_to_sample_weights(y, class_weight)

    return dataset.map(weigh)


def class_weight_to_sample_weights(y, class_weight, sample_weight=None):
    """The sample weights ``fit`` uses for ``class_weight`` (a dict class index -> weight).

    A sample's class is its integer label, the argmax of a one-hot (or probability) row, or
    the rounded value of a ``(n, 1)`` label; classes missing from the dict weigh 1.0.

    Raises:
      ValueError: with ``sample_weight`` as well, or for a model with several outputs (a nested
        ``y``), or when ``y`` is None (as Keras 3).
    """
    _check_class_weight(class_weight)
    if sample_weight is not None:
        raise ValueError("You cannot `class_weight` and `sample_weight` at the same time.")
    if isinstance(y, (list, tuple, dict)):
        raise ValueError("`class_weight` is only supported for Models with a single output.")
    if y is None:
        raise ValueError("fit: `class_weight` needs the labels `y`")
    labels = y.numpy() if isinstance(y, (Tensor, Variable)) else np.asarray(y)
    weights = np.ones((labels.shape[0],), dtype=floatx())
    if labels.ndim > 1:
        labels = np.argmax(labels, axis=-1) if labels.shape[-1] != 1 else np.squeeze(labels, axis=-1)
    labels = np.round(labels).astype("int32")
    if labels.ndim != 1:
        raise ValueError(f"fit: `class_weight` needs one class per sample; the labels have shape {np.shape(y)}")
    # one dict lookup per distinct class, not per sample: fit calls this for every batch of a Dataset
    classes, index = np.unique(labels, return_inverse=True)
    table = np.array([class_weight.get(int(c), 1.0) for c in classes], dtype=weights.dtype)
    return table[index.reshape(-1)] if labels.size else weights
