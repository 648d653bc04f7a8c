"""Reader for gzip-compressed IDX files, the format of MNIST and Fashion-MNIST.

An IDX file is a big-endian header followed by raw uint8 values:

* images (magic 2051): ``magic, count, rows, cols`` as 4-byte integers, then
  ``count * rows * cols`` pixels, row-major;
* labels (magic 2049): ``magic, count``, then ``count`` labels.

Every check is strict: a file that is not gzip, has the wrong magic, or whose
payload is shorter or longer than its header says raises ``ValueError`` naming
the file, what was expected and what was found. The reader never returns a
silently short array.

Example:
    >>> x, y = read_pair("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz")
    >>> x.shape, y.shape
    ((60000, 28, 28), (60000,))
"""

from __future__ import annotations

import gzip
import os
import struct
import zlib

import numpy as np

IMAGES_MAGIC = 2051
LABELS_MAGIC = 2049

_KINDS = {IMAGES_MAGIC: "images (uint8, 3 dims)", LABELS_MAGIC: "labels (uint8, 1 dim)"}

# Deflate cannot expand data by more than ~1032:1, so a header that promises
# more than this many bytes per compressed byte is lying; rejecting it early
# avoids allocating gigabytes for a corrupt count.
_MAX_GZIP_RATIO = 1100


def read_images(path: str | os.PathLike) -> np.ndarray:
    """Read an IDX image file (magic 2051).

    Args:
        path: a gzip-compressed IDX image file.

    Returns:
        uint8 array of shape ``(count, rows, cols)``.

    Raises:
        ValueError: the file is not gzip, has another magic number, or its
            payload size does not match ``count * rows * cols``.
    """
    return _read(path, IMAGES_MAGIC)


def read_labels(path: str | os.PathLike) -> np.ndarray:
    """Read an IDX label file (magic 2049).

    Args:
        path: a gzip-compressed IDX label file.

    Returns:
        uint8 array of shape ``(count,)``.

    Raises:
        ValueError: the file is not gzip, has another magic number, or its
            payload size does not match ``count``.
    """
    return _read(path, LABELS_MAGIC)


def read_pair(
    images_path: str | os.PathLike, labels_path: str | os.PathLike
) -> tuple[np.ndarray, np.ndarray]:
    """Read an image file and its label file, checking they have the same count.

    Args:
        images_path: gzip IDX image file (magic 2051).
        labels_path: gzip IDX label file (magic 2049).

    Returns:
        ``(images, labels)``: uint8 arrays of shapes ``(n, rows, cols)`` and ``(n,)``.

    Raises:
        ValueError: either file is invalid, or the counts differ.
    """
    images = read_images(images_path)
    labels = read_labels(labels_path)
    if len(images) != len(labels):
        raise ValueError(
            f"{os.fspath(images_path)} holds {len(images)} images but "
            f"{os.fspath(labels_path)} holds {len(labels)} labels; expected equal counts"
        )
    return images, labels


def _read(path: str | os.PathLike, magic: int) -> np.ndarray:
    name = os.fspath(path)
    ndim = 3 if magic == IMAGES_MAGIC else 1
    header_size = 4 * (1 + ndim)
    try:
        with gzip.open(name, "rb") as f:
            header = _read_exactly(f, header_size)
            if len(header) < 4:
                raise ValueError(
                    f"{name}: truncated IDX header: expected {header_size} bytes, "
                    f"found {len(header)}"
                )
            (found,) = struct.unpack(">I", header[:4])
            if found != magic:
                what = _KINDS.get(found, "an unknown IDX type")
                raise ValueError(
                    f"{name}: expected IDX magic {magic} ({_KINDS[magic]}), "
                    f"found {found} ({what})"
                )
            if len(header) < header_size:
                raise ValueError(
                    f"{name}: truncated IDX header: expected {header_size} bytes, "
                    f"found {len(header)}"
                )
            shape = struct.unpack(f">{ndim}I", header[4:])
            size = int(np.prod(shape, dtype=np.int64))
            limit = os.path.getsize(name) * _MAX_GZIP_RATIO
            if size > limit:
                raise ValueError(
                    f"{name}: header promises shape {shape} ({size} bytes) but the "
                    f"compressed file can hold at most about {limit} bytes; "
                    "the file is truncated or corrupt"
                )
            data = np.empty(size, dtype=np.uint8)
            got = _readinto_exactly(f, memoryview(data))
            if got < size:
                raise ValueError(
                    f"{name}: truncated payload: header says shape {shape} "
                    f"({size} bytes), found {got} bytes"
                )
            if f.read(1):
                raise ValueError(
                    f"{name}: trailing data: header says shape {shape} "
                    f"({size} bytes), found more"
                )
    except (gzip.BadGzipFile, EOFError, zlib.error) as err:
        raise ValueError(f"{name}: expected a gzip-compressed IDX file, found: {err}") from err
    return data.reshape(shape)


def _read_exactly(f, n: int) -> bytes:
    chunks = []
    while n > 0:
        chunk = f.read(n)
        if not chunk:
            break
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _readinto_exactly(f, buf: memoryview) -> int:
    total = 0
    while total < len(buf):
        got = f.readinto(buf[total:])
        if not got:
            break
        total += got
    return total
