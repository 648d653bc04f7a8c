"""The batches ``adapt(data, batch_size, steps)`` reads: one pass, as NumPy arrays.

Keras's rules: a ``Dataset`` or any other iterable of batches (a generator) is read batch
by batch (``steps`` of them at most); an array, list or Tensor is one batch, or batches of
``batch_size`` rows. Strings come as object arrays of bytes. A preprocessing layer's state
(a vocabulary, a mean) is updated batch by batch, so data that does not fit in memory is
read in one streaming pass.
"""
import numpy as np

from minikeras.string_tensor import StringTensor, bytes_array, is_string_value
from minikeras.tensor import Tensor, Variable


def as_numpy(batch):
    """A batch (Tensor, array, list, str) as a NumPy array (strings: object array of bytes)."""
    if isinstance(batch, StringTensor) or is_string_value(batch):
        return bytes_array(batch)
    if isinstance(batch, (Tensor, Variable)):
        return np.asarray(batch.numpy())
    if isinstance(batch, tuple):
        raise ValueError("adapt() expects batches of inputs only; received a tuple (e.g. (inputs, labels) from a "
                         "dataset): map it to the inputs first, e.g. ds.map(lambda x, y: x)")
    return np.asarray(batch)


def is_array_like(data):
    """Whether ``data`` is one array (not a Dataset or an iterable of batches)."""
    return isinstance(data, (list, np.ndarray, Tensor, Variable, str, bytes)) or is_string_value(data)


def batches(data, batch_size=None, steps=None, column=False):
    """Yields the batches of ``data`` for one adapt pass, as NumPy arrays; with ``column``, an
    array of rank 1 is read as a column (one row per element), as Keras's lookups read it."""
    if is_array_like(data):
        array = as_numpy(data)
        if column and array.ndim == 1:
            array = array[:, None]
        if batch_size is None or array.ndim == 0:
            yield array
            return
        for i, start in enumerate(range(0, len(array), int(batch_size))):
            if steps is not None and i >= steps:
                return
            yield array[start:start + int(batch_size)]
        return
    if isinstance(data, tuple):
        as_numpy(data)  # raises the tuple error
    if not hasattr(data, "__iter__"):
        raise TypeError(f"adapt() expects an array, a list, a Tensor, a Dataset or an iterable of batches; received "
                        f"{type(data).__name__}")
    for i, batch in enumerate(data):
        if steps is not None and i >= steps:
            return
        yield as_numpy(batch)
