"""``mk.data.Dataset``: the part of ``tf.data.Dataset`` that the tutorials use.

    ds = mk.data.Dataset.from_tensor_slices((x_train, y_train))
    ds = ds.shuffle(10_000, seed=0).batch(64).map(augment).prefetch(mk.data.AUTOTUNE)
    for images, labels in ds:          # mk.Tensors, nested as the input
        ...

Datasets built from in-memory arrays keep the arrays on the host and move only index
arrays until ``batch``: each batch is one NumPy fancy-indexing gather per component and
one ``jax.device_put``, never a Python loop per example. ``map`` before ``batch`` runs its
function once per batch with ``jax.vmap`` (see ``Dataset.map``). Other pipelines (after a
``batch``, or built with ``zip`` of mapped datasets) stream elements one by one.
"""
import operator

from minikeras.data import _indices
from minikeras.data._structure import to_numpy, to_tensors

AUTOTUNE = -1
INFINITE_CARDINALITY = _indices.INFINITE
UNKNOWN_CARDINALITY = _indices.UNKNOWN


def _count(value, what, allow_minus_one=True):
    try:
        if isinstance(value, bool):
            raise TypeError
        value = operator.index(value)  # ints, NumPy integers, integer mk.Tensors
    except (TypeError, ValueError):
        raise TypeError(f"Dataset.{what}: expected an integer, received {value!r}") from None
    if value < (-1 if allow_minus_one else 0):
        raise ValueError(f"Dataset.{what}: expected {'-1 or ' if allow_minus_one else ''}a non-negative integer, "
                         f"received {value}")
    return value


def _positive(value, what):
    value = _count(value, what, allow_minus_one=False)
    if value == 0:
        raise ValueError(f"Dataset.{what} must be a positive integer, received 0")
    return value


def _shuffle_seed(seed):
    if seed is None:
        from minikeras.ops.random import numpy_seed
        return numpy_seed()
    return _count(seed, "shuffle(seed=...)", allow_minus_one=False) % (1 << 63)


