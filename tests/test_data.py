"""Tests for mk.data.Dataset: structure, batching, shuffling, map, repeat/take/skip, prefetch."""
import threading

import numpy as np
import pytest

import minikeras as mk
from minikeras import data
from minikeras.data import _indices

Dataset = data.Dataset


def rows(n=10):
    x = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    y = np.arange(n, dtype=np.int64)
    return x, y


def labels(ds):
    """The label component of every element (or the element itself) as one flat list."""
    out = []
    for element in ds.as_numpy_iterator():
        value = element[1] if isinstance(element, tuple) else element
        out.extend(np.atleast_1d(value).tolist())
    return out


# -- from_tensor_slices and structure -----------------------------------------------------------
def test_from_tensor_slices_array_yields_tensors():
    x, _ = rows(4)
    elements = list(Dataset.from_tensor_slices(x))
    assert len(elements) == 4
    assert all(isinstance(e, mk.Tensor) for e in elements)
    np.testing.assert_array_equal(elements[2].numpy(), x[2])
    assert elements[0].dtype == np.float32


def test_from_tensor_slices_tuple_dict_nesting():
    x, y = rows(5)
    ds = Dataset.from_tensor_slices(({"image": x, "mask": x > 3}, y))
    element = next(iter(ds))
    assert isinstance(element, tuple) and len(element) == 2
    features, label = element
    assert isinstance(features, dict) and set(features) == {"image", "mask"}
    assert isinstance(features["image"], mk.Tensor) and features["image"].shape == (2,)
    assert features["mask"].dtype == np.bool_
    assert label.shape == () and int(label) == 0
    assert label.dtype == np.int32  # int64 -> int32 as every mk.Tensor without x64


def test_from_tensor_slices_accepts_tensors_and_lists():
    ds = Dataset.from_tensor_slices((mk.constant([[1.0, 2.0], [3.0, 4.0]]), [5, 6]))
    (a, b), = list(ds.take(1))
    np.testing.assert_array_equal(a.numpy(), [1.0, 2.0])
    assert int(b) == 5
    assert labels(Dataset.from_tensor_slices([1, 2, 3])) == [1, 2, 3]  # a list is data, not structure


def test_from_tensor_slices_mismatched_first_dims_names_shapes():
    with pytest.raises(ValueError, match=r"same size in their first dimension.*\(10, 3\).*\(5,\)"):
        Dataset.from_tensor_slices((np.zeros((10, 3)), np.zeros(5)))


def test_from_tensor_slices_errors():
    with pytest.raises(ValueError, match="scalar"):
        Dataset.from_tensor_slices(np.float32(1.0))
    with pytest.raises(TypeError, match="dtype"):
        Dataset.from_tensor_slices(np.array([{}, {}]))  # strings are fine (string Tensors); objects are not


def test_from_tensors_and_range_and_zip():
    (element,) = list(Dataset.from_tensors(np.ones((2, 3))))
    assert element.shape == (2, 3)
    assert labels(Dataset.range(2, 8, 2)) == [2, 4, 6]
    zipped = Dataset.zip((Dataset.range(3), Dataset.range(10, 20)))
    assert [tuple(map(int, e)) for e in zipped] == [(0, 10), (1, 11), (2, 12)]
    assert len(zipped) == 3
    named = Dataset.zip({"a": Dataset.range(2), "b": Dataset.range(2).map(lambda v: v * 3)})
    assert [{k: int(v) for k, v in e.items()} for e in named] == [{"a": 0, "b": 0}, {"a": 1, "b": 3}]


# -- batch ----------------------------------------------------------------------------------------
def test_batch_keeps_remainder():
    x, y = rows(10)
    batches = list(Dataset.from_tensor_slices((x, y)).batch(4))
    assert [b[0].shape for b in batches] == [(4, 2), (4, 2), (2, 2)]
    assert all(isinstance(t, mk.Tensor) for b in batches for t in b)
    np.testing.assert_array_equal(np.concatenate([b[0].numpy() for b in batches]), x)
    np.testing.assert_array_equal(batches[2][1].numpy(), [8, 9])


