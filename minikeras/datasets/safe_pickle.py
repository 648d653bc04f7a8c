"""Reading the pickled parts of Keras's dataset files without running foreign code.

CIFAR's batches are Python pickles of a dict holding a NumPy array, and ``imdb.npz`` /
``reuters.npz`` hold object arrays (ragged lists of word indices), which ``.npy`` can only
store as a pickle. ``pickle.load`` would import and call whatever a file names, so these
readers allow only what rebuilding a NumPy array needs (``numpy.ndarray``, ``numpy.dtype``,
``_reconstruct``), as Keras 3 does; anything else is refused with ``pickle.UnpicklingError``.
Plain numeric ``.npy`` members are read with ``allow_pickle=False``.
"""

from __future__ import annotations

import io
import os
import pickle
import zipfile

import numpy as np

ALLOWED_GLOBALS = frozenset({
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
})


class ArrayOnlyUnpickler(pickle.Unpickler):
    """An unpickler that rebuilds NumPy arrays and plain Python values, and nothing else."""

    def find_class(self, module, name):
        if (module, name) in ALLOWED_GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a dataset file: only NumPy arrays "
                                     "and plain Python values are expected; the file is corrupt or not a dataset")


def load_pickle(file, encoding: str = "ASCII"):
    """Unpickles ``file`` (a binary file object) with ``ArrayOnlyUnpickler``.

    ``encoding="bytes"`` reads a Python 2 pickle's ``str`` as ``bytes`` (CIFAR's keys)."""
    return ArrayOnlyUnpickler(file, encoding=encoding).load()


def load_npz(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Return every ``.npy`` member of the ``.npz`` archive at ``path`` by name (without
    ``.npy``). Object arrays are read with ``ArrayOnlyUnpickler``.

    Raises:
        ValueError: ``path`` is not a zip archive; the message names the file.
    """
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as err:
        raise ValueError(f"{os.fspath(path)}: expected an .npz (zip) archive, found: {err}") from None
    arrays = {}
    with archive:
        for member in archive.namelist():
            if member.endswith(".npy"):
                arrays[member[:-len(".npy")]] = _read_npy(io.BytesIO(archive.read(member)))
    return arrays


def _read_npy(buffer: io.BytesIO) -> np.ndarray:
    version = np.lib.format.read_magic(buffer)
    header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    _, _, dtype = header(buffer)
    if not dtype.hasobject:
        buffer.seek(0)
        return np.lib.format.read_array(buffer, allow_pickle=False)
    return load_pickle(buffer)
