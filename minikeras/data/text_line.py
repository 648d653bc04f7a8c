"""``mk.data.TextLineDataset``: the lines of text files as scalar string Tensors, streamed.

    ds = mk.data.TextLineDataset(["a.txt", "b.txt"])   # b"first line", b"second line", ...

Each file is read line by line when the dataset is iterated (nothing is held in memory);
line endings ("\\n", "\\r\\n") are removed as in tf.data, and the cardinality is unknown.
"""
import os

import numpy as np

from minikeras.data import _indices
from minikeras.data._streams import Stream
from minikeras.data.dataset import Dataset
from minikeras.dtypes import string
from minikeras.errors import NotFoundError
from minikeras.tensor_spec import TensorSpec


def _filenames(filenames):
    if isinstance(filenames, (str, bytes, os.PathLike)):
        filenames = [filenames]
    array = np.asarray(filenames, dtype=object).reshape(-1)
    names = []
    for name in array:
        if isinstance(name, bytes):
            name = name.decode("utf-8")
        if not isinstance(name, (str, os.PathLike)):
            raise TypeError(f"TextLineDataset: `filenames` must be a string, a list of strings or a string Tensor, "
                            f"received {filenames!r}")
        names.append(os.fspath(name))
    return names


class _Lines(Stream):
    def __init__(self, filenames):
        self.filenames = filenames

    def _cardinality(self):
        return _indices.UNKNOWN

    def _spec(self):
        return TensorSpec((), string)

    def _elements(self):
        for filename in self.filenames:
            try:
                handle = open(filename, "rb")
            except OSError as error:
                raise NotFoundError(None, "IteratorGetNext", f"TextLineDataset: {filename}; {error.strerror} "
                                    "[Op:IteratorGetNext]") from error
            with handle:
                for line in handle:
                    if line.endswith(b"\n"):
                        line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
                    yield line


class TextLineDataset(Dataset):
    """The lines of one or more text files, in order (``tf.data.TextLineDataset``).

    Args:
      filenames: a file name, a list of them, or a string Tensor of them.
      compression_type: only None or "" (uncompressed files) is supported.
      buffer_size, num_parallel_reads, name: accepted for TF's signature; files are read in
        order, one at a time.
    """

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        if compression_type not in (None, ""):
            raise ValueError(f"TextLineDataset: compression_type {compression_type!r} is not supported; decompress "
                             "the files first (only uncompressed text is read)")
        super().__init__(_Lines(_filenames(filenames)))
