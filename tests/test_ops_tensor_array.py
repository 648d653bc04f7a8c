"""mk.TensorArray against tf.TensorArray's documented examples: eager writes and reads, the
fibonacci example, dynamic_size (also preallocated in loops with a bound), writes at traced
indices inside a compiled loop, and gradients through stack/read."""
import jax
import numpy as np
import pytest

import minikeras as mk


def close(actual, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


def test_eager_write_read_stack_from_the_tf_docs():
    ta = mk.TensorArray(mk.float32, size=0, dynamic_size=True, clear_after_read=False)
    ta = ta.write(0, 10)
    ta = ta.write(1, 20)
    ta = ta.write(2, 30)
    assert float(ta.read(0)) == 10.0 and float(ta.read(1)) == 20.0 and float(ta.read(2)) == 30.0
    close(ta.stack(), [10.0, 20.0, 30.0])
    assert int(ta.size()) == 3 and ta.dtype == mk.float32


@mk.function
def fibonacci(n):
    ta = mk.TensorArray(mk.float32, size=0, dynamic_size=True)
    ta = ta.unstack([0., 1.])
    for i in range(2, n):
        ta = ta.write(i, ta.read(i - 1) + ta.read(i - 2))
    return ta.stack()


def test_fibonacci_example_from_the_tf_docs():
    close(fibonacci(7), [0., 1., 1., 2., 3., 5., 8.])


def test_fixed_size_errors():
    ta = mk.TensorArray(mk.float32, size=2)
    with pytest.raises(IndexError, match="index 2 but array size is: 2"):
        ta.write(2, 1.0)
    with pytest.raises(TypeError, match="dtype is float32.*int32"):
        ta.write(0, mk.constant(1))
    ta = ta.write(0, [1.0, 2.0])
    with pytest.raises(ValueError, match=r"shape \(3,\).*\(2,\)"):
        ta.write(1, [1.0, 2.0, 3.0])
    close(ta.stack(), [[1.0, 2.0], [0.0, 0.0]])  # unwritten elements are zeros


def test_writes_at_traced_indices_in_a_compiled_loop():
    @mk.function
    def squares(n):
        ta = mk.TensorArray(mk.float32, size=5, element_shape=())
        for i in mk.range(n):
            ta = ta.write(i, mk.cast(i * i, mk.float32))
        return ta.stack()

    close(squares(mk.constant(3)), [0.0, 1.0, 4.0, 0.0, 0.0])
    close(squares(mk.constant(5)), [0.0, 1.0, 4.0, 9.0, 16.0])
    assert squares.tracing_count == 1


def test_element_shape_is_inferred_from_the_loop_body():
    @mk.function
    def f(n):
        ta = mk.TensorArray(mk.float32, size=3)
        for i in mk.range(n):
            ta = ta.write(i, mk.fill([2], mk.cast(i, mk.float32)))
        return ta.stack()

    close(f(mk.constant(2)), [[0.0, 0.0], [1.0, 1.0], [0.0, 0.0]])


def test_a_dynamic_array_cannot_grow_in_an_unbounded_loop_over_a_traced_tensor():
    @mk.function
    def f(n):
        ta = mk.TensorArray(mk.float32, size=0, dynamic_size=True)
        for i in mk.range(n):
            ta = ta.write(i, 1.0)
        return ta.stack()

    with pytest.raises(ValueError, match="cannot grow inside a loop over a traced Tensor whose number of iterations "
                                         "is unknown while tracing.*maximum_iterations"):
        f(mk.constant(2))

    @mk.function
    def static_length(x):  # a Tensor of static length: the loop is unrolled while tracing
        ta = mk.TensorArray(mk.float32, size=0, dynamic_size=True)
        for i in mk.range(x.shape[0]):
            ta = ta.write(i, x[i] * 2.0)
        return ta.stack()

    close(static_length(mk.constant([1.0, 2.0, 3.0])), [2.0, 4.0, 6.0])


def test_gradient_through_write_and_stack():
    x = mk.constant([1.0, 2.0])
    with mk.GradientTape() as tape:
        tape.watch(x)
        ta = mk.TensorArray(mk.float32, size=2)
        ta = ta.write(0, x * x).write(1, x * 3.0)
        y = mk.reduce_sum(ta.stack()) + mk.reduce_sum(ta.read(0))
    close(tape.gradient(y, x), 2 * 2 * np.array([1.0, 2.0]) + 3.0)


def test_pytree_round_trip():
    ta = mk.TensorArray(mk.float32, size=2).write(0, 1.0).write(1, 2.0)
    leaves, tree = jax.tree_util.tree_flatten(ta)
    again = jax.tree_util.tree_unflatten(tree, leaves)
    close(again.stack(), [1.0, 2.0])


# -- dynamic_size in loops with a bound (the numbers marked TF 2.21 came from tf.TensorArray) -------
def test_a_dynamic_array_is_preallocated_in_a_for_loop_over_a_traced_tensor():
    @mk.function
    def doubled_rows(x):
        ta = mk.TensorArray(mk.float32, size=0, dynamic_size=True)
        for row in x:
            ta = ta.write(ta.size(), row * 2.0)
        return ta.stack(), ta.size()

    stacked, size = doubled_rows(mk.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    # TF 2.21: [[2, 4], [6, 8], [10, 12]] and size 3
    close(stacked, [[2.0, 4.0], [6.0, 8.0], [10.0, 12.0]])
    assert int(size) == 3

    @mk.function
    def prefilled(x):
        ta = mk.TensorArray(mk.float32, size=1, dynamic_size=True).write(0, -1.0)
        for v in x:
            ta = ta.write(ta.size(), v)
        return ta.stack(), ta.size()

    stacked, size = prefilled(mk.constant([1.0, 2.0]))
    # TF 2.21: [-1, 1, 2] and size 3
    close(stacked, [-1.0, 1.0, 2.0])
    assert int(size) == 3

    @mk.function
    def sizes_inside(x):
        ta = mk.TensorArray(mk.float32, size=0, dynamic_size=True)
        total = mk.constant(0)
        for v in x:
            ta = ta.write(ta.size(), v)
            total += ta.size()
        return total

    assert int(sizes_inside(mk.constant([1.0, 2.0, 3.0]))) == 6  # TF 2.21: 6 (1 + 2 + 3)

    x = mk.constant([[1.0, 2.0], [3.0, 4.0]])
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = mk.reduce_sum(mk.square(doubled_rows(x)[0]))
    close(tape.gradient(y, x), 8.0 * np.asarray(x))


def test_a_dynamic_array_in_a_loop_bounded_by_maximum_iterations():
    @mk.function
    def collatz(n):
        ta = mk.TensorArray(mk.int32, size=0, dynamic_size=True)
        i = 0
        while n != 1:
            mk.autograph.experimental.set_loop_options(maximum_iterations=10)
            ta = ta.write(i, n)
            n = mk.where(n % 2 == 0, n // 2, 3 * n + 1)
            i += 1
        return ta.stack(), ta.size()

    stacked, size = collatz(mk.constant(6))
    # TF 2.21: [6, 3, 10, 5, 16, 8, 4, 2] and size 8. Here stack() has a row per possible
    # iteration (10): the rows after size() are zeros
    assert int(size) == 8
    np.testing.assert_array_equal(stacked.numpy(), [6, 3, 10, 5, 16, 8, 4, 2, 0, 0])

    def squares(n):
        ta = mk.TensorArray(mk.float32, size=0, dynamic_size=True, element_shape=())
        _, ta = mk.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, mk.cast(i, mk.float32) ** 2)),
                              [0, ta], maximum_iterations=4)
        return ta.stack(), ta.size()

    # TF 2.21 (eager and tf.function): [0, 1, 4] and size 3
    stacked, size = squares(mk.constant(3))
    close(stacked, [0.0, 1.0, 4.0])
    stacked, size = mk.function(squares)(mk.constant(3))
    close(stacked, [0.0, 1.0, 4.0, 0.0])
    assert int(size) == 3
