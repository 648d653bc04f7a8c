"""What fit takes as data (``minikeras/trainers/data_adapter.py``): lists of numbers are arrays,
non-numeric data is a clear error naming the argument."""
import numpy as np
import pytest

import minikeras as mk


@pytest.fixture(scope="module")
def model():
    model = mk.Sequential([mk.layers.Dense(1, input_shape=(1,), kernel_initializer="ones")])
    model.compile(optimizer=mk.optimizers.SGD(0.01), loss="mse")
    return model


def test_list_of_numbers_is_one_array(model):
    from minikeras.trainers.data_adapter import ArrayBatches
    batches = ArrayBatches([[1.0], [2.0], [3.0], [4.0]], [2.0, 4.0, 6.0, 8.0], batch_size=2)
    assert batches.n == 4 and batches.x.shape == (4, 1) and batches.y.shape == (4,)
    start = model.get_weights()
    from_lists = model.fit([[1.0], [2.0], [3.0], [4.0]], [[2.0], [4.0], [6.0], [8.0]], epochs=2, verbose=0)
    after_lists = model.get_weights()
    model.set_weights(start)
    from_arrays = model.fit(np.array([[1.0], [2.0], [3.0], [4.0]]), np.array([[2.0], [4.0], [6.0], [8.0]]),
                            epochs=2, verbose=0)
    assert from_lists.history == from_arrays.history
    for a, b in zip(after_lists, model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_list_of_arrays_is_several_inputs():
    from minikeras.trainers.data_adapter import ArrayBatches
    batches = ArrayBatches([np.zeros((5, 2)), np.ones((5, 3))], np.zeros(5))
    assert isinstance(batches.x, list) and batches.n == 5


def test_strings_name_the_argument_and_the_dtype(model):
    with pytest.raises(TypeError, match=r"^x has dtype <U3 \(e\.g\. .*'abc'.*\): fit.*take numbers"):
        model.fit(np.array([["abc"], ["def"]]), np.array([[1.0], [2.0]]), verbose=0)
    with pytest.raises(TypeError, match=r"^y has dtype <U3"):
        model.fit(np.array([[1.0], [2.0]]), ["cat", "dog"], verbose=0)
