"""Shape and indexing ops: forward values against NumPy, first- and second-order gradients
against JAX, None gradients through one_hot/stop_gradient, and errors for bad shapes.

The ops here are linear, so each check differentiates ``sin(op(x))``: its second derivative
runs the op's gradient rule on a recorded cotangent, which is what nested tapes must get right.
"""
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_close, check_grad, gradient_of, rand

import minikeras as mk

X = rand(2, 3, 4, seed=20)
MASK = rand(4, 5, seed=22) > 0

# name, mk op on tensors, reference for numpy or jax.numpy (xp first), inputs
CASES = [
    ("reshape", lambda x: mk.reshape(x, [6, -1]), lambda xp, x: xp.reshape(x, (6, -1)), [X]),
    ("transpose", lambda x: mk.transpose(x, [2, 0, 1]), lambda xp, x: xp.transpose(x, (2, 0, 1)), [X]),
    ("concat", lambda x, y: mk.concat([x, y, x], axis=1), lambda xp, x, y: xp.concatenate([x, y, x], axis=1),
     [X, rand(2, 1, 4, seed=21)]),
    ("stack", lambda x, y: mk.stack([x, y], axis=1), lambda xp, x, y: xp.stack([x, y], axis=1),
     [X, rand(2, 3, 4, seed=24)]),
    ("squeeze", lambda x: mk.squeeze(x, 1), lambda xp, x: xp.squeeze(x, 1), [rand(3, 1, 4, seed=25)]),
    ("expand_dims", lambda x: mk.expand_dims(x, -1), lambda xp, x: xp.expand_dims(x, -1), [X]),
    ("gather_repeated", lambda x: mk.gather(x, [0, 2, 2, 1]), lambda xp, x: x[xp.array([0, 2, 2, 1])],
     [rand(3, 4, seed=27)]),
    ("gather_axis1", lambda x: mk.gather(x, [[0, 3], [1, 1]], axis=1),
     lambda xp, x: xp.take(x, xp.array([[0, 3], [1, 1]]), axis=1), [rand(3, 4, seed=27)]),
    ("getitem_slices", lambda x: x[1:3, ::-2], lambda xp, x: x[1:3, ::-2], [rand(4, 5, seed=28)]),
    ("getitem_newaxis", lambda x: x[..., None, 2], lambda xp, x: x[..., None, 2], [rand(4, 5, seed=28)]),
    ("getitem_int_array", lambda x: x[np.array([0, 3, 3])], lambda xp, x: x[np.array([0, 3, 3])],
     [rand(4, 5, seed=28)]),
    ("getitem_bool_mask", lambda x: x[MASK], lambda xp, x: x[MASK], [rand(4, 5, seed=28)]),
    ("tile", lambda x: mk.tile(x, [2, 3]), lambda xp, x: xp.tile(x, (2, 3)), [rand(3, 4, seed=29)]),
    ("pad", lambda x: mk.pad(x, [[1, 0], [2, 1]]), lambda xp, x: xp.pad(x, ((1, 0), (2, 1))), [rand(3, 4, seed=29)]),
    ("broadcast_to", lambda x: mk.broadcast_to(x, [2, 3, 4]), lambda xp, x: xp.broadcast_to(x, (2, 3, 4)),
     [rand(3, 1, seed=30)]),
    ("split_unstack", lambda x: mk.concat(mk.split(x, [1, 3], axis=1)[::-1] + [mk.stack(mk.unstack(x, axis=1), 1)], 1),
     lambda xp, x: xp.concatenate([x[:, 1:], x[:, :1], x], 1), [rand(3, 4, seed=29)]),
]

# variants of the ops above, checked for their forward values and first-order gradients only
FIRST_ORDER_CASES = [
    ("transpose_default", mk.transpose, lambda xp, x: xp.transpose(x), [X]),
    ("concat_last", lambda x, y: mk.concat([x, y], -1), lambda xp, x, y: xp.concatenate([x, y], -1),
     [X, rand(2, 3, 2, seed=23)]),
    ("squeeze_all", mk.squeeze, lambda xp, x: xp.squeeze(x), [rand(1, 3, 1, seed=26)]),
    ("getitem_int", lambda x: x[1, -1], lambda xp, x: x[1, -1], [rand(4, 5, seed=28)]),
    ("pad_value", lambda x: mk.pad(x, [[0, 2], [1, 1]], constant_values=1.5),
     lambda xp, x: xp.pad(x, ((0, 2), (1, 1)), constant_values=1.5), [rand(3, 4, seed=29)]),
    ("identity", mk.identity, lambda xp, x: x, [rand(3, 4, seed=29)]),
]


@pytest.mark.parametrize("name, op, ref, inputs", CASES, ids=[c[0] for c in CASES])
def test_shape_op(name, op, ref, inputs):
    out = check_grad(lambda *t: mk.sin(op(*t)), lambda *a: jnp.sin(ref(jnp, *a)), *inputs)
    assert_close(op(*inputs), ref(np, *inputs), rtol=0, atol=0, what=f"{name} vs numpy")
    assert out.shape == ref(np, *inputs).shape


