"""Pipeline stages over rows of in-memory arrays: index plans until ``batch``, then one gather per batch."""
import functools
import threading

import jax
import numpy as np

from minikeras.data import _indices, _specs
from minikeras.data._streams import Stream, Zip
from minikeras.data._strings import eager_rows, runs_on_host, spec_from_rows, to_device
from minikeras.data._structure import call_on_element, flatten, leaf_names, to_host_array
from minikeras.data.host_calls import HostOnlyCall, with_host_fallback

_UNBATCHED_BLOCK = 1024  # rows gathered at a time when iterating element by element


class Source:
    """The host arrays behind a RowDataset: ``leaves`` (NumPy, equal first dims) and their nest."""

    def __init__(self, leaves, treedef):
        self._leaves = leaves
        self.treedef = treedef
        self.n = len(leaves[0]) if leaves else 0

    @property
    def leaves(self):
        return self._leaves

    @classmethod
    def from_nest(cls, nest, what, single=False):
        leaves, treedef = flatten(nest)
        if not leaves:
            raise ValueError(f"{what}: received an empty structure {nest!r}; give at least one array")
        names = leaf_names(nest)
        arrays = [to_host_array(leaf, what) for leaf in leaves]
        if single:
            return cls([a[None] for a in arrays], treedef)
        for name, array in zip(names, arrays):
            if array.ndim == 0:
                raise ValueError(f"{what}: component {name} is a scalar (shape ()); slicing needs at least one "
                                 "dimension (use Dataset.from_tensors for a single element)")
        if len({a.shape[0] for a in arrays}) > 1:
            shapes = ", ".join(f"{name}: {a.shape}" for name, a in zip(names, arrays))
            raise ValueError(f"{what}: all components must have the same size in their first dimension, "
                             f"received shapes {shapes}")
        return cls(arrays, treedef)

    def gather(self, index):
        return [_indices.gather(leaf, index) for leaf in self.leaves]

    def spec(self):
        """The spec of one row."""
        return _specs.of_arrays(self.leaves, self.treedef, drop_first=True)


class CachedSource(Source):
    """The rows of the first pass over ``plan``, with ``fns`` applied, gathered on first use
    (``cache``): later passes replay them without recomputing (or reshuffling) anything."""

    def __init__(self, source, plan, fns):
        self._source, self._plan = source, plan
        self._lock = threading.Lock()
        self._leaves = self._treedef = None
        self.n = plan.cardinality()
        self._apply = row_function(source, fns) if fns else None
        self._fns = tuple(fns)

    def spec(self):
        return spec_after(self._source, self._fns)  # without materializing the cache

    @property
    def leaves(self):
        with self._lock:
            if self._leaves is None:
                self._materialize()
        return self._leaves

    @property
    def treedef(self):
        self.leaves  # noqa: B018 - materializes
        return self._treedef

    def _materialize(self):
        source, apply = self._source, self._apply
        if apply is None:
            index = np.concatenate(list(self._plan.chunks()) or [np.empty(0, np.int64)])
            self._leaves, self._treedef = source.gather(index), source.treedef
            return
        pieces, treedef = [], None
        for index in _indices.group(self._plan.chunks(), 4096, False):
            batch = source.treedef.unflatten(to_device(source.gather(index)))
            leaves, treedef = flatten(apply(batch))
            pieces.append([np.asarray(leaf) for leaf in leaves])
        if not pieces:
            raise ValueError("Dataset.cache after map on an empty dataset is not supported")
        self._leaves = [np.concatenate(parts) for parts in zip(*pieces)]
        self._treedef = treedef


def spec_after(source, fns):
    """The spec of ``source``'s rows after ``fns``: traced, or run on the first rows for strings."""
    spec = source.spec()
    if fns and runs_on_host(spec, fns):
        return spec_from_rows(source.gather(np.arange(min(source.n, 2))), source.treedef, fns)
    try:
        for fn in fns:
            spec = _specs.traced(fn, spec)
    except HostOnlyCall:
        return spec_from_rows(source.gather(np.arange(min(source.n, 2))), source.treedef, fns)
    return spec


def row_function(source, fns):
    """The function applying ``fns`` to a batch of ``source``'s rows: vmapped and compiled for
    numbers, eager row by row when the rows hold strings or a function runs on the host."""
    if runs_on_host(source.spec(), fns):
        return eager_rows(fns)
    return with_host_fallback(batched_function(fns), eager_rows(fns))


def batched_function(fns):
    """One compiled function applying per-element functions to a whole batch with ``jax.vmap``.

    Like tf.data, which traces a map function into a graph, each function is traced once per
    batch signature: Python values and mk Variables it reads are captured at that moment.
    Tracing also turns what cannot work per batch (random draws, ``.numpy()``, Python
    branches on values) into an error instead of a silently shared result.
    """
    def run(batch):
        for fn in fns:
            try:
                batch = jax.vmap(functools.partial(call_on_element, fn))(batch)
            except HostOnlyCall:
                raise  # row_function's fallback runs the functions eagerly instead
            except Exception as error:  # noqa: BLE001 - re-raised with context
                raise _map_error(fn, error) from error
        return batch
    return jax.jit(run)


