"""Reader for CIFAR's "python version" archives (Krizhevsky, 2009): a ``.tar.gz`` of pickled
batches.

Each batch is a Python 2 pickle of a dict whose ``bytes`` keys include ``b"data"`` (uint8,
``(n, 3072)``: 1024 red, 1024 green, then 1024 blue values, rows top to bottom) and the
labels (``b"labels"`` for CIFAR-10, ``b"fine_labels"`` and ``b"coarse_labels"`` for CIFAR-100,
lists of ints). The batches are read straight from the archive (nothing is extracted) with
``safe_pickle``'s unpickler, which rebuilds NumPy arrays and nothing else.
"""

from __future__ import annotations

import os
import tarfile

import numpy as np

from . import safe_pickle


def read_batches(archive: str | os.PathLike, members: list[str], label_key: str) -> list[tuple[np.ndarray, list]]:
    """Return ``(data, labels)`` of each batch ``members`` names in the tar.gz ``archive``,
    ``data`` reshaped to ``(n, 3, 32, 32)`` (channels first, as stored).

    Raises:
        ValueError: the archive is not a tar file, lacks a member, or a batch lacks
            ``label_key`` or ``data``, or its data is not ``(n, 3072)`` uint8; the message
            names the archive and the member.
    """
    name = os.fspath(archive)
    try:
        with tarfile.open(name, "r:*") as tar:
            return [_read_batch(tar, name, member, label_key) for member in members]
    except tarfile.TarError as err:
        raise ValueError(f"{name}: expected CIFAR's python tar.gz archive, found: {err}") from None


def _read_batch(tar: tarfile.TarFile, name: str, member: str, label_key: str) -> tuple[np.ndarray, list]:
    try:
        file = tar.extractfile(member)
    except KeyError:
        file = None
    if file is None:
        raise ValueError(f"{name}: expected a file {member!r} in the archive, found none")
    with file:
        batch = safe_pickle.load_pickle(file, encoding="bytes")
    found = sorted(k.decode("utf8") for k in batch) if isinstance(batch, dict) else type(batch).__name__
    if not isinstance(batch, dict) or b"data" not in batch or label_key.encode() not in batch:
        raise ValueError(f"{name}/{member}: expected a dict with 'data' and {label_key!r}, found {found}")
    data, labels = batch[b"data"], batch[label_key.encode()]
    if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3 * 32 * 32:
        what = f"{data.dtype} {data.shape}" if isinstance(data, np.ndarray) else type(data).__name__
        raise ValueError(f"{name}/{member}: expected 'data' of uint8 (n, 3072), found {what}")
    if len(labels) != len(data):
        raise ValueError(f"{name}/{member}: {len(data)} images but {len(labels)} labels; expected equal counts")
    return data.reshape(len(data), 3, 32, 32), labels
