"""Pipeline stages that stream elements: transformations after ``batch``, zip, cache and prefetch.

A ``Dataset`` (dataset.py) holds one stage; its methods check their arguments and ask the
stage for the next one. ``Stream`` gives the streaming version of each transformation;
the stages over in-memory rows (``_rows``) override some with index plans.
"""
import atexit
import itertools
import queue
import threading

import jax.numpy as jnp
import numpy as np

from minikeras.data import _indices, _specs
from minikeras.data._strings import runs_on_host, spec_of_elements, stack_strings
from minikeras.data._structure import call_on_element, first_dims, flatten
from minikeras.data.host_calls import HostOnlyCall


class Stream:
    """A pipeline stage: ``_elements()`` yields nests of arrays (NumPy or jax) and
    ``_cardinality()`` counts them (``_indices.INFINITE``/``UNKNOWN`` when it cannot). The
    transformations take checked arguments (see ``Dataset``) and return the next stage."""

    def _elements(self):
        raise NotImplementedError

    def _cardinality(self):
        raise NotImplementedError

    def _spec(self):
        """The nest of ``mk.TensorSpec`` describing each element (see ``_specs``)."""
        raise NotImplementedError

    def map(self, fn):
        return Map(self, fn)

    def batch(self, batch_size, drop_remainder):
        return Batch(self, batch_size, drop_remainder)

    def shuffle(self, buffer_size, seed, reshuffle_each_iteration):
        return Shuffle(self, buffer_size, seed, reshuffle_each_iteration)

    def repeat(self, count):
        return Repeat(self, count)

    def take(self, count):
        return Take(self, count)

    def skip(self, count):
        return Skip(self, count)

    def unbatch(self):
        return Unbatch(self)

    def prefetch(self, buffer_size):
        return Prefetch(self, buffer_size)

    def cache(self):
        return Cache(self)


class Unary(Stream):
    """A stage with one upstream stage; by default it keeps the upstream's cardinality and spec."""

    def __init__(self, upstream):
        self.upstream = upstream

    def _cardinality(self):
        return self.upstream._cardinality()

    def _spec(self):
        return self.upstream._spec()


class Map(Unary):
    def __init__(self, upstream, fn):
        super().__init__(upstream)
        self.fn = fn

    def _spec(self):
        spec = self.upstream._spec()
        if runs_on_host(spec, (self.fn,)):
            return spec_of_elements(itertools.islice(self.upstream._elements(), 2), (self.fn,))
        try:
            return _specs.traced(self.fn, spec)
        except HostOnlyCall:
            return spec_of_elements(itertools.islice(self.upstream._elements(), 2), (self.fn,))

    def _elements(self):
        for element in self.upstream._elements():
            yield call_on_element(self.fn, element)


class Repeat(Unary):
    def __init__(self, upstream, count):
        super().__init__(upstream)
        self.count = count

    def _cardinality(self):
        return _indices.repeat_cardinality(self.upstream._cardinality(), self.count)

    def _elements(self):
        passes = itertools.count() if self.count is None else range(self.count)
        for _ in passes:
            produced = False
            for element in self.upstream._elements():
                produced = True
                yield element
            if not produced:
                return


class Take(Unary):
    def __init__(self, upstream, count):
        super().__init__(upstream)
        self.count = count

    def _cardinality(self):
        return _indices.take_cardinality(self.upstream._cardinality(), self.count)

    def _elements(self):
        elements = self.upstream._elements()
        yield from elements if self.count < 0 else itertools.islice(elements, self.count)


class Skip(Unary):
    def __init__(self, upstream, count):
        super().__init__(upstream)
        self.count = count

    def _cardinality(self):
        return _indices.skip_cardinality(self.upstream._cardinality(), self.count)

    def _elements(self):
        if self.count >= 0:
            yield from itertools.islice(self.upstream._elements(), self.count, None)


