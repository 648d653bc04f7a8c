"""Index plans: the order in which rows of in-memory arrays are visited.

A dataset built from ``from_tensor_slices`` never moves data until it is batched: shuffle,
repeat, take and skip only transform a stream of int64 index arrays ("chunks"). Each call
of ``chunks()`` is one pass over the dataset (one ``iter()``), so a shuffle with
``reshuffle_each_iteration=True`` draws a new order per pass.
"""
import itertools

import numpy as np

INFINITE = -1
UNKNOWN = -2
CHUNK = 1 << 16


class Range:
    """Rows 0..n-1 in order."""

    def __init__(self, n):
        self.n = int(n)

    def cardinality(self):
        return self.n

    def chunks(self):
        for start in range(0, self.n, CHUNK):
            yield np.arange(start, min(start + CHUNK, self.n), dtype=np.int64)


class Repeat:
    def __init__(self, upstream, count):
        self.upstream = upstream
        self.count = count  # None: forever

    def cardinality(self):
        return repeat_cardinality(self.upstream.cardinality(), self.count)

    def chunks(self):
        passes = itertools.count() if self.count is None else range(self.count)
        for _ in passes:
            produced = False
            for chunk in self.upstream.chunks():
                if len(chunk):
                    produced = True
                    yield chunk
            if not produced:  # repeating an empty dataset gives an empty dataset
                return


class Take:
    def __init__(self, upstream, count):
        self.upstream = upstream
        self.count = count  # -1: all

    def cardinality(self):
        return take_cardinality(self.upstream.cardinality(), self.count)

    def chunks(self):
        if self.count < 0:
            yield from self.upstream.chunks()
            return
        left = self.count
        if left == 0:
            return
        for chunk in self.upstream.chunks():
            if len(chunk) >= left:
                yield chunk[:left]
                return
            left -= len(chunk)
            yield chunk


class Skip:
    def __init__(self, upstream, count):
        self.upstream = upstream
        self.count = count  # -1: all

    def cardinality(self):
        return skip_cardinality(self.upstream.cardinality(), self.count)

    def chunks(self):
        if self.count < 0:
            return
        left = self.count
        for chunk in self.upstream.chunks():
            if left >= len(chunk):
                left -= len(chunk)
                continue
            yield chunk[left:]
            left = 0


class Shuffle:
    """tf.data's shuffle buffer over row indices (see ``buffer_shuffle``)."""

    def __init__(self, upstream, buffer_size, seed, reshuffle_each_iteration):
        self.upstream = upstream
        self.buffer_size = buffer_size
        self.seed = seed
        self.reshuffle = reshuffle_each_iteration
        self._passes = 0

    def cardinality(self):
        return self.upstream.cardinality()

    def chunks(self):
        epoch = self._passes if self.reshuffle else 0
        self._passes += 1
        rng = np.random.default_rng([self.seed, epoch])
        n = self.upstream.cardinality()
        if 0 <= n <= self.buffer_size:
            # The buffer holds everything: a uniform permutation, drawn in one call.
            everything = [c for c in self.upstream.chunks()]
            if everything:
                yield rng.permutation(np.concatenate(everything))
            return
        yield from buffer_shuffle(self.upstream.chunks(), self.buffer_size, rng)


def buffer_shuffle(chunks, buffer_size, rng):
    """tf.data's shuffle semantics, vectorised over each incoming chunk of indices.

    tf.data fills a buffer with the first ``buffer_size`` elements; then each output is a
    uniformly chosen buffer slot, refilled with the next input; at the end the rest of the
    buffer comes out in random order. For a run of T steps with slot draws j_t, the value
    taken at step t is the input written at the latest earlier step with the same slot (or
    the slot's content before the run), which a stable sort by slot finds for all t at once.
    """
    buffer = np.empty(0, np.int64)
    for chunk in chunks:
        if len(buffer) < buffer_size:
            need = buffer_size - len(buffer)
            buffer = np.concatenate([buffer, chunk[:need]])
            chunk = chunk[need:]
            if not len(chunk):
                continue
        steps = len(chunk)
        slots = rng.integers(0, buffer_size, size=steps)
        order = np.argsort(slots, kind="stable")
        sorted_slots = slots[order]
        same_slot_before = np.concatenate([[False], sorted_slots[1:] == sorted_slots[:-1]])
        previous_step = np.concatenate([[0], order[:-1]])
        taken = np.where(same_slot_before, chunk[previous_step], buffer[sorted_slots])
        out = np.empty(steps, np.int64)
        out[order] = taken
        last_write = np.concatenate([sorted_slots[1:] != sorted_slots[:-1], [True]])
        buffer = buffer.copy()
        buffer[sorted_slots[last_write]] = chunk[order[last_write]]
        yield out
    if len(buffer):
        yield rng.permutation(buffer)


def group(chunks, size, drop_remainder):
    """Index arrays of exactly ``size`` (the last one smaller unless ``drop_remainder``)."""
    pending, count = [], 0
    for chunk in chunks:
        start = 0
        if count:
            piece = chunk[:size - count]
            pending.append(piece)
            count += len(piece)
            start = len(piece)
            if count < size:
                continue
            yield np.concatenate(pending)
            pending, count = [], 0
        full = (len(chunk) - start) // size
        for k in range(full):
            yield chunk[start + k * size:start + (k + 1) * size]
        rest = chunk[start + full * size:]
        if len(rest):
            pending, count = [rest], len(rest)
    if count and not drop_remainder:
        yield np.concatenate(pending)


def gather(array, index):
    """``array[index]`` on the host; a contiguous run of indices is a cheap slice."""
    if len(index) and index[-1] - index[0] == len(index) - 1 and (len(index) < 3 or np.all(np.diff(index) == 1)):
        return array[index[0]:index[-1] + 1]
    return array[index]


# -- cardinality arithmetic (tf.data's rules) -------------------------------------------------
def repeat_cardinality(n, count):
    if n == UNKNOWN:
        return UNKNOWN
    if count is None:
        return 0 if n == 0 else INFINITE
    if n == INFINITE:
        return 0 if count == 0 else INFINITE
    return n * count


def take_cardinality(n, count):
    if count < 0:
        return n
    if n == INFINITE:
        return count
    if n == UNKNOWN:
        return UNKNOWN
    return min(n, count)


def skip_cardinality(n, count):
    if n in (INFINITE, UNKNOWN):
        return n if count >= 0 else (0 if n == INFINITE else UNKNOWN)
    return 0 if count < 0 else max(n - count, 0)


def batch_cardinality(n, size, drop_remainder):
    if n in (INFINITE, UNKNOWN):
        return n
    return n // size if drop_remainder else -(-n // size)