def _map_error(fn, error):
    name = getattr(fn, "__name__", type(fn).__name__)
    text = str(error)
    if "random_generator" in text:
        reason = ("it draws random numbers, which under one vmapped call would be the same for every element. "
                  "Apply the random part after .batch(), with one draw per row "
                  "(e.g. mk.random.uniform((batch_size, ...)))")
    else:
        reason = ("like a tf.data function it is traced, so it must compute with mk ops on its inputs (no "
                  ".numpy(), no Python `if` on values, no assignments to Variables); or move .map() after .batch()")
    message = (f"Dataset.map({name}): the function is applied to whole batches of elements with jax.vmap "
               f"(map before batch), and it failed: {type(error).__name__}: {text}. Note: {reason}")
    try:
        return type(error)(message)
    except Exception:  # noqa: BLE001 - exception types with other constructors
        return RuntimeError(message)


class RowDataset(Stream):
    """Rows of a Source, visited in the order of an index plan, with element functions."""

    def __init__(self, source, plan=None, fns=()):
        self.source = source
        self.plan = plan if plan is not None else _indices.Range(source.n)
        self.fns = tuple(fns)

    def _derive(self, plan=None, fns=None):
        return RowDataset(self.source, plan or self.plan, self.fns if fns is None else fns)

    def _cardinality(self):
        return self.plan.cardinality()

    def _spec(self):
        return spec_after(self.source, self.fns)

    def _elements(self):
        source, fns = self.source, self.fns
        for chunk in self.plan.chunks():
            for start in range(0, len(chunk), _UNBATCHED_BLOCK):
                rows = source.gather(chunk[start:start + _UNBATCHED_BLOCK])
                for i in range(len(rows[0])):  # the user asked for single elements
                    element = source.treedef.unflatten([leaf[i] for leaf in rows])
                    for fn in fns:
                        element = call_on_element(fn, element)
                    yield element

    # -- transformations on the index plan ----------------------------------------------
    def shuffle(self, buffer_size, seed, reshuffle_each_iteration):
        return self._derive(_indices.Shuffle(self.plan, buffer_size, seed, reshuffle_each_iteration))

    def repeat(self, count):
        return self._derive(_indices.Repeat(self.plan, count))

    def take(self, count):
        return self._derive(_indices.Take(self.plan, count))

    def skip(self, count):
        return self._derive(_indices.Skip(self.plan, count))

    def map(self, fn):
        return self._derive(fns=self.fns + (fn,))

    def batch(self, batch_size, drop_remainder):
        return BatchedRows(self, batch_size, drop_remainder)

    def cache(self):
        if not self.fns and isinstance(self.plan, _indices.Range) and self.plan.n == self.source.n:
            return self  # the rows are in memory already
        if self.plan.cardinality() < 0:
            return super().cache()  # infinite: cache element by element, as tf.data does
        return RowDataset(CachedSource(self.source, self.plan, self.fns))


class BatchedRows(Stream):
    """Batches of a RowDataset: per batch, one host gather per component and one transfer."""

    def __init__(self, rows, batch_size, drop_remainder):
        self.rows = rows
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder
        self._apply = row_function(rows.source, rows.fns) if rows.fns else None

    def _cardinality(self):
        return _indices.batch_cardinality(self.rows._cardinality(), self.batch_size, self.drop_remainder)

    def _spec(self):
        return _specs.batched(self.rows._spec(), self.batch_size if self.drop_remainder else None)

    def _elements(self):
        source = self.rows.source
        apply = self._apply
        for index in _indices.group(self.rows.plan.chunks(), self.batch_size, self.drop_remainder):
            batch = source.treedef.unflatten(to_device(source.gather(index)))
            yield apply(batch) if apply is not None else batch

    def unbatch(self):
        rows = self.rows
        if self.drop_remainder:
            n = rows._cardinality()
            if n >= 0:
                rows = rows.take(n // self.batch_size * self.batch_size)
        return rows


def zip_streams(streams):
    """The stage of ``Dataset.zip``: elements of ``streams`` (a tuple or dict of stages) side by
    side; plain rows of arrays are zipped into rows of one nest of arrays."""
    members, treedef = flatten(streams)
    plain = all(isinstance(d, RowDataset) and not d.fns and isinstance(d.plan, _indices.Range)
                and d.plan.n == d.source.n for d in members)
    if plain:  # rows of arrays side by side are rows of one nest of arrays
        n = min(d.source.n for d in members)
        nest = treedef.unflatten([d.source.treedef.unflatten([leaf[:n] for leaf in d.source.leaves])
                                  for d in members])
        leaves, merged = flatten(nest)
        return RowDataset(Source(leaves, merged))
    return Zip(streams)
