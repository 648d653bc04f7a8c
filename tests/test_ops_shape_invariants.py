"""Shape invariants of mk.while_loop and of autograph's set_loop_options, against TensorFlow
2.21: the marked results and messages came from running the same loops with tf.while_loop and
tf.autograph.experimental.set_loop_options."""
import numpy as np
import pytest

import minikeras as mk


def _grow(i, x):
    return i + 1, mk.concat([x, x], 0)


def _three(i, x):
    return i < 3


def test_eager_loops_ignore_shape_invariants_as_tensorflow():
    # TF 2.21, eagerly: shape (8,) for no invariant, (None,), a violated (1,), and TensorSpecs
    for invariants in (None, [(), (None,)], [(), (1,)], [mk.TensorSpec([]), mk.TensorSpec([None])]):
        i, x = mk.while_loop(_three, _grow, [mk.constant(0), mk.ones((1,))], shape_invariants=invariants)
        assert int(i) == 3 and x.shape == (8,)


def test_the_invariants_must_have_the_structure_of_loop_vars():
    # TF 2.21: ValueError "The two structures don't have the same nested structure."
    with pytest.raises(ValueError, match="don't have the same nested structure"):
        mk.while_loop(_three, _grow, [mk.constant(0), mk.ones((1,))], shape_invariants=[(None,)])


def test_inside_mk_function_shapes_may_change_within_the_invariants():
    @mk.function
    def doubled():
        return mk.while_loop(_three, _grow, [mk.constant(0), mk.ones((1,))], shape_invariants=[(), (None,)])[1]

    # TF 2.21 (tf.function): [1. 1. 1. 1. 1. 1. 1. 1.]
    np.testing.assert_array_equal(doubled().numpy(), np.ones(8))

    @mk.function
    def nested():
        return mk.while_loop(lambda i, p: i < 2, lambda i, p: (i + 1, (mk.concat([p[0], p[0]], 0), p[1] + 1.0)),
                             [mk.constant(0), (mk.ones([1]), mk.constant(0.0))],
                             shape_invariants=[(), ((None,), ())])[1]

    # TF 2.21: [1. 1. 1. 1.] and 2.0
    grown, count = nested()
    np.testing.assert_array_equal(grown.numpy(), np.ones(4))
    assert float(count) == 2.0


def test_a_variable_that_leaves_its_invariant_raises_as_tensorflow():
    @mk.function
    def wrong():
        return mk.while_loop(_three, _grow, [mk.constant(0), mk.ones((1,))], shape_invariants=[(), (1,)])

    # TF 2.21 raises ValueError (... has shape (2,) after one iteration ...)
    with pytest.raises(ValueError, match=r"loop variable 1 has shape \(2,\) after one iteration, which does not "
                                         r"conform with the shape invariant \(1,\)"):
        wrong()

    @mk.function
    def incompatible():
        return mk.while_loop(_three, _grow, [mk.constant(0), mk.ones((1,))], shape_invariants=[(), (None, None)])

    with pytest.raises(ValueError, match=r"not compatible with the initial shape of the loop variable. It enters "
                                         r"the loop with shape \(1,\), but the specified shape invariant is "
                                         r"\(None, None\)"):
        incompatible()


def test_a_traced_condition_keeps_shapes_and_says_why():
    @mk.function
    def grow_until(n):
        return mk.while_loop(lambda i, x: i < n, _grow, [mk.constant(0), mk.ones((1,))],
                             shape_invariants=[(), (None,)])[1]

    # TF 2.21 grows the tensor to (8,); an XLA while loop has carries of fixed shapes
    with pytest.raises(ValueError, match=r"loop variable 1 has shape \(1,\) before the loop and \(2,\) after one "
                                         r"iteration, which its shape invariant \(None,\) allows; but the loop's "
                                         r"condition is a traced Tensor.*Preallocate"):
        grow_until(mk.constant(3))

    @mk.function
    def same_shape(n):
        return mk.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x * 2.0), [mk.constant(0), mk.ones((2, 3))],
                             shape_invariants=[(), (None, 3)])[1]

    # TF 2.21: [[8. 8. 8.] [8. 8. 8.]]
    np.testing.assert_array_equal(same_shape(mk.constant(3)).numpy(), np.full((2, 3), 8.0))


def test_set_loop_options_shape_invariants_in_a_for_loop():
    @mk.function
    def squares():
        out = mk.zeros([0])
        for i in mk.range(3):
            mk.autograph.experimental.set_loop_options(shape_invariants=[(out, (None,))])
            out = mk.concat([out, [mk.cast(i * i, mk.float32)]], 0)
        return out

    # TF 2.21 (the same loop with tf.range(3)): [0. 1. 4.]
    np.testing.assert_array_equal(squares().numpy(), [0.0, 1.0, 4.0])

    @mk.function
    def wider():
        out = mk.ones([1, 2])
        for _ in mk.range(2):
            mk.autograph.experimental.set_loop_options(shape_invariants=[(out, (None, 2))])
            out = mk.concat([out, out], 1)
        return out

    # TF 2.21: ValueError "'out' has shape (None, 4) after one iteration, which does not conform
    # with the shape invariant (None, 2)."
    with pytest.raises(ValueError, match=r"'out' has shape \(1, 4\) after one iteration, which does not conform "
                                         r"with the shape invariant \(None, 2\)"):
        wider()


def test_set_loop_options_shape_invariants_in_a_while_loop_on_a_traced_condition():
    @mk.function
    def doubling(limit):
        out = mk.ones([1])
        while mk.reduce_sum(out) < limit:
            mk.autograph.experimental.set_loop_options(shape_invariants=[(out, (None,))])
            out = mk.concat([out, out], 0)
        return out

    # TF 2.21 returns eight ones; here the loop is one XLA while loop, whose variables keep their shapes
    with pytest.raises(ValueError, match=r"the `while` loop at line \d+: 'out' has shape \(1,\) before the loop and "
                                         r"\(2,\) after one iteration, which its shape invariant \(None,\) allows"):
        doubling(mk.constant(5.0))

    @mk.function
    def unknown(limit):
        out = mk.ones([1])
        other = mk.ones([2])
        while mk.reduce_sum(out) < limit:
            mk.autograph.experimental.set_loop_options(shape_invariants=[(other + 0.0, (None,))])
            out = out * 2.0
        return out

    with pytest.raises(ValueError, match="not the value of a variable this loop changes"):
        unknown(mk.constant(5.0))
