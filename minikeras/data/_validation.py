"""Checks of the arguments of Dataset methods, with tf.data's meanings (-1: all / forever)."""
import operator

from minikeras.ops.random import numpy_seed


def count(value, what, allow_minus_one=True):
    """``value`` as an int >= 0 (or -1 when ``allow_minus_one``).

    Raises:
      TypeError / ValueError naming ``Dataset.<what>`` and the value received.
    """
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


def positive(value, what):
    """``value`` as an int > 0 (a batch or buffer size)."""
    value = count(value, what, allow_minus_one=False)
    if value == 0:
        raise ValueError(f"Dataset.{what} must be a positive integer, received 0")
    return value


def shuffle_seed(seed):
    """The seed of a shuffle: ``seed``, or the next of mk.random's NumPy seeds when None."""
    if seed is None:
        return numpy_seed()
    return count(seed, "shuffle(seed=...)", allow_minus_one=False) % (1 << 63)


def repeat_count(value):
    """The number of passes of ``repeat``: None for forever (None or -1)."""
    if value is None:
        return None
    value = count(value, "repeat")
    return None if value == -1 else value


def function(fn, what):
    """Raises TypeError unless ``fn`` (the function given to ``Dataset.<what>``) is callable."""
    if not callable(fn):
        raise TypeError(f"Dataset.{what} expects a callable, received {type(fn).__name__}: {fn!r}")


def cache_filename(filename):
    """Raises NotImplementedError for a cache file: only in-memory caching is supported."""
    if filename:
        raise NotImplementedError(f"Dataset.cache(filename={filename!r}): only in-memory caching (filename='') "
                                  "is supported")