class Dataset:
    """A sequence of elements (nests of tuples/dicts of mk.Tensors), built and transformed
    like ``tf.data.Dataset``. Iterate it with ``for`` (or ``as_numpy_iterator()``)."""

    # -- construction ------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """One element per row of ``tensors`` (an array, Tensor, tuple or dict of them, nested).

        Every component must have the same first dimension. NumPy arrays are kept on the
        host as they are (not copied; float64 becomes float32 as for every mk.Tensor) and
        only the rows of each batch are transferred.

        >>> ds = mk.data.Dataset.from_tensor_slices(({"a": np.zeros((3, 2))}, np.arange(3)))
        >>> next(iter(ds))[1]
        mk.Tensor(0, shape=(), dtype=int32)
        """
        from minikeras.data._rows import RowDataset, Source
        return RowDataset(Source.from_nest(tensors, "Dataset.from_tensor_slices"))

    @staticmethod
    def from_tensors(tensors, name=None):
        """A dataset of one element: ``tensors`` itself."""
        from minikeras.data._rows import RowDataset, Source
        return RowDataset(Source.from_nest(tensors, "Dataset.from_tensors", single=True))

    @staticmethod
    def range(*args, dtype=None, name=None):
        """``Dataset.range(stop)``, ``range(start, stop[, step])``: integers, like Python's range."""
        import numpy as np
        from minikeras.data._rows import RowDataset, Source
        if not 1 <= len(args) <= 3:
            raise TypeError(f"Dataset.range takes 1 to 3 positional arguments (start, stop, step), received {args!r}")
        values = np.arange(*[int(a) for a in args], dtype=np.int64)
        if dtype is not None:
            from minikeras.dtypes import as_dtype
            values = values.astype(as_dtype(dtype))
        return RowDataset(Source.from_nest(values, "Dataset.range"))

    @staticmethod
    def zip(*datasets, name=None):
        """Elements of several datasets side by side: ``zip((a, b))`` or ``zip(a, b)`` yields
        tuples, ``zip({"x": a, "y": b})`` dicts; it ends with the shortest."""
        from minikeras.data import _streams
        if len(datasets) == 1 and not isinstance(datasets[0], Dataset):
            datasets = datasets[0]
        return _streams.zip_datasets(datasets)

    # -- what every dataset provides ---------------------------------------------------
    def _elements(self):
        """Yields elements as nests of arrays (NumPy or jax); ``__iter__`` wraps them."""
        raise NotImplementedError

    def _cardinality(self):
        raise NotImplementedError

    def __iter__(self):
        for element in self._elements():
            yield to_tensors(element)

    def as_numpy_iterator(self):
        """Iterates over the elements as NumPy arrays (0-d components as NumPy scalars)."""
        for element in self._elements():
            yield to_numpy(element)

    def cardinality(self):
        """The number of elements as a scalar mk.Tensor: ``INFINITE_CARDINALITY`` (-1) for an
        infinite dataset, ``UNKNOWN_CARDINALITY`` (-2) when it cannot be known in advance."""
        from minikeras.ops.creation import constant
        return constant(self._cardinality())

    def __len__(self):
        n = self._cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self):
        return True

    def __repr__(self):
        n = self._cardinality()
        size = {INFINITE_CARDINALITY: "infinite", UNKNOWN_CARDINALITY: "unknown"}.get(n, n)
        return f"<mk.data.Dataset {type(self).__name__.lstrip('_')} cardinality={size}>"

    # -- transformations (streaming versions; RowDataset overrides them) ----------------
    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """Applies ``map_func`` to each element; a tuple element is unpacked into arguments.

        On a dataset of rows from ``from_tensor_slices`` (map before batch), the function is
        applied to whole batches at once, compiled with ``jax.jit(jax.vmap(fn))``: like a
        tf.data function it is traced (once per batch shape), so it must compute with mk ops
        on its inputs - no ``.numpy()``, no Python branches on values - and the values it
        reads from Python or from mk Variables are captured when it is traced. Random draws
        are an error there (one draw would be shared by the whole batch): draw them after
        ``batch``. After ``batch``, and when iterating single elements, the function is
        called eagerly on each element. ``num_parallel_calls`` and ``deterministic`` are
        accepted and ignored.
        """
        from minikeras.data import _streams
        _check_callable(map_func, "map")
        return _streams.Map(self, map_func)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        """Stacks consecutive elements into batches of ``batch_size`` (the last one may be
        smaller unless ``drop_remainder=True``)."""
        from minikeras.data import _streams
        return _streams.Batch(self, _positive(batch_size, "batch(batch_size)"), bool(drop_remainder))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """Shuffles with tf.data's buffer: each output is drawn uniformly from a buffer holding
        the next ``buffer_size`` elements; ``buffer_size >= len(dataset)`` is a full shuffle.

        With ``seed`` (or after ``mk.random.set_seed``) the orders repeat from run to run;
        ``reshuffle_each_iteration`` draws a new order for each pass (each ``iter()``).
        """
        from minikeras.data import _streams
        return _streams.Shuffle(self, _positive(buffer_size, "shuffle(buffer_size)"), _shuffle_seed(seed),
                                bool(reshuffle_each_iteration))

    def repeat(self, count=None, name=None):
        """Repeats the dataset ``count`` times (forever when ``count`` is None or -1)."""
        from minikeras.data import _streams
        count = _repeat_count(count)
        return _streams.Repeat(self, count)

    def take(self, count, name=None):
        """The first ``count`` elements (all of them for -1)."""
        from minikeras.data import _streams
        return _streams.Take(self, _count(count, "take"))

    def skip(self, count, name=None):
        """All but the first ``count`` elements (none for -1)."""
        from minikeras.data import _streams
        return _streams.Skip(self, _count(count, "skip"))

    def unbatch(self, name=None):
        """Splits each element (a batch) back into its rows."""
        from minikeras.data import _streams
        return _streams.Unbatch(self)

    def prefetch(self, buffer_size, name=None):
        """Prepares up to ``buffer_size`` elements ahead on a background thread
        (``AUTOTUNE``: 2): gathers, transfers to the device and earlier ``map`` functions
        overlap with the training step. Those functions run on that thread, so, as in
        tf.data, they should only compute on their inputs."""
        from minikeras.data import _streams
        buffer_size = _count(buffer_size, "prefetch(buffer_size)")
        if buffer_size == 0:
            return self
        return _streams.Prefetch(self, 2 if buffer_size == AUTOTUNE else buffer_size)

    def cache(self, filename="", name=None):
        """Keeps the elements of the first complete pass in memory and replays them after.
        (In-memory only: a ``filename`` is not supported.)"""
        from minikeras.data import _streams
        _check_cache_filename(filename)
        return _streams.Cache(self)


def _repeat_count(count):
    if count is None:
        return None
    count = _count(count, "repeat")
    return None if count == -1 else count


def _check_callable(fn, what):
    if not callable(fn):
        raise TypeError(f"Dataset.{what} expects a callable, received {type(fn).__name__}: {fn!r}")


def _check_cache_filename(filename):
    if filename:
        raise NotImplementedError(f"Dataset.cache(filename={filename!r}): only in-memory caching (filename='') "
                                  "is supported")
