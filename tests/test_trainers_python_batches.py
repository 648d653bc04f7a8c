"""fit/evaluate/predict on Python code's batches: ``keras.utils.PyDataset`` (``Sequence``) and
Python generators, with Keras 3's rules (a generator read on across epochs, ``steps_per_epoch``,
``on_epoch_end`` per pass, batches shuffled by ``fit``, workers that keep the order)."""
import random
import threading
import time
import warnings

import numpy as np
import pytest

import minikeras as mk
from minikeras import keras
from minikeras.trainers import data_adapter

X = np.random.default_rng(0).normal(size=(20, 3)).astype("float32")
Y = (X @ np.array([[1.0], [-2.0], [0.5]], "float32")).astype("float32")


def model():
    mk.utils.set_random_seed(0)
    m = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    m.compile(optimizer=mk.optimizers.SGD(0.05), loss="mse")
    return m


class Batches(keras.utils.PyDataset):
    """X, Y in batches of 4; notes the indices asked for and the passes ended."""

    def __init__(self, delay=0.0, **kwargs):
        super().__init__(**kwargs)
        self.asked, self.ends, self.delay = [], 0, delay

    def __len__(self):
        return 5

    def __getitem__(self, i):
        self.asked.append(i)
        if self.delay:
            time.sleep(random.random() * self.delay)
        return X[4 * i:4 * i + 4], Y[4 * i:4 * i + 4]

    def on_epoch_end(self):
        self.ends += 1


def test_a_py_dataset_trains_as_its_arrays_do():
    expected = model().fit(X, Y, batch_size=4, epochs=3, shuffle=False, verbose=0).history["loss"]
    data = Batches()
    got = model().fit(data, epochs=3, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert data.ends == 3 and data.asked == [0] + [0, 1, 2, 3, 4] * 3  # the first batch is read once to see its shape


def test_fit_shuffles_a_py_dataset_batches_with_python_random():
    mk.utils.set_random_seed(3)
    data = Batches()
    model().fit(data, epochs=2, verbose=0)
    orders = data.asked[1:6], data.asked[6:11]
    assert sorted(orders[0]) == sorted(orders[1]) == [0, 1, 2, 3, 4] and orders[0] != orders[1]
    mk.utils.set_random_seed(3)
    again = Batches()
    model().fit(again, epochs=2, verbose=0)
    assert again.asked == data.asked


def test_workers_make_batches_ahead_in_threads_and_keep_the_order():
    data = Batches(delay=0.01, workers=4, max_queue_size=3)
    threads = set()
    original = data.__getitem__

    def noting(i):
        threads.add(threading.current_thread().name)
        return original(i)

    data.__getitem__ = noting  # instance attribute: the dataset's own method still answers data[i]
    batches = [np.asarray(x) for x, _ in data_adapter.python_batches_as_dataset(data)]
    np.testing.assert_array_equal(np.concatenate(batches), X)
    expected = model().fit(X, Y, batch_size=4, epochs=1, shuffle=False, verbose=0).history["loss"]
    got = model().fit(Batches(delay=0.01, workers=4), epochs=1, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_evaluate_predict_and_validation_take_py_datasets_and_generators():
    m = model()
    history = m.fit(X, Y, batch_size=4, epochs=1, verbose=0, validation_data=Batches())
    expected = m.evaluate(X, Y, batch_size=4, verbose=0)
    assert history.history["val_loss"][0] == pytest.approx(m.evaluate(Batches(), verbose=0), rel=1e-6)
    assert m.evaluate(Batches(), verbose=0) == pytest.approx(expected, rel=1e-6)
    generator = ((X[i:i + 4], Y[i:i + 4]) for i in range(0, 20, 4))
    assert m.evaluate(generator, verbose=0) == pytest.approx(expected, rel=1e-6)
    np.testing.assert_allclose(m.predict(Batches(), verbose=0), m.predict(X, verbose=0), rtol=1e-6)
    np.testing.assert_allclose(m.predict((X[i:i + 5] for i in range(0, 20, 5)), verbose=0), m.predict(X, verbose=0),
                               rtol=1e-6)


def test_a_generator_is_read_on_across_epochs_with_steps_per_epoch():
    served = []

    def endless():
        i = 0
        while True:
            served.append(i)
            yield X[4 * (i % 5):4 * (i % 5) + 4], Y[4 * (i % 5):4 * (i % 5) + 4]
            i += 1

    history = model().fit(endless(), steps_per_epoch=3, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    assert served[:6] == [0, 1, 2, 3, 4, 5]  # epoch 2 goes on where epoch 1 stopped
    expected = model().fit(np.concatenate([X, X[:4]]), np.concatenate([Y, Y[:4]]), batch_size=4, epochs=1,
                           shuffle=False, verbose=0, steps_per_epoch=6).history["loss"]
    one_epoch = model().fit(endless(), steps_per_epoch=6, epochs=1, verbose=0).history["loss"]
    np.testing.assert_allclose(one_epoch, expected, rtol=1e-6)


def test_a_finite_generator_ends_its_epoch_and_then_runs_out():
    finite = ((X[i:i + 4], Y[i:i + 4]) for i in range(0, 20, 4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = model().fit(finite, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2  # the second epoch finds the generator used up, and says so
    assert sum("ran out of data" in str(w.message) for w in caught) == 1


def test_messages():
    class NoSuper(keras.utils.PyDataset):
        def __init__(self):
            pass

        def __len__(self):
            return 5

        def __getitem__(self, i):
            return X[4 * i:4 * i + 4], Y[4 * i:4 * i + 4]

    with pytest.warns(UserWarning, match="should call `super\\(\\).__init__"):
        model().fit(NoSuper(), epochs=1, verbose=0)
    with pytest.warns(UserWarning, match="runs its 2 workers as threads"):
        model().fit(Batches(workers=2, use_multiprocessing=True), epochs=1, verbose=0)
    with pytest.raises(ValueError, match="y must be None"):
        model().fit((b for b in [(X, Y)]), Y, verbose=0)
    with pytest.raises(ValueError, match="yielded no batch"):
        model().fit((b for b in []), verbose=0)
    assert keras.utils.Sequence is keras.utils.PyDataset
