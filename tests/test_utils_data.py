"""mk.utils.timeseries_dataset_from_array / pad_sequences / split_dataset against Keras 3's outputs
(tests/fixtures/utils/keras_utils.npz, made by make_utils_fixtures.py there)."""
import os

import numpy as np
import pytest

import minikeras as mk

FIXTURES = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "utils", "keras_utils.npz"))
DATA = np.arange(60, dtype=np.float32).reshape(30, 2)
TARGETS = np.arange(30) * 10
CASES = {
    "plain": dict(sequence_length=4, batch_size=5),
    "strided": dict(sequence_length=3, sequence_stride=2, sampling_rate=3, batch_size=4, start_index=2, end_index=25),
    "unbatched": dict(sequence_length=5, sampling_rate=2, batch_size=None, end_index=20),
    "shuffled": dict(sequence_length=4, sequence_stride=3, batch_size=3, shuffle=True, seed=7),
}


def _batches(name, with_targets):
    key = f"ts_{name}_{int(with_targets)}"
    n = int(FIXTURES[f"{key}_batches"])
    xs = [FIXTURES[f"{key}_batch{i}_x"] for i in range(n)]
    ys = [FIXTURES[f"{key}_batch{i}_y"] for i in range(n)] if with_targets else None
    return xs, ys


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("with_targets", [True, False])
def test_timeseries_as_keras(name, with_targets):
    kwargs = CASES[name]
    ds = mk.utils.timeseries_dataset_from_array(DATA, TARGETS if with_targets else None, **kwargs)
    got_x, got_y = [], []
    for element in ds.as_numpy_iterator():
        x, y = element if with_targets else (element, None)
        if kwargs["batch_size"] is None:
            x, y = x[None], (None if y is None else y[None])
        got_x.append(x)
        got_y.append(y)
    want_x, want_y = _batches(name, with_targets)
    if kwargs.get("shuffle"):
        # Start positions are shuffled as Keras does; the local shuffle buffer is tf.data's own
        # randomness, so the same windows come in another order within the buffer.
        assert [len(x) for x in got_x] == [len(x) for x in want_x]
        rows = lambda xs: sorted(map(lambda r: r.tobytes(), np.concatenate(xs)))
        assert rows(got_x) == rows(want_x)
        if with_targets:
            pairs = lambda xs, ys: sorted(zip(np.concatenate(ys).tolist(), [r.tolist() for r in np.concatenate(xs)]))
            assert pairs(got_x, got_y) == pairs(want_x, want_y)
        return
    assert len(got_x) == len(want_x)
    for g, w in zip(got_x, want_x):
        np.testing.assert_array_equal(g, w)
    if with_targets:
        for g, w in zip(got_y, want_y):
            np.testing.assert_array_equal(g, w)


def test_timeseries_errors_and_spec():
    ds = mk.utils.timeseries_dataset_from_array(DATA, TARGETS, sequence_length=4, batch_size=5)
    x_spec, y_spec = ds.element_spec
    assert x_spec.shape[1:] == (4, 2) and x_spec.dtype == mk.float32
    with pytest.raises(ValueError, match="`start_index` must be lower than the length of the data"):
        mk.utils.timeseries_dataset_from_array(DATA, None, 3, start_index=30)
    with pytest.raises(ValueError, match="`end_index` must be higher than `start_index`"):
        mk.utils.timeseries_dataset_from_array(DATA, None, 3, start_index=5, end_index=4)
    with pytest.raises(ValueError, match="`sampling_rate` must be higher than 0"):
        mk.utils.timeseries_dataset_from_array(DATA, None, 3, sampling_rate=0)
    with pytest.raises(ValueError, match="`sequence_stride` must be lower than the length"):
        mk.utils.timeseries_dataset_from_array(DATA, None, 3, sequence_stride=30)


@pytest.mark.parametrize("padding", ["pre", "post"])
@pytest.mark.parametrize("truncating", ["pre", "post"])
def test_pad_sequences_as_keras(padding, truncating):
    seqs = [[1, 2, 3], [4], [], [5, 6, 7, 8, 9]]
    got = mk.utils.pad_sequences(seqs, maxlen=3, padding=padding, truncating=truncating, value=-1)
    want = FIXTURES[f"pad_{padding}_{truncating}"]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_pad_sequences_defaults_steps_and_errors():
    padded = mk.utils.pad_sequences([[1, 2, 3], [4], [], [5, 6, 7, 8, 9]])
    np.testing.assert_array_equal(padded, FIXTURES["pad_default"])
    got = mk.utils.pad_sequences([np.ones((2, 3)), np.ones((1, 3)) * 2], dtype="float32")
    np.testing.assert_array_equal(got, FIXTURES["pad_float_steps"])
    with pytest.raises(ValueError, match="Padding type"):
        mk.utils.pad_sequences([[1]], padding="middle")
    with pytest.raises(ValueError, match="position 1 is different"):
        mk.utils.pad_sequences([np.ones((2, 3)), np.ones((1, 2))])
    with pytest.raises(ValueError, match="dtype=object"):
        mk.utils.pad_sequences([["a"]], value="x")


@pytest.mark.parametrize("name,kwargs", [("frac", dict(left_size=0.8)), ("ints", dict(left_size=3, right_size=5)),
                                         ("shuffled", dict(right_size=0.3, shuffle=True, seed=11))])
def test_split_dataset_as_keras(name, kwargs):
    x, y = np.arange(20).reshape(10, 2), np.arange(10)
    for ds, side in zip(mk.utils.split_dataset((x, y), **kwargs), ("left", "right")):
        rows = list(ds.as_numpy_iterator())
        np.testing.assert_array_equal(np.stack([r[0] for r in rows]), FIXTURES[f"split_{name}_{side}_x"])
        np.testing.assert_array_equal(np.stack([r[1] for r in rows]), FIXTURES[f"split_{name}_{side}_y"])


def test_split_dataset_of_datasets_and_errors():
    x = np.arange(10, dtype=np.float32)
    left, right = mk.utils.split_dataset(mk.data.Dataset.from_tensor_slices(x).batch(3), left_size=0.6)
    assert [b.shape[0] for b in left.as_numpy_iterator()] == [3, 3]
    np.testing.assert_array_equal(np.concatenate(list(right.as_numpy_iterator())), x[6:])
    left, right = mk.utils.split_dataset(mk.data.Dataset.from_tensor_slices({"a": x}), right_size=2)
    assert len(left) == 8 and next(iter(right))["a"].numpy() == 8
    with pytest.raises(ValueError, match="At least one of the `left_size` or `right_size`"):
        mk.utils.split_dataset(x)
    with pytest.raises(ValueError, match="greater than 1"):
        mk.utils.split_dataset(x, left_size=0.7, right_size=0.5)
    with pytest.raises(ValueError, match="same first dimension"):
        mk.utils.split_dataset((x, x[:3]), left_size=0.5)
    with pytest.raises(TypeError, match="must be either"):
        mk.utils.split_dataset(5, left_size=0.5)


def test_to_categorical_and_normalize_as_keras():
    np.testing.assert_array_equal(mk.utils.to_categorical([[1], [3], [0]]), FIXTURES["categorical"])
    np.testing.assert_allclose(mk.utils.normalize(np.array([[3.0, 4.0, 0.0], [1.0, -2.0, 2.0]]), order=1),
                               FIXTURES["normalize"])
