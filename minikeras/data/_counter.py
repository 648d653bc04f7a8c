"""``mk.data.experimental.Counter``: the infinite dataset start, start + step, start + 2 * step, ..."""
import itertools

import numpy as np

from minikeras.data import _indices
from minikeras.data._streams import Stream
from minikeras.data.dataset import Dataset
from minikeras.dtypes import as_dtype, canonical_dtype
from minikeras.tensor_spec import TensorSpec


class _Count(Stream):
    def __init__(self, start, step, dtype):
        self.start, self.step, self.dtype = start, step, dtype

    def _spec(self):
        return TensorSpec((), self.dtype)

    def _cardinality(self):
        return _indices.INFINITE

    def _elements(self):
        for value in itertools.count(self.start, self.step):
            yield np.asarray(value, self.dtype)


def Counter(start=0, step=1, dtype="int64", name=None):
    """An infinite dataset counting from ``start`` by ``step`` (scalars of ``dtype``: int64 with
    64-bit dtypes enabled, else int32), as ``tf.data.experimental.Counter``; zipped with a
    finite dataset it numbers its elements (e.g. seeds for stateless random ops).

    >>> ds = mk.data.Dataset.zip((images, mk.data.experimental.Counter()))
    """
    dtype = canonical_dtype(as_dtype(dtype))
    if dtype.kind not in "iuf":
        raise ValueError(f"Counter expects a numeric dtype, received {dtype.name}")
    return Dataset(_Count(dtype.type(start).item(), dtype.type(step).item(), dtype))