class Shuffle(Unary):
    """tf.data's shuffle buffer over whole elements (here usually batches)."""

    def __init__(self, upstream, buffer_size, seed, reshuffle_each_iteration):
        super().__init__(upstream)
        self.buffer_size, self.seed, self.reshuffle = buffer_size, seed, reshuffle_each_iteration
        self._passes = 0

    def _elements(self):
        epoch = self._passes if self.reshuffle else 0
        self._passes += 1
        rng = np.random.default_rng([self.seed, epoch])
        buffer = []
        for element in self.upstream._elements():
            if len(buffer) < self.buffer_size:
                buffer.append(element)
                continue
            slot = int(rng.integers(len(buffer)))
            yield buffer[slot]
            buffer[slot] = element
        for slot in rng.permutation(len(buffer)):
            yield buffer[slot]


def _stack(elements, what):
    trees = [flatten(e) for e in elements]
    treedef = trees[0][1]
    for leaves, other in trees[1:]:
        if other != treedef:
            raise ValueError(f"{what}: elements have different structures: {treedef} and {other}")
    columns = list(zip(*[leaves for leaves, _ in trees]))
    stacked = []
    for column in columns:
        shapes = {np.shape(x) for x in column}
        if len(shapes) > 1:
            raise ValueError(f"{what}: cannot batch elements of different shapes {sorted(shapes)}")
        if isinstance(column[0], bytes) or getattr(column[0], "dtype", None) == object:
            stacked.append(stack_strings(column))
            continue
        on_host = all(isinstance(x, np.ndarray) or np.isscalar(x) for x in column)
        stacked.append(np.stack(column) if on_host else jnp.stack([jnp.asarray(x) for x in column]))
    return treedef.unflatten(stacked)


class Batch(Unary):
    def __init__(self, upstream, batch_size, drop_remainder):
        super().__init__(upstream)
        self.batch_size, self.drop_remainder = batch_size, drop_remainder

    def _cardinality(self):
        return _indices.batch_cardinality(self.upstream._cardinality(), self.batch_size, self.drop_remainder)

    def _spec(self):
        return _specs.batched(self.upstream._spec(), self.batch_size if self.drop_remainder else None)

    def _elements(self):
        pending = []
        for element in self.upstream._elements():
            pending.append(element)
            if len(pending) == self.batch_size:
                yield _stack(pending, "Dataset.batch")
                pending = []
        if pending and not self.drop_remainder:
            yield _stack(pending, "Dataset.batch")


class Unbatch(Unary):
    def _cardinality(self):
        return _indices.UNKNOWN

    def _spec(self):
        return _specs.unbatched(self.upstream._spec())

    def _elements(self):
        for batch in self.upstream._elements():
            n = first_dims(batch)
            leaves, treedef = flatten(batch)
            leaves = [np.asarray(leaf) for leaf in leaves]  # one transfer per batch, not per row
            for i in range(n):
                yield treedef.unflatten([leaf[i] for leaf in leaves])

    def batch(self, batch_size, drop_remainder):
        return Rebatch(self.upstream, batch_size, drop_remainder)


def _concat(parts):
    return np.concatenate(parts) if all(isinstance(p, np.ndarray) for p in parts) else jnp.concatenate(parts)


class Rebatch(Unary):
    """``unbatch().batch(n)`` by concatenating and slicing whole batches."""

    def __init__(self, upstream, batch_size, drop_remainder):
        super().__init__(upstream)
        self.batch_size, self.drop_remainder = batch_size, drop_remainder

    def _cardinality(self):
        return _indices.UNKNOWN

    def _spec(self):
        rows = _specs.unbatched(self.upstream._spec())
        return _specs.batched(rows, self.batch_size if self.drop_remainder else None)

    def _elements(self):
        size, treedef, pending, count = self.batch_size, None, [], 0
        for batch in self.upstream._elements():
            n = first_dims(batch)
            leaves, treedef = flatten(batch)
            pending.append(leaves)
            count += n
            while count >= size:
                columns = [_concat(parts) for parts in zip(*pending)] if len(pending) > 1 else pending[0]
                yield treedef.unflatten([c[:size] for c in columns])
                pending, count = [[c[size:] for c in columns]], count - size
        if count and not self.drop_remainder:
            yield treedef.unflatten([_concat(parts) for parts in zip(*pending)])


