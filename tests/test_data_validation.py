"""The argument checks of Dataset methods (tf.data's meanings: -1 is all / forever)."""
import numpy as np
import pytest

import minikeras as mk
from minikeras.data import _validation as check


def test_count_accepts_integers_and_minus_one():
    assert check.count(3, "take") == 3 and check.count(np.int64(2), "take") == 2
    assert check.count(mk.constant(4), "take") == 4 and check.count(-1, "take") == -1
    with pytest.raises(TypeError, match=r"Dataset.take: expected an integer, received 2.5"):
        check.count(2.5, "take")
    with pytest.raises(TypeError, match="received True"):
        check.count(True, "take")
    with pytest.raises(ValueError, match=r"Dataset.skip: expected -1 or a non-negative integer, received -2"):
        check.count(-2, "skip")
    with pytest.raises(ValueError, match=r"expected a non-negative integer, received -1"):
        check.count(-1, "shuffle(seed=...)", allow_minus_one=False)


def test_positive_and_repeat_count():
    assert check.positive(5, "batch(batch_size)") == 5
    with pytest.raises(ValueError, match=r"Dataset.batch\(batch_size\) must be a positive integer, received 0"):
        check.positive(0, "batch(batch_size)")
    assert check.repeat_count(None) is None and check.repeat_count(-1) is None and check.repeat_count(3) == 3


def test_shuffle_seed_repeats_after_set_seed():
    assert check.shuffle_seed(7) == 7 and check.shuffle_seed(-1 % (1 << 64)) == ((1 << 64) - 1) % (1 << 63)
    mk.random.set_seed(1)
    first = [check.shuffle_seed(None) for _ in range(2)]
    mk.random.set_seed(1)
    assert [check.shuffle_seed(None) for _ in range(2)] == first and first[0] != first[1]


def test_function_and_cache_filename():
    check.function(len, "map")
    with pytest.raises(TypeError, match=r"Dataset.map expects a callable, received int: 3"):
        check.function(3, "map")
    check.cache_filename("")
    with pytest.raises(NotImplementedError, match="only in-memory caching"):
        check.cache_filename("/tmp/cache")
