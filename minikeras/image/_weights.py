"""The 1-D sampling of ``tf.image.resize`` (half-pixel centres, no antialiasing), as index
arrays (nearest) and ``(out, in)`` weight matrices (bilinear, bicubic, area), computed on the
host in float32 as TensorFlow's kernels compute them. A 2-D resize applies one matrix per
axis.
"""
import numpy as np

_KEYS_A = -0.5  # TensorFlow's bicubic with half-pixel centres uses Keys' cubic, a = -0.5
_TABLE_SIZE = 1024  # ... looked up in a table of 1025 offsets, as here


def _scale(in_size, out_size):
    return np.float32(in_size) / np.float32(out_size)


def nearest_indices(in_size, out_size):
    """The input row each output row copies: ``floor((i + 0.5) * scale)``, at most the last."""
    centres = (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * _scale(in_size, out_size)
    return np.minimum(np.floor(centres).astype(np.int64), in_size - 1)


def bilinear(in_size, out_size):
    """Linear interpolation between the two input rows around ``(i + 0.5) * scale - 0.5``."""
    position = (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * _scale(in_size, out_size) - np.float32(0.5)
    floor = np.floor(position)
    lerp = position - floor
    lower = np.maximum(floor.astype(np.int64), 0)
    upper = np.minimum(np.ceil(position).astype(np.int64), in_size - 1)
    weights = np.zeros((out_size, in_size), np.float32)
    rows = np.arange(out_size)
    np.add.at(weights, (rows, lower), np.float32(1) - lerp)
    np.add.at(weights, (rows, upper), lerp)
    return weights


def _keys_table():
    x = np.arange(_TABLE_SIZE + 1, dtype=np.float32) / np.float32(_TABLE_SIZE)
    a = np.float32(_KEYS_A)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x1 = x + np.float32(1)
    far = ((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a
    return near, far


def bicubic(in_size, out_size):
    """Keys' cubic over the four input rows around ``(i + 0.5) * scale - 0.5``; rows outside
    the image get no weight and the others are renormalized (TensorFlow's rule)."""
    near, far = _keys_table()
    position = (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * _scale(in_size, out_size) - np.float32(0.5)
    base = np.floor(position)
    offset = np.rint((position - base) * _TABLE_SIZE).astype(np.int64)
    base = base.astype(np.int64)
    taps = np.stack([far[offset], near[offset], near[_TABLE_SIZE - offset], far[_TABLE_SIZE - offset]], axis=1)
    index = base[:, None] + np.arange(-1, 3)[None, :]
    inside = (index >= 0) & (index < in_size)
    taps = np.where(inside, taps, np.float32(0))
    total = taps.sum(axis=1, keepdims=True)
    taps = np.where(np.abs(total) >= 1000 * np.finfo(np.float32).tiny, taps / np.where(total == 0, 1, total), taps)
    weights = np.zeros((out_size, in_size), np.float32)
    rows = np.repeat(np.arange(out_size), 4)
    np.add.at(weights, (rows, np.clip(index, 0, in_size - 1).ravel()), taps.ravel().astype(np.float32))
    return weights


def area(in_size, out_size):
    """The mean of the input over each output row's box ``[i * scale, (i + 1) * scale)``,
    boundary rows weighted by the fraction inside."""
    scale = float(_scale(in_size, out_size))
    weights = np.zeros((out_size, in_size), np.float64)
    for i in range(out_size):
        start, stop = i * scale, (i + 1) * scale
        for j in range(int(np.floor(start)), int(np.ceil(stop))):
            overlap = min(j + 1, stop) - max(j, start)
            weights[i, min(j, in_size - 1)] += overlap
    return (weights / scale).astype(np.float32)


MATRICES = {"bilinear": bilinear, "bicubic": bicubic, "area": area}
