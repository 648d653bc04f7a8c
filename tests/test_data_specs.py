"""Dataset.element_spec through every stage, against what TF 2.21 reports for the same
pipelines (int64/float64 there are int32/float32 here, mk's canonical dtypes)."""
import numpy as np
import pytest

import minikeras as mk

Dataset = mk.data.Dataset
Spec = mk.TensorSpec


def test_rows_and_batches():
    ds = Dataset.from_tensor_slices((np.zeros((10, 28, 28), "f"), np.zeros(10, "i")))
    assert ds.element_spec == (Spec((28, 28), mk.float32), Spec((), mk.int32))
    assert ds.batch(4).element_spec == (Spec((None, 28, 28), mk.float32), Spec((None,), mk.int32))
    assert ds.batch(4, drop_remainder=True).element_spec[1] == Spec((4,), mk.int32)
    assert Dataset.from_tensor_slices({"a": [1, 2]}).element_spec == {"a": Spec((), mk.int32)}
    assert Dataset.range(3).element_spec == Spec((), mk.int32)
    assert Dataset.from_tensors(np.zeros((2, 3), "f")).element_spec == Spec((2, 3), mk.float32)


def test_through_map_unbatch_and_rebatch():
    rows = Dataset.from_tensor_slices(np.zeros((10, 3), "f"))
    assert rows.batch(4).map(lambda x: mk.reduce_sum(x, 1)).element_spec == Spec((None,), mk.float32)
    assert rows.map(lambda x: (x, mk.reduce_sum(x))).element_spec == (Spec((3,), mk.float32), Spec((), mk.float32))
    assert rows.batch(2).map(lambda x: mk.reshape(x, (-1,))).element_spec == Spec((None,), mk.float32)
    assert rows.batch(2).unbatch().element_spec == Spec((3,), mk.float32)
    assert rows.batch(2).unbatch().batch(5, drop_remainder=True).element_spec == Spec((5, 3), mk.float32)
    assert rows.shuffle(4).repeat().take(3).prefetch(1).cache().element_spec == Spec((3,), mk.float32)
    assert Dataset.zip((Dataset.range(2), rows)).element_spec == (Spec((), mk.int32), Spec((3,), mk.float32))


def test_unbatch_of_scalars_is_an_error():
    with pytest.raises(ValueError, match="at least one dimension"):
        Dataset.range(3).batch(1).unbatch().unbatch().element_spec  # noqa: B018


def test_untraceable_function_gets_a_clear_error():
    ds = Dataset.range(4).batch(2).map(lambda x: x * int(x.numpy()[0]))
    assert [list(b.numpy()) for b in ds] == [[0, 0], [4, 6]]  # eager map after batch still runs
    with pytest.raises(TypeError, match=r"cannot work out the element_spec after the function <lambda>.*numpy"):
        ds.element_spec  # noqa: B018
