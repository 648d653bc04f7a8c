"""Tensor and Variable: the behaviour TensorFlow 2 documents for tf.Tensor / tf.Variable
(repr and str, Python and NumPy conversion, indexing, dtype rules, hashing) and the
errors users get for the same mistakes."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk


# -- repr / str / Python conversion ------------------------------------------------------------
def test_scalar_repr_matches_tf_str_format():
    assert repr(mk.constant(6.0)) == "mk.Tensor(6.0, shape=(), dtype=float32)"


def test_vector_repr_is_one_line():
    assert repr(mk.constant([1, 2])) == "mk.Tensor([1 2], shape=(2,), dtype=int32)"


def test_matrix_repr_starts_the_array_on_its_own_line():
    text = repr(mk.constant([[1.0, 2.0], [3.0, 4.0]]))
    assert text == "mk.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)"


def test_str_equals_repr():
    t = mk.constant([[1.0, 2.0], [3.0, 4.0]])
    assert str(t) == repr(t)
    assert str(mk.constant(True)) == "mk.Tensor(True, shape=(), dtype=bool)"


def test_float_int_bool_of_scalars():
    assert float(mk.constant(2.5)) == 2.5 and isinstance(float(mk.constant(2.5)), float)
    assert int(mk.constant(2.7)) == 2          # truncates, as int(np.float32(2.7))
    assert int(mk.constant(7)) == 7
    assert bool(mk.constant(0.0)) is False and bool(mk.constant(3)) is True


def test_format_spec_applies_to_scalars():
    assert f"{mk.constant(2.5):.3f}" == "2.500"
    assert f"{mk.constant(7):4d}" == "   7"
    assert f"loss={mk.constant(0.25)}" == "loss=0.25"


def test_bool_of_a_vector_is_ambiguous():
    with pytest.raises(ValueError, match="ambiguous"):
        bool(mk.constant([1.0, 2.0]))


def test_python_if_on_an_eager_comparison():
    x = mk.constant(2.0)
    assert ("big" if x > 1.0 else "small") == "big"
    assert ("big" if x > 3.0 else "small") == "small"


# -- NumPy interop ----------------------------------------------------------------------------------
def test_numpy_returns_an_ndarray_copy():
    t = mk.constant([1.0, 2.0])
    a = t.numpy()
    assert isinstance(a, np.ndarray) and a.dtype == np.float32
    a[0] = 99.0
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])


def test_np_asarray_and_dtype_argument():
    t = mk.constant([1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(t), [1.0, 2.0])
    assert np.asarray(t).dtype == np.float32
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert np.array(t).tolist() == [1.0, 2.0]


def test_numpy_functions_accept_tensors():
    t = mk.constant([[1.0, 2.0], [3.0, 4.0]])
    assert np.sum(t) == 10.0
    np.testing.assert_array_equal(np.transpose(t), [[1.0, 3.0], [2.0, 4.0]])


def test_ndarray_on_the_left_of_an_operator_gives_a_tensor():
    out = np.ones(2, np.float32) + mk.constant([1.0, 2.0])
    assert isinstance(out, mk.Tensor)
    np.testing.assert_array_equal(out.numpy(), [2.0, 3.0])


def test_jnp_asarray_unwraps_a_tensor():
    t = mk.constant([1.0, 2.0])
    assert isinstance(jnp.asarray(t), jax.Array)
    np.testing.assert_array_equal(jnp.asarray(t), [1.0, 2.0])


# -- indexing ---------------------------------------------------------------------------------------
M = np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize("index", [1, -1, (1, 2), slice(1, None), (slice(None), 1), (Ellipsis, 0),
                                   (None, 1), (slice(None, None, 2), slice(1, 3))],
                         ids=["int", "negative", "pair", "slice", "column", "ellipsis", "newaxis", "strided"])
def test_indexing_matches_numpy(index):
    np.testing.assert_array_equal(mk.constant(M)[index].numpy(), M[index])


def test_out_of_range_index_is_an_index_error():
    with pytest.raises(IndexError, match="out of bounds"):
        mk.constant(M)[3]


def test_slicing_is_differentiable():
    x = mk.constant(M)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = mk.reduce_sum(x[1:, ::2] * 3.0) + x[0, 1] * x[0, 1]
    expected = jax.jit(jax.grad(lambda m: jnp.sum(m[1:, ::2] * 3.0) + m[0, 1] ** 2))(M)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected)


def test_len_and_iteration():
    t = mk.constant([[1, 2], [3, 4], [5, 6]])
    assert len(t) == 3
    rows = list(t)
    assert len(rows) == 3 and all(isinstance(r, mk.Tensor) for r in rows)
    np.testing.assert_array_equal(rows[2].numpy(), [5, 6])


def test_len_of_a_scalar_is_a_type_error():
    with pytest.raises(TypeError, match="scalar"):
        len(mk.constant(1.0))
    with pytest.raises(TypeError, match="scalar"):
        iter(mk.constant(1.0)).__next__()


# -- dtype rules --------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, dtype", [
    (1.5, mk.float32), (3, mk.int32), (True, mk.bool), (np.float64(1.5), mk.float32),
    (np.zeros(2), mk.float32), (np.zeros(2, np.int64), mk.int32), (np.zeros(2, np.float16), mk.float16),
    ([1.0, 2.0], mk.float32), ([1, 2], mk.int32)],
    ids=["py-float", "py-int", "py-bool", "np-float64", "np-float64-array", "np-int64-array", "np-float16",
         "float-list", "int-list"])
def test_default_dtypes_follow_tensorflow(value, dtype):
    assert mk.constant(value).dtype == dtype


def test_python_numbers_take_the_tensor_dtype():
    assert (mk.constant([1, 2]) * 2).dtype == mk.int32
    assert (mk.constant([1.0], dtype=mk.float16) * 2.5).dtype == mk.float16


def test_mixed_dtypes_are_an_error_naming_the_op():
    with pytest.raises(TypeError, match="AddV2|Add.*float32.*int32"):
        mk.constant(1.0) + mk.constant(1)
    with pytest.raises(TypeError, match="Mul"):
        mk.multiply(mk.constant([1.0]), mk.constant([1]))


def test_python_float_with_an_int_tensor_is_an_error():
    with pytest.raises(TypeError, match="float"):
        mk.constant([1, 2]) * 0.5


# -- hashing --------------------------------------------------------------------------------------------
def test_tensors_are_unhashable():
    with pytest.raises(TypeError, match="unhashable"):
        hash(mk.constant(1.0))
    with pytest.raises(TypeError, match="unhashable"):
        {mk.constant(1.0)}  # noqa: B018


def test_ref_is_a_hashable_identity_key():
    a, b = mk.constant(1.0), mk.constant(1.0)
    table = {a.ref(): "a", b.ref(): "b"}
    assert table[a.ref()] == "a" and table[b.ref()] == "b"
    assert a.ref() == a.ref() and a.ref() != b.ref()
    assert a.ref().deref() is a


def test_equality_is_elementwise():
    out = mk.constant([1.0, 2.0]) == mk.constant([1.0, 3.0])
    np.testing.assert_array_equal(out.numpy(), [True, False])
    assert (mk.constant(1.0) == None) is False  # noqa: E711
    assert (mk.constant(1.0) != None) is True  # noqa: E711


# -- Variable -----------------------------------------------------------------------------------------
def test_variable_repr_like_tf():
    assert repr(mk.Variable(1.0, name="v")) == "<mk.Variable 'v' shape=() dtype=float32, numpy=1.0>"
    assert repr(mk.Variable([1.0, 2.0], name="w")) == \
        "<mk.Variable 'w' shape=(2,) dtype=float32, numpy=array([1., 2.], dtype=float32)>"
    assert repr(mk.Variable([[1, 2], [3, 4]], name="m")) == \
        "<mk.Variable 'm' shape=(2, 2) dtype=int32, numpy=\narray([[1, 2],\n       [3, 4]], dtype=int32)>"


def test_variable_defaults_and_dtype_argument():
    v = mk.Variable(1.0)
    assert v.trainable is True and v.name == "Variable" and v.dtype == mk.float32 and v.shape == ()
    assert mk.Variable(1, dtype=mk.float32).dtype == mk.float32
    assert mk.Variable(np.zeros((2, 3))).dtype == mk.float32
    assert mk.Variable(1.0, trainable=False, name="step").trainable is False
    assert mk.Variable(lambda: mk.ones((2,))).shape == (2,)


def test_variable_needs_an_initial_value():
    with pytest.raises(ValueError, match="initial_value"):
        mk.Variable()


def test_assign_family_changes_the_value_in_place_and_returns_the_variable():
    v = mk.Variable([1.0, 2.0])
    assert v.assign([3.0, 4.0]) is v
    np.testing.assert_array_equal(v.numpy(), [3.0, 4.0])
    v.assign_add([1.0, 1.0])
    np.testing.assert_array_equal(v.numpy(), [4.0, 5.0])
    v.assign_sub(mk.constant([2.0, 2.0]))
    np.testing.assert_array_equal(v.numpy(), [2.0, 3.0])
    assert v.assign([0.0, 0.0], read_value=False) is None


def test_a_read_keeps_its_value_after_assign():
    v = mk.Variable(1.0)
    before = v.read_value()
    v.assign(5.0)
    assert float(before) == 1.0 and float(v.value()) == 5.0


@pytest.mark.parametrize("method", ["assign", "assign_add", "assign_sub"])
def test_assign_with_the_wrong_shape_names_both_shapes(method):
    v = mk.Variable([1.0, 2.0], name="w")
    with pytest.raises(ValueError, match=r"'w'") as info:
        getattr(v, method)([1.0, 2.0, 3.0])
    assert "(2,)" in str(info.value) and "(3,)" in str(info.value)


def test_assign_add_does_not_broadcast():
    v = mk.Variable([1.0, 2.0], name="w")
    with pytest.raises(ValueError, match="shapes must be equal"):
        v.assign_add(1.0)


def test_assign_a_tensor_of_another_dtype_is_an_error():
    v = mk.Variable(1.0, name="v")
    with pytest.raises(ValueError, match="requested dtype float32 for Tensor with dtype int32"):
        v.assign(mk.constant(2))


def test_assign_a_python_float_to_an_int_variable_is_an_error():
    v = mk.Variable(1, name="count")
    with pytest.raises(TypeError, match="2.5"):
        v.assign(2.5)
    v.assign_add(2)
    assert int(v) == 3


def test_value_read_value_numpy():
    v = mk.Variable([1.0, 2.0])
    assert isinstance(v.value(), mk.Tensor) and isinstance(v.read_value(), mk.Tensor)
    np.testing.assert_array_equal(v.value().numpy(), [1.0, 2.0])
    assert isinstance(v.numpy(), np.ndarray)
    np.testing.assert_array_equal(np.asarray(v), [1.0, 2.0])


def test_variables_work_as_operands_and_are_hashable():
    v = mk.Variable(2.0)
    out = v * 3.0 + v
    assert isinstance(out, mk.Tensor) and float(out) == 8.0
    assert {v: 1}[v] == 1
    assert float(v) == 2.0 and f"{v:.1f}" == "2.0"


def test_len_of_a_scalar_variable_is_a_type_error():
    with pytest.raises(TypeError, match="scalar"):
        len(mk.Variable(1.0))
    assert len(mk.Variable([1.0, 2.0])) == 2


def test_python_scalars_are_converted_once_and_keep_their_sign():
    a, b = mk.constant(0.0), mk.constant(-0.0)
    assert np.signbit(b.numpy()) and not np.signbit(a.numpy())
    assert (mk.constant([1.0]) * -0.0).numpy()[0] == 0.0
    assert np.signbit((mk.constant([1.0]) * -0.0).numpy()[0])


def test_variables_do_not_share_buffers_with_cached_constants():
    v = mk.Variable(0.5)
    w = mk.Variable(0.5)
    assert v._value is not w._value
