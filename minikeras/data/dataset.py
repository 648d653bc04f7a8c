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

A Dataset holds one pipeline stage (``_streams.Stream``; the stages over rows are in
``_rows``): its methods check their arguments (``_validation``) and wrap the next stage.
"""
import numpy as np

from minikeras.data import _indices, _validation as check
from minikeras.data._rows import RowDataset, Source, zip_streams
from minikeras.data._structure import flatten, to_numpy, to_tensors
from minikeras.dtypes import as_dtype
from minikeras.ops.creation import constant

AUTOTUNE = -1
INFINITE_CARDINALITY = _indices.INFINITE
UNKNOWN_CARDINALITY = _indices.UNKNOWN


class Dataset:
    """A sequence of elements (nests of tuples/dicts of mk.Tensors), built and transformed
    like ``tf.data.Dataset``. Iterate it with ``for`` (or ``as_numpy_iterator()``).

    Datasets are made by ``from_tensor_slices``, ``from_tensors``, ``range``, ``zip`` and
    the transformations.

    Args:
      stream: the pipeline stage (a ``_streams.Stream``) that produces the elements.
    """

    def __init__(self, stream):
        self._stream = stream

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
        return Dataset(RowDataset(Source.from_nest(tensors, "Dataset.from_tensor_slices")))

    @staticmethod
    def from_tensors(tensors, name=None):
        """A dataset of one element: ``tensors`` itself."""
        return Dataset(RowDataset(Source.from_nest(tensors, "Dataset.from_tensors", single=True)))

    @staticmethod
    def range(*args, dtype=None, name=None):
        """``Dataset.range(stop)``, ``range(start, stop[, step])``: integers, like Python's range."""
        if not 1 <= len(args) <= 3:
            raise TypeError(f"Dataset.range takes 1 to 3 positional arguments (start, stop, step), received {args!r}")
        values = np.arange(*[int(a) for a in args], dtype=np.int64)
        if dtype is not None:
            values = values.astype(as_dtype(dtype))
        return Dataset(RowDataset(Source.from_nest(values, "Dataset.range")))

    @staticmethod
    def zip(*datasets, name=None):
        """Elements of several datasets side by side: ``zip((a, b))`` or ``zip(a, b)`` yields
        tuples, ``zip({"x": a, "y": b})`` dicts; it ends with the shortest."""
        if len(datasets) == 1 and not isinstance(datasets[0], Dataset):
            datasets = datasets[0]
        members, treedef = flatten(datasets)
        if not members or not all(isinstance(d, Dataset) for d in members):
            raise TypeError(f"Dataset.zip expects a tuple or dict of Datasets, received {datasets!r}")
        return Dataset(zip_streams(treedef.unflatten([d._stream for d in members])))

    # -- what every dataset provides ---------------------------------------------------
    def _elements(self):
        """Yields elements as nests of arrays (NumPy or jax); ``__iter__`` wraps them."""
        return self._stream._elements()

    def _cardinality(self):
        return self._stream._cardinality()

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
        return f"<mk.data.Dataset {type(self._stream).__name__.lstrip('_')} cardinality={size}>"

    # -- transformations (each stage decides how: rows by index plans, others streaming) --
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
        check.function(map_func, "map")
        return Dataset(self._stream.map(map_func))

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        """Stacks consecutive elements into batches of ``batch_size`` (the last one may be
        smaller unless ``drop_remainder=True``)."""
        return Dataset(self._stream.batch(check.positive(batch_size, "batch(batch_size)"), bool(drop_remainder)))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """Shuffles with tf.data's buffer: each output is drawn uniformly from a buffer holding
        the next ``buffer_size`` elements; ``buffer_size >= len(dataset)`` is a full shuffle.

        With ``seed`` (or after ``mk.random.set_seed``) the orders repeat from run to run;
        ``reshuffle_each_iteration`` draws a new order for each pass (each ``iter()``).
        """
        buffer_size = check.positive(buffer_size, "shuffle(buffer_size)")
        return Dataset(self._stream.shuffle(buffer_size, check.shuffle_seed(seed), bool(reshuffle_each_iteration)))

    def repeat(self, count=None, name=None):
        """Repeats the dataset ``count`` times (forever when ``count`` is None or -1)."""
        return Dataset(self._stream.repeat(check.repeat_count(count)))

    def take(self, count, name=None):
        """The first ``count`` elements (all of them for -1)."""
        return Dataset(self._stream.take(check.count(count, "take")))

    def skip(self, count, name=None):
        """All but the first ``count`` elements (none for -1)."""
        return Dataset(self._stream.skip(check.count(count, "skip")))

    def unbatch(self, name=None):
        """Splits each element (a batch) back into its rows."""
        return Dataset(self._stream.unbatch())

    def prefetch(self, buffer_size, name=None):
        """Prepares up to ``buffer_size`` elements ahead on a background thread
        (``AUTOTUNE``: 2): gathers, transfers to the device and earlier ``map`` functions
        overlap with the training step. Those functions run on that thread, so, as in
        tf.data, they should only compute on their inputs."""
        buffer_size = check.count(buffer_size, "prefetch(buffer_size)")
        if buffer_size == 0:
            return self
        return Dataset(self._stream.prefetch(2 if buffer_size == AUTOTUNE else buffer_size))

    def cache(self, filename="", name=None):
        """Keeps the elements of the first complete pass in memory and replays them after.
        (In-memory only: a ``filename`` is not supported.)"""
        check.cache_filename(filename)
        return Dataset(self._stream.cache())
