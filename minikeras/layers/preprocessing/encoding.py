"""Indices to one-hot / multi-hot / count vectors, as Keras's ``encode_categorical_inputs``
(on NumPy for the host layers; ``CategoryEncoding`` has the compiled version)."""
import numpy as np

from minikeras.ops.array import expand_dims, one_hot, squeeze
from minikeras.ops.elementwise import cast
from minikeras.ops.reduce import reduce_max, reduce_sum

MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")


def encode(indices, output_mode, depth, what, count_weights=None):
    """``indices`` (ints; values outside [0, depth) count for nothing) encoded as float32.

    A scalar is one sample; one_hot adds a last axis of ``depth`` (replacing a last axis of 1);
    multi_hot and count reduce the last axis of a rank-1 or rank-2 input to ``depth``.
    """
    indices = np.asarray(indices)
    if indices.ndim == 0:
        indices = indices[None]
    if output_mode == "one_hot":
        if indices.shape[-1] == 1 and indices.ndim > 1:
            indices = indices[..., 0]
        out = (indices[..., None] == np.arange(depth)).astype(np.float32)
        return out
    if indices.ndim > 2:
        raise ValueError(f"{what}: when output_mode is not 'int', maximum supported output rank is 2. Received "
                         f"output_mode {output_mode} and input shape {indices.shape}, which would result in output "
                         f"rank {indices.ndim + 1}.")
    rows = indices.reshape(-1, indices.shape[-1]) if indices.ndim == 2 else indices[None]
    out = np.zeros((rows.shape[0], depth), np.float32)
    valid = (rows >= 0) & (rows < depth)
    row_ids = np.broadcast_to(np.arange(rows.shape[0])[:, None], rows.shape)
    if output_mode == "multi_hot":
        out[row_ids[valid], rows[valid]] = 1.0
    else:
        weights = 1.0 if count_weights is None else np.broadcast_to(
            np.asarray(count_weights, np.float32).reshape(rows.shape), rows.shape)[valid]
        np.add.at(out, (row_ids[valid], rows[valid]), weights)
    return out if indices.ndim == 2 else out[0]


def encode_tensor(indices, output_mode, depth, what, dtype, count_weights=None):
    """``encode`` with minikeras ops, usable inside compiled steps (``indices`` an int Tensor)."""
    if indices.ndim == 0:
        indices = expand_dims(indices, -1)
    if output_mode == "one_hot":
        if indices.ndim > 1 and indices.shape[-1] == 1:
            indices = squeeze(indices, -1)
        return one_hot(indices, depth, dtype=dtype)
    if indices.ndim > 2:
        raise ValueError(f"{what}: when output_mode is not 'int', maximum supported output rank is 2. Received "
                         f"output_mode {output_mode} and input shape {indices.shape}, which would result in output "
                         f"rank {indices.ndim + 1}.")
    hot = one_hot(indices, depth, dtype=dtype)  # out-of-range indices give zero rows, as bincount drops them
    if output_mode == "multi_hot":
        return reduce_max(hot, axis=-2)
    if count_weights is not None:
        hot = hot * expand_dims(cast(count_weights, dtype), -1)
    return reduce_sum(hot, axis=-2)
