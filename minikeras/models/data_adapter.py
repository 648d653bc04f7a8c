"""Turns what users pass to fit/evaluate/predict (arrays, Tensors, Datasets) into batches."""
import math

import jax
import numpy as np

from minikeras.tensor import Tensor, Variable


def _to_numpy(x):
    if x is None:
        return None
    if isinstance(x, (Tensor, Variable)):
        return x.numpy()
    if isinstance(x, (list, tuple, dict)):
        return jax.tree_util.tree_map(_to_numpy, x, is_leaf=lambda v: isinstance(v, (Tensor, Variable)))
    return np.asarray(x)


def _num_samples(structure, what):
    leaves = [leaf for leaf in jax.tree_util.tree_leaves(structure) if leaf is not None]
    sizes = {int(np.shape(leaf)[0]) for leaf in leaves if np.ndim(leaf) > 0}
    if len(sizes) > 1:
        raise ValueError(f"{what}: all arrays must have the same number of samples, received first dimensions "
                         f"{sorted(sizes)}")
    return sizes.pop() if sizes else 0


def is_dataset(x):
    from minikeras.data import Dataset
    return isinstance(x, Dataset)


class ArrayBatches:
    """Batches of in-memory arrays: shuffled each epoch by an index permutation (one fancy
    index per batch, no Python loop per example)."""

    def __init__(self, x, y=None, sample_weight=None, batch_size=32, shuffle=False, steps=None):
        self.x, self.y, self.sample_weight = _to_numpy(x), _to_numpy(y), _to_numpy(sample_weight)
        n_x = _num_samples(self.x, "x")
        if self.y is not None:
            n_y = _num_samples(self.y, "y")
            if n_x != n_y:
                raise ValueError(
                    f"Data cardinality is ambiguous: x sizes: {n_x}, y sizes: {n_y}. Make sure all arrays contain the "
                    "same number of samples.")
        if self.sample_weight is not None and _num_samples(self.sample_weight, "sample_weight") != n_x:
            raise ValueError(f"sample_weight has {_num_samples(self.sample_weight, 'sample_weight')} entries, x has "
                             f"{n_x} samples")
        if n_x == 0:
            raise ValueError("Expected input data to be non-empty (x has 0 samples)")
        if batch_size is None:
            batch_size = 32
        if not isinstance(batch_size, (int, np.integer)) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive integer, received {batch_size!r}")
        self.n = n_x
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        self.steps = steps if steps is not None else math.ceil(n_x / self.batch_size)

    def epoch(self, rng):
        order = rng.permutation(self.n) if self.shuffle else None
        for step in range(self.steps):
            start = (step * self.batch_size) % self.n
            index = slice(start, min(start + self.batch_size, self.n)) if order is None else \
                order[start:start + self.batch_size]
            yield tuple(_take(part, index) for part in (self.x, self.y, self.sample_weight))


def _take(structure, index):
    if structure is None:
        return None
    if isinstance(structure, np.ndarray):  # the common case, without a tree walk
        return structure[index]
    return jax.tree_util.tree_map(lambda a: a[index], structure)


class DatasetBatches:
    """Batches from an ``mk.data.Dataset`` yielding ``x``, ``(x, y)`` or ``(x, y, sample_weight)``."""

    def __init__(self, dataset, steps=None):
        self.dataset = dataset
        cardinality = dataset.cardinality()
        if steps is None and cardinality < 0:
            raise ValueError("The Dataset is infinite (or of unknown length): pass steps_per_epoch / steps")
        self.steps = steps if steps is not None else int(cardinality)
        self._iterator = None

    def epoch(self, rng):
        if self._iterator is None or self.steps is None:
            self._iterator = iter(self.dataset)
        for _ in range(self.steps):
            try:
                element = next(self._iterator)
            except StopIteration:
                self._iterator = iter(self.dataset)
                return
            yield check_batch(*unpack(element))
        if self.dataset.cardinality() >= 0:
            self._iterator = None


def check_batch(x, y, sample_weight):
    """A batch from a Dataset whose x, y and sample_weight disagree on the batch size is an
    error here, before it reaches a compiled step."""
    sizes = []
    for what, part in (("x", x), ("y", y), ("sample_weight", sample_weight)):
        leaves = [leaf for leaf in jax.tree_util.tree_leaves(part, is_leaf=lambda v: isinstance(v, (Tensor, Variable)))
                  if np.ndim(leaf) > 0]
        sizes.extend((what, int(np.shape(leaf)[0]) if not isinstance(leaf, (Tensor, Variable)) else leaf.shape[0])
                     for leaf in leaves)
    if len({n for _, n in sizes}) > 1:
        described = ", ".join(f"{what} has {n} samples" for what, n in sizes)
        raise ValueError(f"A batch from the Dataset has parts of different batch sizes: {described}. The Dataset "
                         "must yield (x, y) pairs with one label per example; zip or batch them alike.")
    return x, y, sample_weight


def unpack(data):
    """``x`` | ``(x,)`` | ``(x, y)`` | ``(x, y, sample_weight)`` -> ``(x, y, sample_weight)``."""
    if isinstance(data, tuple):
        if len(data) == 1:
            return data[0], None, None
        if len(data) == 2:
            return data[0], data[1], None
        if len(data) == 3:
            return data
        raise ValueError(f"Data is expected to be x, (x,), (x, y) or (x, y, sample_weight), received a tuple of "
                         f"{len(data)} items")
    return data, None, None


def make_batches(x, y=None, sample_weight=None, batch_size=None, shuffle=False, steps=None):
    if is_dataset(x):
        if y is not None:
            raise ValueError("When x is a Dataset, y must be None (the Dataset yields (x, y))")
        if batch_size is not None:
            raise ValueError("Do not pass batch_size with a Dataset: batch the Dataset itself (dataset.batch(n))")
        return DatasetBatches(x, steps)
    if x is None:
        raise ValueError("x is required")
    return ArrayBatches(x, y, sample_weight, 32 if batch_size is None else batch_size, shuffle, steps)


def split_validation(x, y, sample_weight, validation_split):
    """Keras's rule: the LAST ``validation_split`` fraction of the samples (before shuffling)."""
    if not 0 < validation_split < 1:
        raise ValueError(f"validation_split must be in (0, 1), received {validation_split!r}")
    if is_dataset(x):
        raise ValueError("validation_split is not supported with a Dataset; pass validation_data instead")
    x, y, sample_weight = _to_numpy(x), _to_numpy(y), _to_numpy(sample_weight)
    n = _num_samples(x, "x")
    cut = int(math.floor(n * (1.0 - validation_split)))
    if cut == 0 or cut == n:
        raise ValueError(f"validation_split={validation_split} leaves no samples for training or validation "
                         f"out of {n}")
    head = lambda s: None if s is None else jax.tree_util.tree_map(lambda a: a[:cut], s)  # noqa: E731
    tail = lambda s: None if s is None else jax.tree_util.tree_map(lambda a: a[cut:], s)  # noqa: E731
    return (head(x), head(y), head(sample_weight)), (tail(x), tail(y), tail(sample_weight))
