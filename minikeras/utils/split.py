"""``split_dataset``: arrays or a Dataset split in two ``mk.data.Dataset``s (train / test)."""
import random

import jax
import numpy as np

from minikeras.data import Dataset
from minikeras.tensor import Tensor, Variable
from minikeras.tensor_spec import TensorSpec


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None):
    """Splits ``dataset`` into a left and a right part, as ``keras.utils.split_dataset``.

    Args:
      dataset: an array, a tuple/list/dict of arrays with the same first dimension, or an
        ``mk.data.Dataset`` (a batched one gives batched splits, with its batch size).
      left_size: a float in (0, 1): the fraction of the examples in the left part; an int: their
        number; None: what ``right_size`` leaves.
      right_size: the same for the right part (taken from the end).
      shuffle: shuffle the examples before splitting (the permutation Keras 3 makes with
        Python's ``random`` under ``seed``; Python's global random state is left alone).
      seed: the shuffling seed (None: a random one).

    Returns:
      ``(left, right)``: two ``mk.data.Dataset``s.

    Example:
      >>> left, right = split_dataset(np.zeros((10, 2)), left_size=0.8)
      >>> len(left), len(right)
      (8, 2)
    """
    nest, batch_size = _as_arrays(dataset)
    leaves = jax.tree_util.tree_leaves(nest)
    total = len(leaves[0])
    if right_size is None and left_size is None:
        raise ValueError("At least one of the `left_size` or `right_size` must be specified. Received: "
                         "left_size=None and right_size=None")
    order = np.arange(total)
    if shuffle:
        if seed is None:
            seed = random.randint(0, int(1e6))
        shuffled = list(order)
        random.Random(seed).shuffle(shuffled)
        order = np.asarray(shuffled, dtype=np.int64)
    left, right = split_sizes(left_size, right_size, total)
    parts = []
    for rows in (order[:left], order[total - right:]):
        part = Dataset.from_tensor_slices(jax.tree_util.tree_map(lambda a, rows=rows: a[rows], nest))
        parts.append(part if batch_size is None else part.batch(batch_size))
    return tuple(parts)


def _as_arrays(dataset):
    """(a nest of NumPy arrays, the batch size of a batched Dataset or None)."""
    if isinstance(dataset, Dataset):
        elements = list(dataset.as_numpy_iterator())
        if not elements:
            raise ValueError("split_dataset: the dataset is empty")
        first = jax.tree_util.tree_leaves(elements[0])[0]
        specs = jax.tree_util.tree_leaves(dataset.element_spec, is_leaf=lambda s: isinstance(s, TensorSpec))
        batched = any(len(spec.shape) and spec.shape[0] is None for spec in specs)
        if batched:
            nest = jax.tree_util.tree_map(lambda *xs: np.concatenate(xs), *elements)
            return nest, len(first)
        return jax.tree_util.tree_map(lambda *xs: np.stack(xs), *elements), None
    if isinstance(dataset, (np.ndarray, Tensor, Variable)):
        return np.asarray(dataset), None
    if isinstance(dataset, (tuple, list, dict)):
        nest = jax.tree_util.tree_map(np.asarray, tuple(dataset) if isinstance(dataset, list) else dataset)
        lengths = {len(a) for a in jax.tree_util.tree_leaves(nest)}
        if len(lengths) != 1:
            raise ValueError(f"split_dataset: the arrays must have the same first dimension, received lengths "
                             f"{sorted(lengths)}")
        return nest, None
    raise TypeError(f"The `dataset` argument must be either a `mk.data.Dataset` object, or a list/tuple of arrays. "
                    f"Received: dataset={dataset!r} of type {type(dataset)}")


def split_sizes(left_size, right_size, total):
    """The two sizes as integers (fractions rounded as Keras 3 rounds them), checked."""
    for name, size in (("left_size", left_size), ("right_size", right_size)):
        if size is not None and type(size) not in (int, float):
            raise TypeError(f"Invalid `{name}` Type. Expected: int or float or None, Received: "
                            f"type({name})={type(size)}.")
        if (type(size) is int and not 0 < size < total) or (type(size) is float and not 0 < size < 1):
            raise ValueError(f"`{name}` should be either a positive integer smaller than {total}, or a float "
                             f"within the range `[0, 1]`. Received: {name}={size}")
    if type(left_size) is float and type(right_size) is float and left_size + right_size > 1:
        raise ValueError("The sum of `left_size` and `right_size` is greater than 1. It must be less than or "
                         "equal to 1.")
    left = round(left_size * total) if type(left_size) is float else left_size
    right = round(right_size * total) if type(right_size) is float else right_size
    left = total - right if left is None else left
    right = total - left if right is None else right
    if left + right > total:
        raise ValueError(f"The sum of `left_size` and `right_size` should be smaller than the {total}. Received: "
                         f"left_size + right_size = {left + right} and total_length = {total}")
    for size, side in ((left, "left"), (right, "right")):
        if size == 0:
            raise ValueError(f"With `dataset` of length={total}, `left_size`={left} and `right_size`={right}. "
                             f"Resulting {side} side dataset split will be empty. Adjust any of the aforementioned "
                             "parameters")
    return int(left), int(right)
