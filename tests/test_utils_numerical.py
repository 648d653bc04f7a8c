"""mk.utils.to_categorical / normalize / set_random_seed against Keras 3's outputs (NumPy formulas)."""
import random

import numpy as np
import pytest

import minikeras as mk


def test_to_categorical_numpy_as_keras():
    out = mk.utils.to_categorical([0, 2, 1], num_classes=4)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, np.eye(4)[[0, 2, 1]])
    # a trailing axis of 1 is dropped; num_classes inferred
    out = mk.utils.to_categorical(np.array([[1], [3]]))
    assert out.shape == (2, 4)
    np.testing.assert_array_equal(out, np.eye(4)[[1, 3]])
    assert mk.utils.to_categorical(np.zeros((2, 3), int), 2).shape == (2, 3, 2)


def test_to_categorical_tensor_and_errors():
    out = mk.utils.to_categorical(mk.constant([[1], [0]]), 3)
    assert isinstance(out, mk.Tensor) and out.shape == (2, 3)
    np.testing.assert_array_equal(out.numpy(), [[0, 1, 0], [1, 0, 0]])
    with pytest.raises(IndexError, match=r"\[0, 3\).*5"):
        mk.utils.to_categorical([0, 5], 3)


def test_normalize():
    x = np.array([[3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_allclose(mk.utils.normalize(x), [[0.6, 0.8], [0, 0]])
    np.testing.assert_allclose(mk.utils.normalize(x, axis=0, order=1), [[1, 1], [0, 0]])
    t = mk.utils.normalize(mk.constant(x))
    assert isinstance(t, mk.Tensor)
    np.testing.assert_allclose(t.numpy(), [[0.6, 0.8], [0, 0]], rtol=1e-6)


def test_set_random_seed_repeats_everything():
    def draw():
        return random.random(), np.random.rand(), mk.random.normal([3]).numpy(), mk.layers.Dense(2)(np.ones((1, 2)))
    mk.utils.set_random_seed(7)
    first = draw()
    mk.utils.set_random_seed(7)
    second = draw()
    assert first[0] == second[0] and first[1] == second[1]
    np.testing.assert_array_equal(first[2], second[2])
    np.testing.assert_array_equal(first[3].numpy(), second[3].numpy())
    with pytest.raises(ValueError, match="integer"):
        mk.utils.set_random_seed(1.5)