@pytest.mark.parametrize("name, op, ref, inputs", FIRST_ORDER_CASES, ids=[c[0] for c in FIRST_ORDER_CASES])
def test_shape_op_variant(name, op, ref, inputs):
    check_grad(op, lambda *a: ref(jnp, *a), *inputs, order=1)
    assert_close(op(*inputs), ref(np, *inputs), rtol=0, atol=0, what=f"{name} vs numpy")


def test_gather_accumulates_repeated_indices():
    (g,) = gradient_of(lambda x: mk.gather(x, [0, 2, 2]), np.ones(3, np.float32))
    np.testing.assert_array_equal(g, [1.0, 0.0, 2.0])


def test_one_hot_and_stop_gradient_give_none():
    x = mk.constant(rand(3, seed=31))
    with mk.GradientTape(persistent=True) as tape:
        tape.watch(x)
        hot = mk.one_hot(mk.cast(mk.abs(x) * 2.0, mk.int32), 4)
        stopped = mk.stop_gradient(x) * 2.0
    assert tape.gradient(hot, x) is None
    assert tape.gradient(stopped, x) is None
    np.testing.assert_array_equal(mk.one_hot([0, 2, 5], 3), np.eye(3)[[0, 2]].tolist() + [[0, 0, 0]])
    np.testing.assert_array_equal(mk.one_hot([1], 3, on_value=5.0, off_value=-1.0), [[-1, 5, -1]])


def test_variable_inputs_and_gradients():
    v = mk.Variable(rand(3, 4, seed=32))
    with mk.GradientTape() as tape:
        y = mk.reduce_sum(mk.sin(mk.reshape(v, [12])) * mk.transpose(v)[0, 0])
    g = tape.gradient(y, v)
    value = v.numpy()
    expected = np.cos(value) * value[0, 0]
    expected[0, 0] += np.sum(np.sin(value))
    assert_close(g, expected)


# -- errors -------------------------------------------------------------------------------------------
def test_shape_errors():
    x = mk.constant(X)
    with pytest.raises(ValueError, match=r"Cannot reshape a tensor with 24 elements to shape \[5, 5\]"):
        mk.reshape(x, [5, 5])
    with pytest.raises(ValueError, match="not a permutation"):
        mk.transpose(x, [0, 0, 1])
    with pytest.raises(ValueError, match=r"concat: tensor 1 has shape \(2, 3, 5\)"):
        mk.concat([x, mk.zeros([2, 3, 5])], axis=1)
    with pytest.raises(TypeError, match="concat: tensor 1 has dtype int32"):
        mk.concat([x, mk.zeros([2, 3, 4], mk.int32)], axis=0)
    with pytest.raises(ValueError, match="stack: tensor 1 has shape"):
        mk.stack([x, mk.zeros([2, 3])])
    with pytest.raises(ValueError, match="cannot remove axis 0 of size 2"):
        mk.squeeze(x, 0)
    with pytest.raises(ValueError, match="expand_dims: axis 5 is out of range"):
        mk.expand_dims(x, 5)
    with pytest.raises(ValueError, match="tile: multiples"):
        mk.tile(x, [2, 2])
    with pytest.raises(ValueError, match="pad: paddings has 2 rows, tensor has rank 3"):
        mk.pad(x, [[1, 1], [1, 1]])
    with pytest.raises(ValueError, match=r"broadcast_to: cannot broadcast shape \(2, 3, 4\) to \(3, 4\)"):
        mk.broadcast_to(x, [3, 4])
    with pytest.raises(ValueError, match="not divisible into 2 parts"):
        mk.split(x, 2, axis=1)


def test_index_errors():
    x = mk.constant(rand(3, 4))
    with pytest.raises(mk.errors.InvalidArgumentError, match=r"indices\[1\] = 3 is not in \[0, 3\).*GatherV2"):
        mk.gather(x, [0, 3])  # TF 2.21: "indices[1] = 3 is not in [0, 3) [Op:GatherV2]"
    with pytest.raises(mk.errors.InvalidArgumentError, match=r"indices\[1,0\] = -1 is not in \[0, 3\)"):
        mk.gather(x, [[0], [-1]])
    with pytest.raises(TypeError, match="gather: indices must be integers"):
        mk.gather(x, [0.5])
    with pytest.raises(IndexError, match="out of bounds"):
        x[3]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(TypeError, match="one_hot: indices must be integers"):
        mk.one_hot([True], 3)
    with pytest.raises(TypeError, match="exactly one of"):
        mk.one_hot([1], 3, num_classes=3)


def test_one_hot_of_float_class_ids_as_keras():
    # keras.ops.one_hot(np.array([0., 2., 1.5]), num_classes=3) (Keras 3, JAX backend): 1.5 matches no class
    np.testing.assert_array_equal(mk.one_hot(np.array([0.0, 2.0, 1.5], np.float32), num_classes=3),
                                  [[1, 0, 0], [0, 0, 1], [0, 0, 0]])
