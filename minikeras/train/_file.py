"""One checkpoint, one HDF5 file: ``<prefix>.h5`` holds a dataset per checkpoint key.

The keys (``net/l1/kernel/.ATTRIBUTES/VARIABLE_VALUE``...) are the datasets' paths in the
file; the root attribute ``minikeras_checkpoint`` marks the format. bfloat16 values are
stored as their uint16 bits with a ``dtype`` attribute. Files are written atomically (a
temporary file renamed over the target), so a reader sees the old file or the whole new one.
Nothing is pickled.
"""
import io
import os

import h5py
import numpy as np

from minikeras.dtypes import bfloat16
from minikeras.errors import DataLossError, NotFoundError
from minikeras.saving import atomic_write

SUFFIX = ".h5"
FORMAT = 1


def file_of(prefix):
    """The file behind a checkpoint path: ``<prefix>.h5``, or ``prefix`` itself if it names one."""
    prefix = os.fspath(prefix)
    if prefix.endswith(SUFFIX) and os.path.isfile(prefix):
        return prefix
    return prefix + SUFFIX


def exists(prefix):
    return os.path.isfile(file_of(prefix))


def write(prefix, arrays):
    """Writes ``{key: numpy array}`` to ``<prefix>.h5`` atomically; creates the directory."""
    path = file_of(prefix)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)

    buffer = io.BytesIO()  # built in memory: a disk error comes from one plain write, not from h5py
    with h5py.File(buffer, "w") as f:
        f.attrs["minikeras_checkpoint"] = FORMAT
        for key, array in arrays.items():
            if array.dtype == bfloat16:
                f.create_dataset(key, data=array.view(np.uint16)).attrs["dtype"] = "bfloat16"
            else:
                f.create_dataset(key, data=array)
    atomic_write(path, buffer.getvalue())


def read(prefix):
    """``{key: numpy array}`` from the checkpoint at ``prefix``.

    Raises:
      NotFoundError: no such checkpoint file.
      DataLossError: the file is not a minikeras checkpoint, or it is truncated.
    """
    path = file_of(prefix)
    if not os.path.isfile(path):
        raise NotFoundError(None, None, f"Error when restoring from checkpoint at {os.fspath(prefix)}: failed to find "
                                        f"the checkpoint file '{path}'. Please double-check that the path is correct.")
    try:
        with h5py.File(path, "r") as f:
            if "minikeras_checkpoint" not in f.attrs:
                raise DataLossError(None, None, f"'{path}' is an HDF5 file but not a checkpoint written by "
                                                "mk.train.Checkpoint (for weights files use model.load_weights)")
            arrays = {}
            f.visititems(lambda key, item: _collect(arrays, key, item))
            return arrays
    except OSError as error:
        raise DataLossError(None, None, f"Cannot read the checkpoint '{path}': truncated or corrupted ({error})") \
            from error


def _collect(arrays, key, item):
    if isinstance(item, h5py.Dataset):
        value = item[()]
        arrays[key] = value.view(bfloat16) if item.attrs.get("dtype") == "bfloat16" else np.asarray(value)
