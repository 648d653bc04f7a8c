"""fit(epochs=2) + save + load in a new process + fit(initial_epoch=2, epochs=4) gives the same
weights, bit for bit, as fit(epochs=4): with Dropout and shuffle=True, the random generator and
fit's shuffle seed are saved with the weights (``minikeras/saving/random_state.py``)."""

import numpy as np
import pytest
from resume_reference import run_job, weights

import minikeras as mk


def test_resume_in_a_new_process_is_bit_identical(tmp_path, uninterrupted):
    # one process saves after epoch 2, others load (.weights.h5, .keras) and go on to epoch 4
    for mode in ("first", "second", "second_keras"):
        result = run_job(mode, tmp_path)
        assert result.returncode == 0, result.stderr
    for resumed in ("second.npz", "second_keras.npz"):
        for a, b in zip(weights(tmp_path / resumed), uninterrupted):
            np.testing.assert_array_equal(a, b)


def test_shuffle_order_is_a_function_of_seed_and_epoch():
    from minikeras.trainers.data_adapter import ArrayBatches
    from minikeras.trainers.trainer import _numpy_rng
    batches = ArrayBatches(np.arange(10.0)[:, None], np.arange(10.0), batch_size=10, shuffle=True)

    def order(seed, epoch):
        (x, _, _), = batches.epoch(_numpy_rng(seed, epoch))
        return x[:, 0].tolist()

    assert order(3, 2) == order(3, 2)
    assert order(3, 2) == np.random.default_rng([3, 2]).permutation(10).tolist()
    assert order(3, 1) != order(3, 2) and order(4, 2) != order(3, 2)


def test_generator_state_round_trip_and_errors():
    state = mk.random.get_generator_state()
    first = mk.random.uniform((3,)).numpy()
    mk.random.set_generator_state(state)
    np.testing.assert_array_equal(mk.random.uniform((3,)).numpy(), first)
    with pytest.raises(ValueError, match=r"set_generator_state: the generator's state is uint32 of shape \(2,\), "
                                         r"received float32 of shape \(3,\)"):
        mk.random.set_generator_state(np.zeros(3, np.float32))


def test_resuming_in_the_same_process_reuses_the_shuffle_seed():
    x = np.arange(32, dtype=np.float32).reshape(16, 2)
    model = mk.Sequential([mk.layers.Dense(1, input_shape=(2,))])
    model.compile("sgd", "mse")
    model.fit(x, x[:, :1], epochs=1, verbose=0)
    seed = model.data_order_seed
    model.fit(x, x[:, :1], epochs=2, initial_epoch=1, verbose=0)
    assert model.data_order_seed == seed
    model.fit(x, x[:, :1], epochs=1, verbose=0)  # a new fit from epoch 0 shuffles afresh
    assert model.data_order_seed != seed


def test_a_state_for_another_generator_warns_and_loads_the_weights(tmp_path):
    import h5py
    model = mk.Sequential([mk.layers.Dense(2, input_shape=(3,))])
    path = str(tmp_path / "m.weights.h5")
    model.save_weights(path)
    with h5py.File(path, "r+") as f:
        del f["seed_generator/vars/0"]
        f["seed_generator/vars"].create_dataset("0", data=np.zeros(4, np.uint32))
    before = mk.random.get_generator_state()
    with pytest.warns(UserWarning, match=r"m.weights.h5': its random generator state \(uint32, shape \(4,\)\) does "
                                         r"not fit"):
        model.load_weights(path)
    np.testing.assert_array_equal(mk.random.get_generator_state(), before)