def test_batch_drop_remainder_and_cardinality():
    ds = Dataset.range(10).batch(4, drop_remainder=True)
    assert [b.shape for b in ds] == [(4,), (4,)]
    assert len(ds) == 2 and int(ds.cardinality()) == 2
    assert len(Dataset.range(10).batch(4)) == 3


def test_batch_validates_size():
    with pytest.raises(ValueError, match="positive"):
        Dataset.range(3).batch(0)
    with pytest.raises(TypeError, match="integer"):
        Dataset.range(3).batch(2.5)


def test_batch_gathers_without_a_python_loop_per_example(monkeypatch):
    calls = []
    original = _indices.gather
    monkeypatch.setattr(_indices, "gather", lambda a, i: calls.append(len(i)) or original(a, i))
    list(Dataset.from_tensor_slices(rows(100)).shuffle(100, seed=0).batch(25))
    assert calls == [25] * 8  # one gather per component per batch


def test_unbatch_and_rebatch():
    assert labels(Dataset.range(7).batch(3).unbatch()) == list(range(7))
    assert [b.shape for b in Dataset.range(7).batch(3).unbatch().batch(2)] == [(2,)] * 3 + [(1,)]
    mapped = Dataset.range(5).batch(2).map(lambda b: b * 10).unbatch()
    assert labels(mapped) == [0, 10, 20, 30, 40]
    assert [b.tolist() for b in mapped.batch(3).as_numpy_iterator()] == [[0, 10, 20], [30, 40]]


# -- shuffle --------------------------------------------------------------------------------------
def test_shuffle_with_seed_is_repeatable_and_a_permutation():
    a = labels(Dataset.range(50).shuffle(50, seed=3))
    b = labels(Dataset.range(50).shuffle(50, seed=3))
    assert a == b and sorted(a) == list(range(50)) and a != list(range(50))
    assert labels(Dataset.range(50).shuffle(50, seed=4)) != a


def test_reshuffle_each_iteration():
    ds = Dataset.range(30).shuffle(30, seed=1)
    first, second = labels(ds), labels(ds)
    assert first != second and sorted(first) == sorted(second)
    again = Dataset.range(30).shuffle(30, seed=1)
    assert labels(again) == first and labels(again) == second  # the sequence of orders repeats
    fixed = Dataset.range(30).shuffle(30, seed=1, reshuffle_each_iteration=False)
    assert labels(fixed) == labels(fixed)


def test_shuffle_then_repeat_gives_a_new_order_each_epoch():
    out = labels(Dataset.range(20).shuffle(20, seed=0).repeat(2))
    assert sorted(out[:20]) == sorted(out[20:]) == list(range(20))
    assert out[:20] != out[20:]


def test_shuffle_without_seed_follows_global_seed():
    mk.random.set_seed(7)
    a = labels(Dataset.range(40).shuffle(40))
    mk.random.set_seed(7)
    b = labels(Dataset.range(40).shuffle(40))
    assert a == b


def _naive_buffer_shuffle(values, buffer_size, rng):
    buffer = list(values[:buffer_size])
    rest = values[buffer_size:]
    slots = rng.integers(0, buffer_size, size=len(rest)) if len(rest) else []
    out = []
    for slot, value in zip(slots, rest):
        out.append(buffer[slot])
        buffer[slot] = value
    return out + [buffer[i] for i in rng.permutation(len(buffer))]


@pytest.mark.parametrize("n,buffer_size", [(100, 1), (100, 7), (1000, 64), (10, 10), (5, 8)])
def test_buffer_shuffle_matches_tf_data_semantics(n, buffer_size):
    values = np.arange(n, dtype=np.int64)
    fast = np.concatenate(list(_indices.buffer_shuffle(iter([values]), buffer_size, np.random.default_rng(5))))
    slow = _naive_buffer_shuffle(values.tolist(), buffer_size, np.random.default_rng(5))
    assert fast.tolist() == slow
    # an element can only come out once it has entered the buffer
    position = np.empty(n, np.int64)
    position[fast] = np.arange(n)
    assert np.all(position >= np.arange(n) - buffer_size + 1)


