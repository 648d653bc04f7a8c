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
``_rows``; ``filter``/``enumerate``/``concatenate`` in ``_select``, ``padded_batch`` in
``_padded``, ``from_generator`` in ``_generator``): its methods check their arguments
(``_validation``) and wrap the next stage. Each stage also derives the element spec
(``_specs``).
"""
import numpy as np

from minikeras.data import _indices, _validation as check
from minikeras.data._generator import FromGenerator, signature_from
from minikeras.data._padded import PaddedBatch
from minikeras.data._rows import RowDataset, Source, zip_streams
from minikeras.data._select import Concatenate, Enumerate, Filter, check_predicate
from minikeras.data._structure import flatten, to_tensors
from minikeras.data.iterator import DatasetIterator, NumpyIterator
from minikeras.dtypes import as_dtype
from minikeras.ops.creation import constant

AUTOTUNE = -1
INFINITE_CARDINALITY = _indices.INFINITE
UNKNOWN_CARDINALITY = _indices.UNKNOWN


class Dataset:
    """A sequence of elements (nests of tuples/dicts of mk.Tensors), built and transformed
    like ``tf.data.Dataset``. Iterate it with ``for`` (or ``as_numpy_iterator()``).

    Datasets are made by ``from_tensor_slices``, ``from_tensors``, ``range``, ``zip``,
    ``from_generator`` and the transformations; ``element_spec`` describes their elements.

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

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None,
                       name=None):
        """Elements yielded by ``generator(*args)`` (called again for each pass), converted to
        the dtypes of ``output_signature`` (a nest of ``mk.TensorSpec``; None sizes match any
        size). An element of another shape, dtype or structure raises InvalidArgumentError
        when it is reached, as in tf.data. The cardinality is unknown.

        >>> def gen():
        ...     for i in range(3):
        ...         yield np.arange(i), i
        >>> ds = mk.data.Dataset.from_generator(gen, output_signature=(
        ...     mk.TensorSpec(shape=(None,), dtype=mk.int32), mk.TensorSpec(shape=(), dtype=mk.int32)))
        """
        if not callable(generator):
            raise TypeError(f"`generator` must be a Python callable, received {type(generator).__name__}")
        signature = signature_from(output_signature, output_types, output_shapes)
        args = tuple(np.asarray(a) for a in (args or ()))
        return Dataset(FromGenerator(generator, signature, args))

    # -- what every dataset provides ---------------------------------------------------
    def _elements(self):
        """Yields elements as nests of arrays (NumPy or jax); ``__iter__`` wraps them."""
        return self._stream._elements()

    def _cardinality(self):
        return self._stream._cardinality()

    def __iter__(self):
        return DatasetIterator(self._elements(), self._stream._spec)

    @property
    def element_spec(self):
        """The type of each element: a nest of ``mk.TensorSpec`` shaped like the elements,
        None for sizes not known in advance (a batch's size without ``drop_remainder``)."""
        return self._stream._spec()

    def reduce(self, initial_state, reduce_func, name=None):
        """Folds the dataset into one value: ``state = reduce_func(state, element)`` for each
        element (the element as one argument, a tuple stays a tuple), starting from
        ``initial_state``; returns the final state as mk Tensors.

        >>> mk.data.Dataset.range(5).reduce(0, lambda count, _: count + 1)
        mk.Tensor(5, shape=(), dtype=int32)

        Raises:
          TypeError: the new state's structure or dtypes differ from ``initial_state``'s.
        """
        check.function(reduce_func, "reduce")
        state = to_tensors(initial_state)
        expected_leaves, expected_tree = flatten(state)
        for element in self:
            new_state = reduce_func(state, element)
            new_state = to_tensors(tuple(new_state) if isinstance(new_state, list) else new_state)
            leaves, tree = flatten(new_state)
            if tree != expected_tree:
                raise TypeError(f"Dataset.reduce: the new state must have the initial state's structure "
                                f"{expected_tree}, received {tree}")
            for old, new in zip(expected_leaves, leaves):
                if old.dtype != new.dtype:
                    raise TypeError(f"The element types for the new state must match the initial state. Expected "
                                    f"{old.dtype.name} but got {new.dtype.name}.")
            state = new_state
        return state

    def as_numpy_iterator(self):
        """Iterates over the elements as NumPy arrays (0-d components as NumPy scalars); the
        iterator has TF's ``next()`` method too."""
        return NumpyIterator(self._elements())

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

    def filter(self, predicate, name=None):
        """The elements for which ``predicate`` (a tuple element unpacked into arguments, as
        in ``map``) returns a scalar bool True. The cardinality becomes unknown."""
        check.function(predicate, "filter")
        check_predicate(predicate, self._stream._spec())
        return Dataset(Filter(self._stream, predicate))

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False, name=None):
        """Batches elements whose shapes differ, padding each component with
        ``padding_values`` (default 0) to ``padded_shapes`` (a nest like the element; None or
        -1 sizes, or ``padded_shapes=None``, pad to the longest element of each batch)."""
        batch_size = check.positive(batch_size, "padded_batch(batch_size)")
        return Dataset(PaddedBatch(self._stream, batch_size, padded_shapes, padding_values, bool(drop_remainder)))

    def concatenate(self, dataset, name=None):
        """This dataset's elements, then ``dataset``'s; their structures and dtypes must match."""
        if not isinstance(dataset, Dataset):
            raise TypeError(f"Dataset.concatenate expects a Dataset, received {type(dataset).__name__}")
        return Dataset(Concatenate(self._stream, dataset._stream))

    def enumerate(self, start=0, name=None):
        """``(index, element)`` pairs, the index counting from ``start`` (int64 in TF; int32
        here unless x64 is enabled)."""
        return Dataset(Enumerate(self._stream, check.count(start, "enumerate(start)", allow_minus_one=False)))

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
