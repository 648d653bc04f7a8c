"""GradientTape against tf.GradientTape's documented behaviour, with every number checked
against JAX (jax.grad, jax.hessian, jax.jacrev) on the same jnp expression."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk

X = np.array([0.3, -1.2, 2.0], np.float32)


def f_mk(x):
    return mk.reduce_sum(mk.sin(x) * x * x + mk.exp(-x))


def f_jnp(x):
    return jnp.sum(jnp.sin(x) * x * x + jnp.exp(-x))


def close(actual, expected, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


# -- watching --------------------------------------------------------------------------------------
def test_watched_tensor_gradient_matches_jax():
    x = mk.constant(X)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = f_mk(x)
    g = tape.gradient(y, x)
    assert isinstance(g, mk.Tensor) and g.dtype == mk.float32 and g.shape == (3,)
    close(g, jax.jit(jax.grad(f_jnp))(X))


def test_watch_accepts_a_list():
    a, b = mk.constant(2.0), mk.constant(3.0)
    with mk.GradientTape() as tape:
        tape.watch([a, b])
        y = a * b
    da, db = tape.gradient(y, [a, b])
    assert float(da) == 3.0 and float(db) == 2.0


def test_unwatched_constant_has_no_gradient():
    x = mk.constant(2.0)
    with mk.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is None


def test_watch_of_a_non_tensor_is_an_error():
    with mk.GradientTape() as tape:
        with pytest.raises(ValueError, match="mk.Tensor or mk.Variable.*float"):
            tape.watch(3.0)


def test_trainable_variables_are_watched_automatically():
    v = mk.Variable(3.0)
    with mk.GradientTape() as tape:
        y = v * v
    assert float(tape.gradient(y, v)) == 6.0


def test_non_trainable_variables_are_not_watched():
    w = mk.Variable(3.0, trainable=False)
    with mk.GradientTape() as tape:
        y = w * w
    assert tape.gradient(y, w) is None
    with mk.GradientTape() as tape:
        tape.watch(w)
        y = w * w
    assert float(tape.gradient(y, w)) == 6.0


def test_watch_accessed_variables_false_watches_only_what_is_watched():
    a, b = mk.Variable(2.0), mk.Variable(5.0)
    with mk.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(a)
        y = a * b
    da, db = tape.gradient(y, [a, b])
    assert float(da) == 5.0 and db is None
    assert tape.watched_variables() == (a,)


def test_watched_variables_in_creation_order():
    first, second, third = mk.Variable(1.0, name="first"), mk.Variable(2.0, name="second"), mk.Variable(3.0)
    with mk.GradientTape() as tape:
        third * second * first
    assert [v.name for v in tape.watched_variables()] == ["first", "second", "Variable"]


def test_integer_source_has_no_gradient_and_watch_warns():
    i = mk.constant(3)
    with mk.GradientTape() as tape:
        with pytest.warns(UserWarning, match="floating"):
            tape.watch(i)
        y = i * 2
    assert tape.gradient(y, i) is None


# -- persistence, stop_recording, reset --------------------------------------------------------------
def test_second_gradient_call_on_a_non_persistent_tape_raises():
    x = mk.constant(2.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match=r"non-persistent.*persistent=True"):
        tape.gradient(y, x)


def test_persistent_tape_allows_several_gradient_calls():
    x = mk.constant(2.0)
    with mk.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert float(tape.gradient(y, x)) == 4.0
    assert float(tape.gradient(z, x)) == 32.0   # 4 x^3
    assert float(tape.gradient(z, y)) == 8.0    # 2 y
    assert float(tape.gradient(y, x)) == 4.0


def test_stop_recording_cuts_the_path():
    x = mk.constant(2.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            y = x * x
        z = y * x
    assert float(tape.gradient(z, x)) == 4.0  # y is a constant 4 for the tape


def test_stop_recording_outside_the_with_block_is_an_error():
    tape = mk.GradientTape()
    with pytest.raises(ValueError, match="recording"):
        with tape.stop_recording():
            pass


def test_reset_forgets_records_and_makes_the_tape_usable_again():
    x = mk.constant(2.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = x * x * x
        tape.reset()
        tape.watch(x)
        z = x * 5.0
    assert tape.gradient(y, x) is None
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    tape.reset()
    with tape:
        tape.watch(x)
        y = x * x * x
    assert float(tape.gradient(y, x)) == 12.0
    del z


# -- higher order ------------------------------------------------------------------------------------------
def test_nested_tapes_second_derivative():
    x = mk.constant(X)
    with mk.GradientTape() as outer:
        outer.watch(x)
        with mk.GradientTape() as inner:
            inner.watch(x)
            y = f_mk(x)
        g = inner.gradient(y, x)
    h = outer.gradient(g, x)   # d/dx sum(grad) = row sums of the Hessian
    close(g, jax.jit(jax.grad(f_jnp))(X))
    close(h, jnp.sum(jax.jit(jax.hessian(f_jnp))(X), axis=0), rtol=1e-4, atol=1e-4)


def test_nested_tapes_third_derivative():
    x = mk.constant(1.3)

    def f(x, sin, exp):
        return sin(x) * x * x + exp(-x * 0.5)

    with mk.GradientTape() as t3:
        t3.watch(x)
        with mk.GradientTape() as t2:
            t2.watch(x)
            with mk.GradientTape() as t1:
                t1.watch(x)
                y = f(x, mk.sin, mk.exp)
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    fj = lambda x: f(x, jnp.sin, jnp.exp)  # noqa: E731
    close(d1, jax.jit(jax.grad(fj))(1.3))
    close(d2, jax.jit(jax.grad(jax.grad(fj)))(1.3), rtol=1e-4)
    close(d3, jax.jit(jax.grad(jax.grad(jax.grad(fj))))(1.3), rtol=1e-4)


def test_hessian_from_jacobian_of_gradient():
    x = mk.constant(X)
    with mk.GradientTape() as outer:
        outer.watch(x)
        with mk.GradientTape() as inner:
            inner.watch(x)
            y = f_mk(x)
        g = inner.gradient(y, x)
    close(outer.jacobian(g, x), jax.jit(jax.hessian(f_jnp))(X), rtol=1e-4, atol=1e-4)


def test_jacobian_under_an_outer_tape_stays_differentiable():
    x = mk.constant(X)
    with mk.GradientTape() as t3:
        t3.watch(x)
        with mk.GradientTape() as t2:
            t2.watch(x)
            with mk.GradientTape() as t1:
                t1.watch(x)
                y = f_mk(x)
            g = t1.gradient(y, x)
        hessian = t2.jacobian(g, x)
        total = mk.reduce_sum(hessian)
    expected = jax.jit(jax.grad(lambda x: jnp.sum(jax.hessian(f_jnp)(x))))(X)
    close(t3.gradient(total, x), expected, rtol=1e-4, atol=1e-4)


# -- sources, targets, output gradients ---------------------------------------------------------------
def test_sources_nest_gives_the_same_structure():
    a, b, c = mk.constant(1.0), mk.constant(2.0), mk.constant(3.0)
    with mk.GradientTape() as tape:
        tape.watch([a, b, c])
        y = a * b * c
    grads = tape.gradient(y, {"a": a, "bc": [b, (c,)]})
    assert set(grads) == {"a", "bc"} and isinstance(grads["bc"], list) and isinstance(grads["bc"][1], tuple)
    assert float(grads["a"]) == 6.0 and float(grads["bc"][0]) == 3.0 and float(grads["bc"][1][0]) == 2.0


def test_tuple_of_sources_gives_a_tuple():
    a = mk.Variable(1.0)
    with mk.GradientTape() as tape:
        y = a * 4.0
    grads = tape.gradient(y, (a,))
    assert isinstance(grads, tuple) and float(grads[0]) == 4.0


def test_list_of_targets_differentiates_their_sum():
    x = mk.constant(2.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y1, y2 = x * x, x * 3.0
    assert float(tape.gradient([y1, y2], x)) == 7.0


def test_vector_target_differentiates_its_sum():
    x = mk.constant(X)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = mk.sin(x)
    close(tape.gradient(y, x), np.cos(X))


def test_output_gradients_weight_the_target():
    x = mk.constant(X)
    w = np.array([1.0, -2.0, 0.5], np.float32)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = mk.sin(x) * x
    close(tape.gradient(y, x, output_gradients=mk.constant(w)), (np.cos(X) * X + np.sin(X)) * w)


def test_output_gradients_with_the_wrong_shape_is_an_error():
    x = mk.constant(X)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    with pytest.raises(ValueError, match="output_gradients"):
        tape.gradient(y, x, output_gradients=mk.constant([1.0, 2.0]))


def test_gradient_with_respect_to_an_intermediate_tensor():
    x = mk.constant(2.0)
    with mk.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = mk.sin(y)
    close(tape.gradient(z, y), np.cos(4.0))
    close(tape.gradient(z, x), np.cos(4.0) * 4.0)


def test_variable_gradient_through_value_and_read_value():
    v = mk.Variable(3.0)
    with mk.GradientTape() as tape:
        y = v.value() * v.read_value() + mk.identity(v)
    assert float(tape.gradient(y, v)) == 7.0