class Cache(Unary):
    def __init__(self, upstream):
        super().__init__(upstream)
        self._cached = None
        self._lock = threading.Lock()

    def _elements(self):
        if self._cached is not None:
            yield from self._cached
            return
        recorded = []
        for element in self.upstream._elements():
            recorded.append(element)
            yield element
        with self._lock:  # only a complete pass is kept, as in tf.data
            if self._cached is None:
                self._cached = recorded


class Zip(Stream):
    """Elements of several stages side by side, nested as ``streams`` (a tuple or dict)."""

    def __init__(self, streams):
        self.streams = streams
        self._members, self._treedef = flatten(streams)

    def _cardinality(self):
        counts = [d._cardinality() for d in self._members]
        finite = [c for c in counts if c >= 0]
        if finite:
            return min(finite)
        return _indices.UNKNOWN if _indices.UNKNOWN in counts else _indices.INFINITE

    def _spec(self):
        return self._treedef.unflatten([d._spec() for d in self._members])

    def _elements(self):
        for parts in zip(*[d._elements() for d in self._members]):
            yield self._treedef.unflatten(list(parts))


_ITEM, _END, _ERROR = "item", "end", "error"

# The prefetch workers still running, each with its stop event. A worker is a daemon thread so
# that an iterator never closed does not keep the process alive; the exit hook below stops
# and joins them before jax is torn down, since a daemon thread still inside jax when Python
# finalizes aborts the process.
_WORKERS = {}
_WORKERS_LOCK = threading.Lock()


def _stop_workers():
    with _WORKERS_LOCK:
        workers = list(_WORKERS.items())
    for _, stop in workers:
        stop.set()
    for worker, _ in workers:
        worker.join()


# atexit runs its hooks last-registered first: this module is imported after jax, so its hook
# runs before jax's.
atexit.register(_stop_workers)


class Prefetch(Unary):
    """Runs the upstream pipeline on a background thread, ``buffer_size`` elements ahead.

    Leaving the pass early (``break``, ``take``, closing the iterator) stops the thread and
    waits for the element it is preparing; iterators never closed are stopped at exit."""

    def __init__(self, upstream, buffer_size):
        super().__init__(upstream)
        self.buffer_size = buffer_size

    def _elements(self):
        slots = queue.Queue(maxsize=self.buffer_size)
        stop = threading.Event()

        def put(item):
            while not stop.is_set():
                try:
                    slots.put(item, timeout=0.05)
                    return True
                except queue.Full:
                    continue
            return False

        def work():
            try:
                elements = self.upstream._elements()
                try:
                    for element in elements:
                        if not put((_ITEM, element)):
                            return
                finally:
                    elements.close()  # stops an upstream prefetch on this thread, not at garbage collection
                put((_END, None))
            except BaseException as error:  # noqa: BLE001 - handed to the consumer
                put((_ERROR, error))
            finally:
                with _WORKERS_LOCK:
                    _WORKERS.pop(threading.current_thread(), None)

        worker = threading.Thread(target=work, name="mk.data.prefetch", daemon=True)
        with _WORKERS_LOCK:
            _WORKERS[worker] = stop
        worker.start()
        try:
            while True:
                try:
                    kind, value = slots.get(timeout=0.1)
                except queue.Empty:
                    if worker.is_alive() or not slots.empty():
                        continue
                    return  # stopped at exit before it handed over its end
                if kind == _END:
                    return
                if kind == _ERROR:
                    raise value
                yield value
        finally:
            stop.set()
            worker.join()