def test_small_buffer_shuffle_is_local():
    out = labels(Dataset.range(200).shuffle(4, seed=0).batch(16))
    assert sorted(out) == list(range(200)) and out != list(range(200))
    assert out[0] < 4


def test_shuffle_of_infinite_dataset_streams():
    ds = Dataset.range(5).repeat().shuffle(3, seed=0).take(12)
    out = labels(ds)
    assert len(out) == 12 and set(out) <= set(range(5))


# -- repeat / take / skip / cardinality -----------------------------------------------------------
def test_repeat_take_skip_and_cardinality():
    ds = Dataset.range(5)
    assert labels(ds.repeat(2)) == [0, 1, 2, 3, 4] * 2
    assert labels(ds.skip(2).take(2)) == [2, 3]
    assert labels(ds.take(-1)) == list(range(5)) and labels(ds.skip(-1)) == []
    assert labels(ds.repeat().take(7)) == [0, 1, 2, 3, 4, 0, 1]
    assert int(ds.repeat().cardinality()) == data.INFINITE_CARDINALITY == -1
    assert int(ds.repeat().take(7).cardinality()) == 7
    assert int(ds.repeat(3).batch(4).cardinality()) == 4
    assert len(ds.skip(10)) == 0 and labels(Dataset.range(0).repeat()) == []
    assert int(ds.batch(2).unbatch().map(lambda v: v).cardinality()) in (5, data.UNKNOWN_CARDINALITY)
    assert int(ds.batch(2).map(lambda v: v).unbatch().cardinality()) == data.UNKNOWN_CARDINALITY == -2
    assert data.experimental.cardinality(ds) == 5


def test_len_of_infinite_or_unknown_raises():
    with pytest.raises(TypeError, match="infinite"):
        len(Dataset.range(3).repeat())
    with pytest.raises(TypeError, match="unknown"):
        len(Dataset.range(3).batch(2).map(lambda v: v).unbatch())
    assert bool(Dataset.range(3).repeat())


def test_stream_transformations_after_batch():
    ds = Dataset.range(10).batch(2)  # elements are batches: the streaming path
    assert [b.tolist() for b in ds.skip(1).take(2).as_numpy_iterator()] == [[2, 3], [4, 5]]
    assert len(list(ds.repeat(2))) == 10
    shuffled = [tuple(b) for b in ds.shuffle(3, seed=0).as_numpy_iterator()]
    assert sorted(shuffled) == [(i, i + 1) for i in range(0, 10, 2)]
    assert [b.shape for b in ds.batch(2)] == [(2, 2), (2, 2), (1, 2)]


# -- map -----------------------------------------------------------------------------------------
def test_map_before_batch_unpacks_tuples_and_vectorises():
    x, y = rows(6)
    seen = []

    def scale(image, label):
        seen.append(image.shape)  # traced once per batch signature, not once per example
        return image / 2.0, label + 1

    out = list(Dataset.from_tensor_slices((x, y)).map(scale).batch(4))
    np.testing.assert_allclose(np.concatenate([o[0].numpy() for o in out]), x / 2.0)
    np.testing.assert_array_equal(np.concatenate([o[1].numpy() for o in out]), y + 1)
    assert seen == [(2,), (2,)]  # per-element shapes; full batch + remainder batch


def test_map_per_element_semantics_for_reductions():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    ds = Dataset.from_tensor_slices(x).map(lambda row: mk.reduce_sum(row)).batch(4)
    np.testing.assert_allclose(next(iter(ds)).numpy(), x.sum(axis=1))  # per row, not over the batch


def test_map_dict_and_unbatched_iteration():
    ds = Dataset.from_tensor_slices({"a": np.arange(3.0), "b": np.ones(3)})
    out = list(ds.map(lambda d: {"sum": d["a"] + d["b"]}))
    assert [float(o["sum"]) for o in out] == [1.0, 2.0, 3.0]


def test_map_after_batch_gets_whole_batches():
    ds = Dataset.range(6).batch(3).map(lambda b: mk.reduce_sum(b))
    assert [int(v) for v in ds] == [3, 12]


