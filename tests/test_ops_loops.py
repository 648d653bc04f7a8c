"""mk.while_loop against tf.while_loop's documented behaviour: eagerly, compiled into one
lax.while_loop, with Variables assigned in the body, maximum_iterations, and gradients
(unrolled under a recording tape) checked against jax.grad of the same lax loop."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import minikeras as mk


def close(actual, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


def test_eager_loop_returns_the_structure_of_loop_vars():
    # tf.while_loop's docstring example: i = tf.constant(0); c = lambda i: tf.less(i, 10)
    out = mk.while_loop(lambda i: mk.less(i, 10), lambda i: (mk.add(i, 1),), [mk.constant(0)])
    assert isinstance(out, list) and int(out[0]) == 10
    single = mk.while_loop(lambda i: i < 3, lambda i: i + 1, mk.constant(0))
    assert int(single) == 3


def test_eager_maximum_iterations():
    i, s = mk.while_loop(lambda i, s: True, lambda i, s: (i + 1, s * 2.0), (0, 1.0), maximum_iterations=5)
    assert int(i) == 5 and float(s) == 32.0


@mk.function
def tanh_until_small(x):
    return mk.while_loop(lambda i, y: mk.reduce_sum(y) > 1.0, lambda i, y: (i + 1, mk.tanh(y)), [0, x])


def _reference_tanh_loop(x):
    return lax.while_loop(lambda s: jnp.sum(s[1]) > 1.0, lambda s: (s[0] + 1, jnp.tanh(s[1])), (0, x))


def test_compiled_loop_runs_in_the_program():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    i, y = tanh_until_small(mk.constant(x))
    ri, ry = _reference_tanh_loop(jnp.asarray(x))
    assert int(i) == int(ri) and int(i) > 1
    close(y, ry)
    i2, _ = tanh_until_small(mk.constant(x * 0.1))
    assert int(i2) == 0 and tanh_until_small.tracing_count == 1  # one program, data-dependent trip count
    jaxpr = str(tanh_until_small.programs()[0].jaxpr)
    assert "while" in jaxpr


def test_compiled_loop_assigns_variables_once_per_iteration():
    v = mk.Variable(0.0, name="counter")
    traced = []

    @mk.function
    def count(n):
        def body(i):
            traced.append(1)
            v.assign_add(2.0)
            return i + 1
        return mk.while_loop(lambda i: i < n, body, [0])

    assert int(count(mk.constant(5))[0]) == 5 and float(v) == 10.0
    assert int(count(mk.constant(2))[0]) == 2 and float(v) == 14.0
    assert len(traced) <= 2  # the body is traced, never run per iteration


def test_compiled_maximum_iterations_bounds_the_loop():
    @mk.function
    def f(x):
        return mk.while_loop(lambda y: mk.reduce_sum(y) > 0.0, lambda y: (y - 1.0,), [x], maximum_iterations=3)

    close(f(mk.constant([10.0]))[0], [7.0])
    close(f(mk.constant([2.0]))[0], [0.0])


def test_shape_change_is_an_error_naming_the_variable():
    @mk.function
    def grow(x):
        return mk.while_loop(lambda y: mk.reduce_sum(y) < 10.0, lambda y: (mk.concat([y, y], 0),), [x])

    with pytest.raises(ValueError, match=r"loop variable 0 has shape \(1,\) before the loop, but shape \(2,\)"):
        grow(mk.constant([1.0]))


def test_gradient_needs_maximum_iterations_under_a_tape_in_a_function():
    @mk.function
    def unbounded(x):
        with mk.GradientTape() as tape:
            tape.watch(x)
            y = mk.while_loop(lambda y: mk.reduce_sum(y) > 1.0, lambda y: (mk.tanh(y),), [x])[0]
        return tape.gradient(y, x)

    with pytest.raises(ValueError, match="maximum_iterations"):
        unbounded(mk.constant([2.0]))


def test_gradient_through_a_bounded_loop_matches_jax():
    w = mk.Variable(np.float32(1.5), name="w")

    @mk.function
    def grads(x):
        with mk.GradientTape() as tape:
            tape.watch(x)
            y = mk.while_loop(lambda y: mk.reduce_sum(y) > 1.0, lambda y: (mk.tanh(y) * w,), [x],
                              maximum_iterations=10)[0]
            loss = mk.reduce_sum(y * y)
        return loss, tape.gradient(loss, [x, w])

    def reference(x, w):
        def cond(s):
            return (jnp.sum(s[1]) > 1.0) & (s[0] < 10)
        y = lax.while_loop(cond, lambda s: (s[0] + 1, jnp.tanh(s[1]) * w), (0, x))[1]
        return jnp.sum(y * y)

    x = np.array([2.0, 0.5], np.float32)
    loss, (gx, gw) = grads(mk.constant(x))
    close(loss, reference(jnp.asarray(x), 1.5))
    # jax cannot reverse-differentiate lax.while_loop: forward mode gives the same derivative
    close(gx, jax.jacfwd(reference)(jnp.asarray(x), 1.5), rtol=1e-4)
    close(gw, jax.jacfwd(reference, argnums=1)(jnp.asarray(x), jnp.float32(1.5)), rtol=1e-4)


def test_eager_gradient_records_each_iteration():
    x = mk.constant(0.5)
    with mk.GradientTape() as tape:
        tape.watch(x)
        _, y = mk.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * y), [0, x])
    close(tape.gradient(y, x), 8 * 0.5 ** 7)  # d/dx x^8


def test_argument_errors():
    with pytest.raises(TypeError, match="callable"):
        mk.while_loop(True, lambda i: i, [0])
    with pytest.raises(ValueError, match="returned 2 loop variables, expected 1"):
        mk.while_loop(lambda i: i < 2, lambda i: (i, i), [0])


def test_tensor_array_as_a_loop_variable_of_a_compiled_loop():
    @mk.function
    def powers(x, n):
        ta = mk.TensorArray(mk.float32, size=4, element_shape=(2,))

        def body(i, y, ta):
            return i + 1, y * x, ta.write(i, y)

        _, _, ta = mk.while_loop(lambda i, y, ta: i < n, body, (0, mk.ones_like(x), ta))
        return ta.stack()

    x = np.array([2.0, 3.0], np.float32)
    close(powers(mk.constant(x), mk.constant(4)), [x ** 0, x ** 1, x ** 2, x ** 3])
    close(powers(mk.constant(x), mk.constant(2)), [x ** 0, x ** 1, 0 * x, 0 * x])
    assert powers.tracing_count == 1


def test_a_loop_with_a_trip_count_known_while_tracing_needs_no_bound_for_gradients():
    @mk.function
    def f(x):
        with mk.GradientTape() as tape:
            tape.watch(x)
            _, y = mk.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * y), [0, x])
        return y, tape.gradient(y, x)

    y, g = f(mk.constant(0.5))
    close(y, 0.5 ** 8)
    close(g, jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, y: y * y, x))(0.5))
