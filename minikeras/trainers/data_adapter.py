"""Turns what users pass to fit/evaluate/predict (arrays, Tensors, Datasets) into batches."""
import functools
import itertools
import math
import warnings

import jax
import numpy as np

from minikeras.backend import max_steps_per_epoch
from minikeras.data import INFINITE_CARDINALITY, Dataset
from minikeras.data.python_batches import PyDataset, from_py_dataset, from_python_iterator, is_python_iterator
from minikeras.dtypes import model_input_dtype
from minikeras.tensor import Tensor, Variable
from minikeras.trainers.epoch_passes import Passes


def _is_number_list(x):
    """A (nested) list of Python numbers: one array, as Keras takes it (a list of arrays is
    several inputs)."""
    if not isinstance(x, list) or not x:
        return False
    return all(isinstance(v, (bool, int, float, complex, np.number, np.bool_)) or _is_number_list(v) for v in x)


def _to_numpy(x):
    if x is None:
        return None
    if isinstance(x, (Tensor, Variable)):
        return x.numpy()
    if _is_number_list(x):
        return np.asarray(x)
    if isinstance(x, (list, tuple, dict)):
        return jax.tree_util.tree_map(_to_numpy, x, is_leaf=lambda v: isinstance(v, (Tensor, Variable)))
    return np.asarray(x)


def _check_numeric(structure, what):
    for leaf in jax.tree_util.tree_leaves(structure):
        leaf = np.asarray(leaf)
        if leaf.dtype.kind not in "biufc":
            example = f" (e.g. {leaf.flat[0]!r})" if leaf.size else ""
            raise TypeError(f"{what} has dtype {leaf.dtype}{example}: fit, evaluate and predict take numbers (float or "
                            "integer arrays). Encode strings as numbers first, e.g. np.unique(labels, "
                            "return_inverse=True)[1] for class labels")


def _num_samples(structure, what):
    leaves = [leaf for leaf in jax.tree_util.tree_leaves(structure) if leaf is not None]
    sizes = {int(np.shape(leaf)[0]) for leaf in leaves if np.ndim(leaf) > 0}
    if len(sizes) > 1:
        raise ValueError(f"{what}: all arrays must have the same number of samples, received first dimensions "
                         f"{sorted(sizes)}")
    return sizes.pop() if sizes else 0


def python_batches_as_dataset(x, shuffle=False):
    """A ``PyDataset`` (its batches shuffled with ``shuffle``) or a Python generator as an
    ``mk.data.Dataset`` of its batches (see ``data.python_batches``); anything else as it is."""
    if isinstance(x, PyDataset):
        return from_py_dataset(x, shuffle)
    if is_python_iterator(x):
        return from_python_iterator(x)
    return x


def is_dataset(x):
    return isinstance(x, Dataset)


# Data up to this size may be copied to the device whole for the length of a fit, so that
# steps_per_execution loops take their batches there; larger data is batched on the host.
DEVICE_DATA_LIMIT = 1 << 30


class ArrayBatches:
    """Batches of in-memory arrays: shuffled each pass by an index permutation (one fancy
    index per batch, no Python loop per example). Epochs take them as Keras 3 does
    (``epoch_passes``): with ``steps`` (``steps_per_epoch``) a pass goes on across epochs and
    an epoch stops, with Keras's warning, where the data ends; it never wraps around.

    ``batch_size`` None: Keras's default, ``ceil(n / steps)`` with ``steps``, else 32.
    """

    def __init__(self, x, y=None, sample_weight=None, batch_size=32, shuffle=False, steps=None):
        self.x, self.y, self.sample_weight = _to_numpy(x), _to_numpy(y), _to_numpy(sample_weight)
        for name, part in (("x", self.x), ("y", self.y), ("sample_weight", self.sample_weight)):
            _check_numeric(part, name)
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
            batch_size = math.ceil(n_x / steps) if steps else 32
        if not isinstance(batch_size, (int, np.integer)) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive integer, received {batch_size!r}")
        self.n = n_x
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        self.num_batches = math.ceil(n_x / self.batch_size)
        self.steps = steps if steps is not None else self.num_batches  # an epoch's steps, for the progress bar
        self._passes = Passes(steps, self.num_batches)
        leaves = jax.tree_util.tree_leaves((self.x, self.y, self.sample_weight))
        self.fits_device = sum(leaf.nbytes for leaf in leaves) <= DEVICE_DATA_LIMIT
        self._call_arrays = None
        self.full_batch_signature = None  # StepRunner's key for a full-size batch, set by it

    def epoch(self, rng):
        """This epoch's batches ``(x, y, sample_weight)`` of NumPy arrays (see ``epoch_groups``)."""
        for group in self.epoch_groups(rng, 1):
            yield from group

    def batch(self, order, index):
        """Batch ``index`` of a pass whose example order is ``order`` (None: in order): the
        examples ``order[index * batch_size:(index + 1) * batch_size]`` (the last one shorter)."""
        start = index * self.batch_size
        index = slice(start, min(start + self.batch_size, self.n)) if order is None else \
            order[start:start + self.batch_size]
        return tuple(_take(part, index) for part in (self.x, self.y, self.sample_weight))

    def epoch_groups(self, rng, size):
        """This epoch's batches in ``ArrayGroup``s of up to ``size`` consecutive batches of the
        current pass (a group is shorter where the pass ends), which slice their batches on the
        host only if iterated. A pass that starts in this epoch draws its order from ``rng``
        when shuffling."""
        def new_pass():
            order, position = EpochOrder(rng.permutation(self.n) if self.shuffle else None), 0

            def take(count):
                nonlocal position
                count = min(count, self.num_batches - position)
                group = ArrayGroup(self, order, position, count)
                position += count
                return group
            return take
        return self._passes.epoch(size, new_pass)

    def call_arrays(self):
        """The leaves of ``(x, y, sample_weight)`` (``jax.tree_util`` order) in the dtypes a
        compiled step takes (float64 -> float32, ...), ready for compiled calls (see
        ``_for_calls``): made on the first call, then shared by every epoch of this fit."""
        if self._call_arrays is None:
            leaves = jax.tree_util.tree_leaves((self.x, self.y, self.sample_weight))
            self._call_arrays = _for_calls([np.asarray(leaf, model_input_dtype(leaf.dtype)) for leaf in leaves])
        return self._call_arrays


