"""String Tensors on the host: creation, numpy(), indexing, comparisons, refusal in compiled
code, and string components of datasets. Expected values are TensorFlow 2.21's."""
import numpy as np
import pytest

import minikeras as mk


def test_constant_gives_bytes_as_tf():
    t = mk.constant(["ab", "cé"])
    assert t.dtype == mk.string and t.shape == (2,)
    assert isinstance(t, mk.Tensor)
    value = t.numpy()
    assert value.dtype == object and list(value) == [b"ab", b"c\xc3\xa9"]
    assert repr(t) == "mk.Tensor([b'ab' b'c\\xc3\\xa9'], shape=(2,), dtype=string)"
    assert t[0].numpy() == b"ab" and repr(t[0]) == "mk.Tensor(b'ab', shape=(), dtype=string)"
    assert mk.constant(b"x").numpy() == b"x"


def test_convert_to_tensor_and_shape_argument():
    t = mk.convert_to_tensor(np.array(["a", "b"]))
    assert t.dtype == mk.string and list(t.numpy()) == [b"a", b"b"]
    assert mk.constant("a", shape=(2, 2)).numpy().tolist() == [[b"a", b"a"], [b"a", b"a"]]
    assert mk.constant([[b"a"], [b"b"]]).shape == (2, 1)
    assert mk.as_dtype("string") == mk.string
    assert repr(mk.TensorSpec((None,), mk.string)) == "TensorSpec(shape=(None,), dtype=mk.string, name=None)"


def test_equality_and_concatenation():
    t = mk.constant(["ab", "cé"])
    np.testing.assert_array_equal((t == "ab").numpy(), [True, False])
    np.testing.assert_array_equal((t != mk.constant(["ab", "x"])).numpy(), [False, True])
    assert bool(mk.constant("x") == "x")
    assert list((t + "z").numpy()) == [b"abz", b"c\xc3\xa9z"]
    assert list(("<" + t).numpy()) == [b"<ab", b"<c\xc3\xa9"]


def test_numeric_ops_refuse_strings_with_the_reason():
    t = mk.constant(["a"])
    with pytest.raises(TypeError, match="data pipeline"):
        t * 2
    with pytest.raises(TypeError, match="preprocessing layers"):
        mk.reduce_sum(t)


def test_compiled_functions_refuse_strings():
    identity = mk.function(lambda x: x)
    with pytest.raises(TypeError, match="cannot enter compiled code"):
        identity(mk.constant(["a"]))

    def make():
        return mk.constant("a")
    with pytest.raises(TypeError, match="Creating a string mk.Tensor: .*data pipeline"):
        mk.function(make, autograph=False)()


def test_dataset_of_strings():
    ds = mk.data.Dataset.from_tensor_slices((np.array(["x y", "z"]), [1, 0]))
    assert ds.element_spec[0] == mk.TensorSpec((), mk.string)
    assert list(ds.as_numpy_iterator()) == [(b"x y", 1), (b"z", 0)]
    text, label = next(iter(ds.batch(2)))
    assert text.dtype == mk.string and list(text.numpy()) == [b"x y", b"z"]
    np.testing.assert_array_equal(label.numpy(), [1, 0])
    mapped = ds.map(lambda s, y: (s + "!", y * 2)).batch(2)  # map before batch runs row by row
    texts, labels = next(iter(mapped))
    assert list(texts.numpy()) == [b"x y!", b"z!"] and labels.numpy().tolist() == [2, 0]
    assert list(ds.batch(1).unbatch().as_numpy_iterator()) == [(b"x y", 1), (b"z", 0)]


def test_text_line_dataset(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"a b\r\nc\n\nlast")
    (tmp_path / "b.txt").write_bytes(b"x\n")
    ds = mk.data.TextLineDataset([str(tmp_path / "a.txt"), str(tmp_path / "b.txt")])
    assert ds.element_spec == mk.TensorSpec((), mk.string)
    assert list(ds.as_numpy_iterator()) == [b"a b", b"c", b"", b"last", b"x"]  # TF's lines
    assert int(ds.cardinality()) == mk.data.UNKNOWN_CARDINALITY
    with pytest.raises(mk.errors.NotFoundError, match="nope.txt"):
        list(mk.data.TextLineDataset(str(tmp_path / "nope.txt")))
