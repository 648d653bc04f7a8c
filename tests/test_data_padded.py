"""Dataset.padded_batch: padding to each batch's longest element or to padded_shapes, with
padding_values; values and specs as TF 2.21 gives them for the same calls."""
import numpy as np
import pytest

import minikeras as mk

Dataset = mk.data.Dataset


def _ds():
    def gen():
        for i in range(3):
            yield np.arange(i), i
    return Dataset.from_generator(gen, output_signature=(mk.TensorSpec((None,), mk.int32), mk.TensorSpec((), mk.int32)))


def test_pads_to_the_longest_in_each_batch():
    batches = list(_ds().padded_batch(2).as_numpy_iterator())
    np.testing.assert_array_equal(batches[0][0], [[0], [0]])
    np.testing.assert_array_equal(batches[0][1], [0, 1])
    np.testing.assert_array_equal(batches[1][0], [[0, 1]])
    assert _ds().padded_batch(2).element_spec == (mk.TensorSpec((None, None), mk.int32),
                                                  mk.TensorSpec((None,), mk.int32))


def test_padded_shapes_and_values():
    batches = list(_ds().padded_batch(2, padded_shapes=([4], []), padding_values=(-1, 0)).as_numpy_iterator())
    np.testing.assert_array_equal(batches[0][0], [[-1, -1, -1, -1], [0, -1, -1, -1]])
    np.testing.assert_array_equal(batches[1][0], [[0, 1, -1, -1]])
    spec = _ds().padded_batch(2, padded_shapes=([4], []), drop_remainder=True).element_spec
    assert spec == (mk.TensorSpec((2, 4), mk.int32), mk.TensorSpec((2,), mk.int32))


def test_rows_of_fixed_shape():
    ds = Dataset.from_tensor_slices(np.ones((5, 2), "f")).padded_batch(2, padded_shapes=[3], padding_values=9.0)
    first = next(iter(ds))
    np.testing.assert_array_equal(first, [[1, 1, 9], [1, 1, 9]])
    assert ds.element_spec == mk.TensorSpec((None, 3), mk.float32)


def test_errors():
    with pytest.raises(mk.errors.DataLossError, match="Attempted to pad to a smaller size than the input element"):
        list(_ds().padded_batch(2, padded_shapes=([1], [])))
    with pytest.raises(ValueError, match="has rank 2, but the element component has shape"):
        _ds().padded_batch(2, padded_shapes=([1, 2], []))
    with pytest.raises(ValueError, match="positive integer"):
        _ds().padded_batch(0)