# Arrays this small go to each compiled call as NumPy: jax.jit's dispatcher copies them as part
# of the call, for less than a separate upload costs (its own XLA launch: about 0.2 ms of each
# fit call in benchmarks/linear_regression.py, 2000 steps of ~2.5 µs).
SMALL_ARRAYS = 1 << 16


def _for_calls(arrays):
    """The NumPy ``arrays`` as compiled calls should take them: as they are when they are
    small, else copied to the device once."""
    return arrays if sum(a.nbytes for a in arrays) <= SMALL_ARRAYS else _to_device(arrays)


# jax.jit's C++ dispatcher moves NumPy arguments to the device several times faster than
# jax.device_put's Python path
_to_device = jax.jit(lambda arrays: arrays)


class EpochOrder:
    """An epoch's example order: the permutation (NumPy), or None when not shuffling; its
    copy for compiled calls is made once, by the first scanned group that gathers with it."""

    def __init__(self, order):
        self.order = order
        self._prepared = None

    def for_calls(self):
        """The permutation as int32, ready for compiled calls (see ``_for_calls``)."""
        if self._prepared is None:
            self._prepared, = _for_calls([self.order.astype(np.int32)])
        return self._prepared


class ArrayGroup:
    """Batches ``first .. first + len - 1`` of a pass of ``ArrayBatches``: iterable (the host
    batches, as ``ArrayBatches.epoch`` yields them), and described by batch start offsets so
    that a compiled loop can take the batches from the whole training arrays itself."""

    def __init__(self, source, order, first, count):
        self.source, self.order, self.first, self.count = source, order, first, count

    def __len__(self):
        return self.count

    def __iter__(self):
        for index in range(self.first, self.first + self.count):
            yield self.source.batch(self.order.order, index)

    def full_starts(self):
        """The group's batch starts (int32, into the epoch's order) if every batch is a full
        ``batch_size`` one, else None."""
        return _full_starts(self.first, self.count, self.source.batch_size, self.source.n)


@functools.lru_cache(maxsize=64)
def _full_starts(first, count, batch_size, n):
    """``index * batch_size`` for the ``count`` batches from ``first`` (see ``_for_calls``); None
    if one of those batches is cut short by the end of the data. (Cached: every epoch, and
    every fit on data of this size, has the same groups.)"""
    starts = np.arange(first, first + count, dtype=np.int64) * batch_size
    if n >= 2 ** 31 or starts.max() + batch_size > n:
        return None
    return _for_calls([starts.astype(np.int32)])[0]


def _take(structure, index):
    if structure is None:
        return None
    if isinstance(structure, np.ndarray):  # the common case, without a tree walk
        return structure[index]
    return jax.tree_util.tree_map(lambda a: a[index], structure)


class DatasetBatches:
    """Batches from an ``mk.data.Dataset`` yielding ``x``, ``(x, y)`` or ``(x, y, sample_weight)``,
    epoch by epoch as Keras 3 takes them (``epoch_passes``): with ``steps`` an iterator goes on
    across epochs until the Dataset ends, and an epoch that reaches its end stops there with
    Keras's warning."""

    def __init__(self, dataset, steps=None):
        self.dataset = dataset
        cardinality = dataset.cardinality()
        if steps is None and cardinality == INFINITE_CARDINALITY:
            raise ValueError("The Dataset is infinite (e.g. it repeats without a count): pass steps_per_epoch / steps")
        # Unknown length (from_generator, filter): each epoch runs until the data ends, as in Keras.
        known = None if cardinality < 0 else int(cardinality)
        self.steps = steps if steps is not None else known
        self._passes = Passes(steps, known)

    def epoch(self, rng):
        for group in self.epoch_groups(rng, 1):
            yield from group

    def epoch_groups(self, rng, size):
        """This epoch's batches in lists of up to ``size`` (shorter where the Dataset ends)."""
        def new_pass():
            iterator = iter(self.dataset)
            return lambda count: [check_batch(*unpack(element)) for element in itertools.islice(iterator, count)]
        return self._passes.epoch(size, new_pass)


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
    cap = max_steps_per_epoch()  # keras.config.set_max_steps_per_epoch, a debugging cap
    if cap and (not steps or cap < steps):
        warnings.warn(f"Limiting steps_per_epoch to {cap}", stacklevel=3)
        steps = cap
    if is_dataset(x):
        if y is not None:
            raise ValueError("When x is a Dataset, y must be None (the Dataset yields (x, y))")
        if batch_size is not None:
            raise ValueError("Do not pass batch_size with a Dataset: batch the Dataset itself (dataset.batch(n))")
        return DatasetBatches(x, steps)
    if x is None:
        raise ValueError("x is required")
    return ArrayBatches(x, y, sample_weight, batch_size, shuffle, steps)


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
