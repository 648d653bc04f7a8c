"""``mk.RaggedTensor``: rows of different lengths, the result of ``mk.strings.split`` and co.

    words = mk.strings.split(["a b c", "d"])
    words.to_list()              # [[b'a', b'b', b'c'], [b'd']]
    words.to_tensor()            # padded with b'' (0 for numbers): shape (2, 3)
    words.row_lengths()          # mk.Tensor([3 1], ...)

Host-side, one ragged dimension after a dense first one (``tf.RaggedTensor`` of ragged rank
1): ``values`` holds the rows one after the other and ``row_splits`` where each row starts.
The values are NumPy arrays (object arrays of bytes for strings); ``to_tensor`` turns them
into a dense mk Tensor.
"""
import numpy as np

from minikeras.string_tensor import StringTensor, check_eager
from minikeras.tensor import Tensor, to_array


def _tensor(array):
    if array.dtype == object:
        return StringTensor.of_bytes(array)
    return Tensor(to_array(array))


class RaggedTensor:
    """Rows of different lengths (ragged rank 1).

    Made with ``from_row_splits``, ``from_row_lengths`` or ``from_rows``; ``mk.strings``
    returns them where TF returns a ``tf.RaggedTensor``.
    """

    __slots__ = ("_values", "_row_splits")

    def __init__(self, values, row_splits):
        check_eager("A RaggedTensor")
        self._values = values
        self._row_splits = np.asarray(row_splits, dtype=np.int64)

    @classmethod
    def from_row_splits(cls, values, row_splits, validate=True):
        values = np.asarray(values) if not isinstance(values, np.ndarray) else values
        splits = np.asarray(row_splits, dtype=np.int64)
        if validate and (splits.ndim != 1 or len(splits) == 0 or splits[0] != 0 or splits[-1] != len(values)
                         or np.any(np.diff(splits) < 0)):
            raise ValueError(f"RaggedTensor: row_splits must start at 0, not decrease and end at len(values) = "
                             f"{len(values)}, received {splits.tolist()}")
        return cls(values, splits)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, validate=True):
        lengths = np.asarray(row_lengths, dtype=np.int64)
        return cls.from_row_splits(values, np.concatenate([[0], np.cumsum(lengths)]), validate)

    @classmethod
    def from_rows(cls, rows, dtype):
        """Rows (sequences) stacked; ``dtype`` is a NumPy dtype (object for strings)."""
        lengths = [len(r) for r in rows]
        values = np.empty(sum(lengths), dtype=dtype)
        start = 0
        for row, n in zip(rows, lengths):
            values[start:start + n] = row
            start += n
        return cls(values, np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]))

    # -- description ---------------------------------------------------------------------
    @property
    def shape(self):
        return (len(self._row_splits) - 1, None)

    @property
    def dtype(self):
        return np.dtype(self._values.dtype)

    @property
    def ragged_rank(self):
        return 1

    @property
    def values(self):
        return _tensor(self._values)

    flat_values = values

    @property
    def row_splits(self):
        return Tensor(to_array(self._row_splits))

    def row_lengths(self):
        return Tensor(to_array(np.diff(self._row_splits)))

    def __len__(self):
        return len(self._row_splits) - 1

    def _row(self, i):
        return self._values[self._row_splits[i]:self._row_splits[i + 1]]

    def __getitem__(self, index):
        if isinstance(index, (int, np.integer)):
            n = len(self)
            if not -n <= index < n:
                raise IndexError(f"RaggedTensor index {index} out of range for {n} rows")
            return _tensor(self._row(index % n))
        if isinstance(index, slice):
            rows = [self._row(i) for i in range(*index.indices(len(self)))]
            return RaggedTensor.from_rows(rows, self._values.dtype)
        raise TypeError(f"RaggedTensor indexing takes an int or a slice, received {index!r}")

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    # -- conversions -----------------------------------------------------------------------
    def numpy(self):
        """An object array holding one NumPy array per row, as ``tf.RaggedTensor.numpy()``."""
        out = np.empty(len(self), dtype=object)
        for i in range(len(self)):
            out[i] = self._row(i).copy()
        return out

    def to_list(self):
        return [self._row(i).tolist() for i in range(len(self))]

    def to_tensor(self, default_value=None, shape=None):
        """The rows padded at the end with ``default_value`` (b'' for strings, 0 for numbers)
        to the longest row, or cut/padded to ``shape = (rows, columns)`` (None: as is)."""
        lengths = np.diff(self._row_splits)
        rows = len(self) if shape is None or shape[0] is None else int(shape[0])
        width = int(lengths.max(initial=0)) if shape is None or shape[1] is None else int(shape[1])
        if default_value is None:
            default_value = b"" if self._values.dtype == object else 0
        elif isinstance(default_value, str):
            default_value = default_value.encode("utf-8")
        out = np.full((rows, width), default_value, dtype=self._values.dtype)
        for i in range(min(rows, len(self))):
            row = self._row(i)[:width]
            out[i, :len(row)] = row
        return _tensor(out)

    def __repr__(self):
        return f"<mk.RaggedTensor {self.to_list()}>"
