"""``iter(dataset)``: a tf.data-style iterator over a Dataset's elements; ``as_numpy_iterator()``'s
over their NumPy values (with TF's ``next()`` method, which tutorials call).

``next(it)`` raises StopIteration at the end, as in TF 2 eager code; ``it.get_next()``
raises ``mk.errors.OutOfRangeError`` ("End of sequence"), as TF's iterator does.
"""
from minikeras.data._structure import to_numpy, to_tensors
from minikeras.errors import OutOfRangeError


class DatasetIterator:
    """Yields the elements of one pass over a dataset, as nests of mk Tensors."""

    def __init__(self, elements, spec):
        self._elements = elements
        self._spec = spec

    def __iter__(self):
        return self

    def __next__(self):
        return to_tensors(next(self._elements))

    def get_next(self, name=None):
        """The next element; ``OutOfRangeError`` after the last one."""
        try:
            return self.__next__()
        except StopIteration:
            raise OutOfRangeError(None, "IteratorGetNext", "End of sequence [Op:IteratorGetNext]") from None

    def close(self):
        """Ends the pass early, stopping a prefetch worker (as closing a generator does)."""
        self._elements.close()

    @property
    def element_spec(self):
        """The dataset's ``element_spec``."""
        return self._spec()


class NumpyIterator:
    """Yields the elements of one pass over a dataset as NumPy arrays, as TF's
    ``as_numpy_iterator()``: ``next(it)`` and ``it.next()``."""

    def __init__(self, elements):
        self._elements = elements

    def __iter__(self):
        return self

    def __next__(self):
        return to_numpy(next(self._elements))

    def next(self):
        """The next element (TF's spelling of ``next(it)``)."""
        return self.__next__()

    def close(self):
        """Ends the pass early, stopping a prefetch worker."""
        self._elements.close()
