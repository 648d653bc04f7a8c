"""Dataset.from_generator: conversion to output_signature, TF's errors for elements of the
wrong shape, dtype or structure (InvalidArgumentError when reached), cardinality, passes."""
import numpy as np
import pytest

import minikeras as mk

Dataset = mk.data.Dataset


def _gen():
    for i in range(3):
        yield np.arange(i), i


SIGNATURE = (mk.TensorSpec(shape=(None,), dtype=mk.int32), mk.TensorSpec(shape=(), dtype=mk.int32))


def test_elements_match_tf():
    ds = Dataset.from_generator(_gen, output_signature=SIGNATURE)
    elements = list(ds.as_numpy_iterator())
    assert [e[1] for e in elements] == [0, 1, 2]
    for i, (a, _) in enumerate(elements):
        np.testing.assert_array_equal(a, np.arange(i))
        assert a.dtype == np.int32
    assert ds.element_spec == SIGNATURE
    assert int(ds.cardinality()) == mk.data.UNKNOWN_CARDINALITY
    assert len(list(ds)) == 3 and len(list(ds)) == 3  # the generator is called again for each pass


def test_values_are_converted_and_args_passed():
    def gen(n):
        for i in range(int(n)):
            yield [float(i), 1.5]

    ds = Dataset.from_generator(gen, args=(2,), output_signature=mk.TensorSpec((2,), mk.float32))
    batches = list(ds.batch(2))
    assert batches[0].dtype == mk.float32
    np.testing.assert_array_equal(batches[0], [[0.0, 1.5], [1.0, 1.5]])


def test_deprecated_output_types():
    ds = Dataset.from_generator(lambda: iter([1, 2]), output_types=mk.int32, output_shapes=())
    assert ds.element_spec == mk.TensorSpec((), mk.int32)
    assert [int(x) for x in ds] == [1, 2]


def test_errors_as_tf():
    def wrong_shape():
        yield np.zeros(3)

    ds = Dataset.from_generator(wrong_shape, output_signature=mk.TensorSpec(shape=(2,), dtype=mk.float32))
    with pytest.raises(mk.errors.InvalidArgumentError, match=r"yielded an element of shape \(3,\) where an element "
                                                             r"of shape \(2,\) was expected"):
        list(ds)

    ds = Dataset.from_generator(lambda: iter(["a"]), output_signature=mk.TensorSpec(shape=(), dtype=mk.float32))
    with pytest.raises(mk.errors.InvalidArgumentError, match="could not be converted to the expected type. The "
                                                             "expected type was float32"):
        list(ds)

    ds = Dataset.from_generator(lambda: iter([1]), output_signature=SIGNATURE)
    with pytest.raises(mk.errors.InvalidArgumentError, match="did not match the expected structure"):
        list(ds)
    with pytest.raises(TypeError, match="must be a Python callable"):
        Dataset.from_generator(_gen(), output_signature=SIGNATURE)
    with pytest.raises(TypeError, match="missing output_signature"):
        Dataset.from_generator(_gen)
