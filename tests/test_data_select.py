"""Dataset.filter, enumerate, concatenate and reduce: elements, cardinality, specs and
errors as TF 2.21 gives them for the same calls."""
import numpy as np
import pytest

import minikeras as mk

Dataset = mk.data.Dataset


def test_filter():
    ds = Dataset.range(10).filter(lambda x: x % 3 == 0)
    assert list(ds.as_numpy_iterator()) == [0, 3, 6, 9]
    assert int(ds.cardinality()) == mk.data.UNKNOWN_CARDINALITY
    pairs = Dataset.from_tensor_slices(([1, 2, 3], [4, 5, 6])).filter(lambda a, b: a > 1)
    assert list(pairs.as_numpy_iterator()) == [(2, 5), (3, 6)]
    assert list(Dataset.range(6).batch(2).unbatch().filter(lambda x: x > 3).as_numpy_iterator()) == [4, 5]
    with pytest.raises(ValueError, match="`predicate` must return a `mk.bool` scalar tensor, but its return type is "
                                         "TensorSpec"):
        Dataset.range(10).filter(lambda x: x)


def test_enumerate():
    ds = Dataset.from_tensor_slices([7, 8]).enumerate(start=5)
    assert list(ds.as_numpy_iterator()) == [(5, 7), (6, 8)]
    assert ds.element_spec == (mk.TensorSpec((), mk.int32), mk.TensorSpec((), mk.int32))
    assert int(ds.cardinality()) == 2


def test_concatenate():
    ds = Dataset.range(2).concatenate(Dataset.range(5, 7))
    assert list(ds.as_numpy_iterator()) == [0, 1, 5, 6]
    assert int(ds.cardinality()) == 4
    wide = Dataset.from_tensor_slices(np.zeros((2, 3))).concatenate(Dataset.from_tensor_slices(np.zeros((2, 4))))
    assert wide.element_spec == mk.TensorSpec((None,), mk.float32)
    assert [x.shape for x in wide] == [(3,), (3,), (4,), (4,)]
    with pytest.raises(TypeError, match="Incompatible dataset elements"):
        Dataset.range(2).concatenate(Dataset.from_tensor_slices(([1], [2])))
    with pytest.raises(TypeError, match="Incompatible dataset elements"):
        Dataset.range(2).concatenate(Dataset.from_tensor_slices([1.0]))


def test_reduce():
    assert int(Dataset.range(5).reduce(np.int64(0), lambda x, _: x + 1)) == 5
    total = Dataset.from_tensor_slices(([1, 2], [3, 4])).reduce(0, lambda s, e: s + e[0] * e[1])
    assert int(total) == 11 and total.dtype == mk.int32
    state = Dataset.range(4).reduce((0, 0.0), lambda s, x: (s[0] + x, s[1] + 0.5))
    assert int(state[0]) == 6 and float(state[1]) == 2.0
    with pytest.raises(TypeError, match="The element types for the new state must match the initial state. Expected "
                                        "int32 but got float32"):
        Dataset.range(3).reduce(np.int64(0), lambda s, e: mk.cast(s, mk.float32))


def test_autotune():
    assert mk.data.AUTOTUNE == -1
    assert list(Dataset.range(3).prefetch(mk.data.AUTOTUNE).as_numpy_iterator()) == [0, 1, 2]


def test_iterator_get_next_raises_out_of_range_at_the_end():
    it = iter(Dataset.range(2))
    assert int(it.get_next()) == 0 and int(next(it)) == 1
    with pytest.raises(mk.errors.OutOfRangeError, match="End of sequence"):
        it.get_next()
    with pytest.raises(StopIteration):
        next(iter(Dataset.range(0)))
    assert iter(Dataset.range(2)).element_spec == mk.TensorSpec((), mk.int32)