def test_map_with_random_before_batch_is_an_error():
    ds = Dataset.range(4).map(lambda v: mk.cast(v, mk.float32) + mk.random.uniform(())).batch(2)
    with pytest.raises(ValueError, match="random numbers.*after .batch"):
        list(ds)
    after = Dataset.range(4).batch(2).map(lambda v: mk.cast(v, mk.float32) + mk.random.uniform((2,)))
    assert len(list(after)) == 2


def test_map_needing_concrete_values_is_a_clear_error():
    ds = Dataset.range(4).map(lambda v: v.numpy()).batch(2)
    with pytest.raises(TypeError, match=r"Dataset.map\(<lambda>\).*jax.vmap"):
        list(ds)
    with pytest.raises(TypeError, match="callable"):
        Dataset.range(3).map(3)


def test_cache_after_map_computes_once():
    calls = []

    def double(v):
        calls.append(1)
        return v * 2

    ds = Dataset.range(6).map(double).cache().shuffle(6, seed=0).batch(3)
    first, second = labels(ds), labels(ds)
    assert sorted(first) == sorted(second) == [0, 2, 4, 6, 8, 10]
    assert len(calls) == 1  # traced once, for the single cached batch of 6 rows


def test_cache_after_shuffle_keeps_the_first_order():
    ds = Dataset.range(20).shuffle(20, seed=0).cache()  # as tf.data: the first pass is replayed
    first = labels(ds)
    assert labels(ds) == first and sorted(first) == list(range(20))
    streamed = Dataset.range(6).batch(2).map(lambda b: b + 1).cache()
    assert labels(streamed) == labels(streamed) == [1, 2, 3, 4, 5, 6]


# -- prefetch and iteration ------------------------------------------------------------------------
def test_prefetch_yields_same_elements_and_uses_a_thread():
    threads = []

    def record(v):
        threads.append(threading.current_thread().name)
        return v

    ds = Dataset.range(9).batch(2).map(record).prefetch(data.AUTOTUNE)
    assert labels(ds) == list(range(9))
    assert set(threads) == {"mk.data.prefetch"}
    assert data.AUTOTUNE == data.experimental.AUTOTUNE == -1


def test_prefetch_propagates_errors_and_stops_early():
    def fail(v):
        if int(v[0]) >= 4:
            raise RuntimeError("boom in map")
        return v

    with pytest.raises(RuntimeError, match="boom in map"):
        list(Dataset.range(10).batch(2).map(fail).prefetch(1))
    iterator = iter(Dataset.range(10 ** 6).batch(10).prefetch(2))
    assert next(iterator).shape == (10,)
    iterator.close()  # abandoning the iterator stops the worker


def test_as_numpy_iterator_types():
    element = next(Dataset.from_tensor_slices((np.ones((2, 3)), np.arange(2))).as_numpy_iterator())
    assert isinstance(element[0], np.ndarray) and element[0].dtype == np.float32
    assert isinstance(element[1], np.generic)


def test_iteration_inside_mk_function_training_loop():
    x = np.random.default_rng(0).standard_normal((32, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [2.0], [-1.0]], np.float32)
    w = mk.Variable(np.zeros((3, 1), np.float32))

    @mk.function
    def step(xb, yb):
        with mk.GradientTape() as tape:
            loss = mk.reduce_mean(mk.square(xb @ w - yb))
        w.assign_sub(0.1 * tape.gradient(loss, w))
        return loss

    ds = Dataset.from_tensor_slices((x, y)).shuffle(32, seed=0).batch(8, drop_remainder=True).prefetch(2)
    losses = [float(step(xb, yb)) for _ in range(20) for xb, yb in ds]
    assert losses[-1] < losses[0] * 0.1


def test_as_numpy_iterator_has_tfs_next_method():
    """TF's iterator has ``next()`` (the transfer-learning tutorial calls it) beside ``next(it)``."""
    it = mk.data.Dataset.range(5).batch(2).as_numpy_iterator()
    assert iter(it) is it
    assert it.next().tolist() == [0, 1] and next(it).tolist() == [2, 3] and [b.tolist() for b in it] == [[4]]
    with pytest.raises(StopIteration):
        it.next()
