"""Batches made by Python code, for ``fit``/``evaluate``/``predict``: Keras 3's ``PyDataset``
(``keras.utils.PyDataset``, ``keras.utils.Sequence``) and plain Python generators, each turned
into an ``mk.data.Dataset`` of batches so that the trainers take them as they take a Dataset.

- A ``PyDataset`` gives batch ``i`` from ``__getitem__(i)`` and the number of batches from
  ``__len__`` (or ``num_batches``; None for an endless one). Each pass over it calls
  ``on_epoch_begin()``, visits the batches in order (shuffled when ``fit``'s ``shuffle`` is on,
  as Keras 3 shuffles them, with Python's ``random``), and once the last batch is made calls
  ``on_epoch_end()`` (an epoch of ``steps_per_epoch`` shorter than the data does not). With
  ``workers > 1`` the batches are made by that many threads, up to ``max_queue_size`` ahead,
  and still arrive in order. ``use_multiprocessing=True`` runs them in threads too, with a
  warning: forking a process that runs jax's runtime threads can deadlock.
- A Python generator (or any iterator) is read on from one epoch to the next; it ends an epoch
  when it is exhausted, as in Keras.

The first batch fixes each part's dtype and its sizes beyond the batch axis.
"""
import concurrent.futures
import inspect
import random
import warnings

import numpy as np

from minikeras.data import _indices
from minikeras.data._generator import FromGenerator
from minikeras.data._structure import flatten
from minikeras.data.dataset import Dataset
from minikeras.dtypes import canonical_dtype
from minikeras.tensor_spec import TensorSpec


class PyDataset:
    """Base class of a dataset written in Python: subclass it, implement ``__getitem__(index)``
    (a whole batch: ``x``, ``(x, y)`` or ``(x, y, sample_weight)``) and ``__len__`` (the number
    of batches), optionally ``on_epoch_begin``/``on_epoch_end``; pass an instance to ``fit``.

    Args:
      workers: threads that make batches ahead of the training step (1: made in turn).
      use_multiprocessing: Keras's switch for worker processes; here threads are used instead
        (with a warning), since forking a process that runs jax can deadlock.
      max_queue_size: how many batches the workers may make ahead.

    >>> class Squares(mk.keras.utils.PyDataset):
    ...     def __len__(self):
    ...         return 4
    ...     def __getitem__(self, i):
    ...         x = np.arange(8, dtype="float32")[2 * i:2 * i + 2, None]
    ...         return x, x ** 2
    """

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    def _setting(self, name, default):
        if not hasattr(self, "_" + name):
            warnings.warn("Your `PyDataset` class should call `super().__init__(**kwargs)` in its constructor. "
                          "`**kwargs` can include `workers`, `use_multiprocessing`, `max_queue_size`. Do not pass "
                          "these arguments to `fit()`, as they will be ignored.", stacklevel=3)
            setattr(self, "_" + name, default)
        return getattr(self, "_" + name)

    @property
    def workers(self):
        return self._setting("workers", 1)

    @workers.setter
    def workers(self, value):
        self._workers = value

    @property
    def use_multiprocessing(self):
        return self._setting("use_multiprocessing", False)

    @use_multiprocessing.setter
    def use_multiprocessing(self, value):
        self._use_multiprocessing = value

    @property
    def max_queue_size(self):
        return self._setting("max_queue_size", 10)

    @max_queue_size.setter
    def max_queue_size(self, value):
        self._max_queue_size = value

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__(index), returning one batch")

    @property
    def num_batches(self):
        """The number of batches, or None for an endless dataset (``__len__`` by default)."""
        if hasattr(self, "__len__"):
            return len(self)
        raise NotImplementedError(f"{type(self).__name__} must implement __len__ or the num_batches property")

    def __iter__(self):
        count = self.num_batches
        index = 0
        while count is None or index < count:
            yield self[index]
            index += 1

    def on_epoch_begin(self):
        """Called before each pass over the batches."""

    def on_epoch_end(self):
        """Called after each complete pass over the batches."""


class _Batches(FromGenerator):
    """FromGenerator with a known number of elements per pass."""

    def __init__(self, generator, signature, count):
        super().__init__(generator, signature, ())
        self.count = count

    def _cardinality(self):
        return self.count


def is_python_iterator(x):
    """Whether ``x`` is a Python generator or another iterator (not an array, Tensor or Dataset)."""
    return inspect.isgenerator(x) or (hasattr(x, "__next__") and hasattr(x, "__iter__")
                                      and not isinstance(x, (np.ndarray, Dataset)))


def _signature(batch):
    """TensorSpecs for every part of ``batch``: its dtype, any batch size, its other sizes."""
    if isinstance(batch, list):
        batch = tuple(batch)
    leaves, treedef = flatten(batch)
    specs = []
    for leaf in leaves:
        array = np.asarray(leaf)
        shape = (None,) + array.shape[1:] if array.ndim else ()
        specs.append(TensorSpec(shape, canonical_dtype(array.dtype)))
    return treedef.unflatten(specs)


def from_python_iterator(iterator):
    """A Dataset of the batches ``iterator`` yields, read on across passes (each pass continues
    where the last stopped)."""
    iterator = iter(iterator)
    try:
        first = next(iterator)
    except StopIteration:
        raise ValueError("The generator passed to fit/evaluate/predict yielded no batch") from None
    pending = [first]

    def batches():
        while pending:
            yield pending.pop()
        yield from iterator

    return Dataset(FromGenerator(batches, _signature(first), ()))


def from_py_dataset(py_dataset, shuffle=False):
    """A Dataset of ``py_dataset``'s batches (see the module docstring)."""
    count = py_dataset.num_batches
    workers, queue = max(1, int(py_dataset.workers or 1)), max(1, int(py_dataset.max_queue_size or 1))
    if py_dataset.use_multiprocessing:
        warnings.warn(f"{type(py_dataset).__name__}: use_multiprocessing=True runs its {workers} workers as threads "
                      "(forking a process that runs jax's threads can deadlock)", stacklevel=3)

    def indices():
        if count is None:
            return _endless()
        order = list(range(count))
        if shuffle:
            random.shuffle(order)
        return order

    def batches():
        py_dataset.on_epoch_begin()
        made = (py_dataset[i] for i in indices()) if workers == 1 else _in_threads(py_dataset, indices(), workers,
                                                                                   queue)
        previous = next(made, None)
        for batch in made:
            yield previous
            previous = batch
        if previous is not None:
            # on_epoch_end before the last batch is handed over: the trainer stops asking after
            # the last one, so code after the last yield would never run
            py_dataset.on_epoch_end()
            yield previous

    length = _indices.INFINITE if count is None else int(count)
    return Dataset(_Batches(batches, _signature(py_dataset[0]), length))


def _endless():
    index = 0
    while True:
        yield index
        index += 1


def _in_threads(py_dataset, indices, workers, queue):
    """``py_dataset[i]`` for ``indices`` in order, made by ``workers`` threads up to ``queue`` ahead."""
    indices = iter(indices)
    with concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="mk.PyDataset") as pool:
        ahead = [pool.submit(py_dataset.__getitem__, i) for _, i in zip(range(queue), indices)]
        while ahead:
            batch = ahead.pop(0).result()
            for i in indices:
                ahead.append(pool.submit(py_dataset.__getitem__, i))
                break
            yield batch
