"""mk.TensorSpec: shapes with None, compatibility, equality/hash and repr as tf.TensorSpec
(TF 2.21: repr 'TensorSpec(shape=(None, 3), dtype=tf.float32, name=None)', -1 rejected)."""
import numpy as np
import pytest

import minikeras as mk


def test_repr_and_properties():
    spec = mk.TensorSpec((None, 3), mk.float32)
    assert repr(spec) == "TensorSpec(shape=(None, 3), dtype=mk.float32, name=None)"
    assert repr(mk.TensorSpec(None)) == "TensorSpec(shape=<unknown>, dtype=mk.float32, name=None)"
    assert spec.shape == (None, 3) and spec.dtype == mk.float32 and spec.name is None
    named = mk.TensorSpec([2], "int32", name="x")
    assert named.shape == (2,) and named.dtype == mk.int32 and named.name == "x"


def test_compatibility():
    spec = mk.TensorSpec((None, 3))
    assert spec.is_compatible_with(mk.zeros((5, 3)))
    assert not spec.is_compatible_with(mk.zeros((5, 3), mk.int32))
    assert not spec.is_compatible_with(mk.zeros((5, 4)))
    assert not spec.is_compatible_with(mk.zeros((3,)))
    assert spec.is_compatible_with(mk.TensorSpec((7, 3)))
    assert spec.is_compatible_with(np.zeros((1, 3), np.float32))
    assert spec.is_compatible_with(mk.Variable(np.zeros((2, 3), np.float32)))
    assert mk.TensorSpec(None).is_compatible_with(mk.zeros((1, 2, 3)))
    assert mk.TensorSpec.from_tensor(mk.zeros((2, 3))) == mk.TensorSpec((2, 3))
    assert spec.shape_matches((4, 3)) and not spec.shape_matches((4, 2)) and spec.shape_matches(None)


def test_equality_and_hash():
    a, b = mk.TensorSpec((None, 3)), mk.TensorSpec([None, 3], mk.float32)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != mk.TensorSpec((None, 3), name="x") and a != mk.TensorSpec((None, 3), mk.int32)
    assert a != mk.TensorSpec((2, 3))


def test_bad_shapes():
    with pytest.raises(ValueError, match="dimension -1 must be >= 0"):
        mk.TensorSpec([-1, 3])  # TF 2.21: "Dimension -1 must be >= 0"
    with pytest.raises(TypeError, match="shape must"):
        mk.TensorSpec("abc")
    with pytest.raises(TypeError, match="dtype"):
        mk.TensorSpec((1,), "not_a_dtype")
