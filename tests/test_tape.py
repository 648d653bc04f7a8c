"""GradientTape against tf.GradientTape's documented behaviour, with every number checked
against JAX (jax.grad, jax.hessian, jax.jacrev) on the same jnp expression."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk
from minikeras.tape import compiled as tape_compiled
from minikeras.ops.primitive import Primitive

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
        y = third * second * first
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


# -- unconnected gradients -----------------------------------------------------------------------------
def _unconnected_setup():
    x = mk.constant(1.5)
    never = mk.Variable(1.0, name="never_read")
    outside = mk.constant(2.0)
    rounded = mk.constant(0.7)
    count = mk.constant(3)
    with mk.GradientTape() as tape:
        with pytest.warns(UserWarning, match="int32"):
            tape.watch([x, rounded, count])
        y = x * x + mk.round(rounded) * 2.0 + mk.cast(count, mk.float32)
    return tape, y, [x, never, outside, rounded, count]


def test_unconnected_none_is_the_default():
    tape, y, sources = _unconnected_setup()
    grads = tape.gradient(y, sources)
    assert float(grads[0]) == 3.0 and grads[1:] == [None, None, None, None]


def test_unconnected_zero_gives_zeros_of_the_source_shape_and_dtype():
    tape, y, sources = _unconnected_setup()
    grads = tape.gradient(y, sources, unconnected_gradients="zero")
    assert [float(g) for g in grads] == [3.0, 0.0, 0.0, 0.0, 0.0]
    assert grads[4].dtype == mk.int32 and grads[1].dtype == mk.float32
    v = mk.Variable(np.ones((2, 3), np.float32))
    with mk.GradientTape() as tape:
        y = mk.constant(1.0) * 2.0
    g = tape.gradient(y, v, unconnected_gradients=mk.UnconnectedGradients.ZERO)
    assert g.shape == (2, 3) and float(mk.reduce_sum(g)) == 0.0


def test_unconnected_raise_names_each_source_and_why():
    tape, y, sources = _unconnected_setup()
    with pytest.raises(ValueError) as info:
        tape.gradient(y, sources, unconnected_gradients="raise")
    lines = str(info.value).splitlines()
    assert len(lines) == 5  # a header and one line per missing source
    never, outside, rounded, count = lines[1:]
    assert "source 1" in never and "'never_read'" in never and "never watched" in never
    assert "source 2" in outside and "never watched" in outside   # sources are named by position
    assert "source 3" in rounded and "`round`" in rounded and "not differentiable" in rounded
    assert "source 4" in count and "int32" in count and "floating" in count


def test_unconnected_raise_for_a_target_computed_after_recording():
    x = mk.constant(1.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    z = x * 3.0
    with pytest.raises(ValueError, match="not computed from it while this tape recorded"):
        tape.gradient(z, x, unconnected_gradients="raise")
    del y


@pytest.mark.parametrize("blocker, op", [
    ("argmax", lambda x: mk.cast(mk.argmax(x), mk.float32)),
    ("cast", lambda x: mk.cast(mk.cast(x, mk.int32), mk.float32)),
    ("greater", lambda x: mk.cast(x > 0.0, mk.float32)),
    ("stop_gradient", lambda x: mk.stop_gradient(x)),
], ids=["argmax", "cast-to-int", "comparison", "stop_gradient"])
def test_non_differentiable_ops_give_none_and_are_named(blocker, op):
    x = mk.constant(X)
    with mk.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = mk.reduce_sum(op(x)) * 2.0
    assert tape.gradient(y, x) is None
    with pytest.raises(ValueError, match=f"`{blocker}"):
        tape.gradient(y, x, unconnected_gradients="raise")


def test_unknown_unconnected_gradients_value_is_an_error():
    x = mk.constant(1.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    with pytest.raises(ValueError, match="'none', 'zero' or 'raise'.*'ones'"):
        tape.gradient(y, x, unconnected_gradients="ones")


def test_stop_gradient_blocks_only_its_branch():
    x = mk.constant(3.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = mk.stop_gradient(x * x) + x * 2.0
    assert float(y) == 15.0 and float(tape.gradient(y, x)) == 2.0


def test_bad_source_is_an_error():
    x = mk.constant(1.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    with pytest.raises(ValueError, match="not mk.Tensor or mk.Variable"):
        tape.gradient(y, [x, 3.0])


# -- jacobians ------------------------------------------------------------------------------------------
def g_mk(x):
    return mk.sin(x) * x[0] + mk.exp(x * 0.5)


def g_jnp(x):
    return jnp.sin(x) * x[0] + jnp.exp(x * 0.5)


def test_jacobian_matches_jacrev():
    x = mk.constant(X)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = g_mk(x)
    jac = tape.jacobian(y, x)
    assert jac.shape == (3, 3)
    close(jac, jax.jit(jax.jacrev(g_jnp))(X))


def test_jacobian_of_a_matrix_target_with_several_sources():
    a = mk.constant(np.arange(6, dtype=np.float32).reshape(2, 3) / 5)
    b = mk.Variable(np.array([0.5, -1.0, 2.0], np.float32))
    with mk.GradientTape() as tape:
        tape.watch(a)
        y = mk.tanh(a * b)
    ja, jb = tape.jacobian(y, [a, b])
    ea, eb = jax.jit(jax.jacrev(lambda a, b: jnp.tanh(a * b), argnums=(0, 1)))(a.numpy(), b.numpy())
    assert ja.shape == (2, 3, 2, 3) and jb.shape == (2, 3, 3)
    close(ja, ea)
    close(jb, eb)


def test_jacobian_is_one_vectorised_backward_pass():
    calls = []
    square = Primitive("counting_square", lambda x: x * x)

    @square.defgrad
    def _(g, out, x):
        calls.append(1)
        return g * 2.0 * x

    x = mk.constant(np.arange(50, dtype=np.float32))
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = square(x)
    jac = tape.jacobian(y, x)
    close(jac, np.diag(2.0 * np.arange(50)))
    assert len(calls) <= 2  # traced once (plus a shape probe), not once per output element


def test_jacobian_unconnected():
    x, z = mk.constant(X), mk.constant(X)
    with mk.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = x * 2.0
    assert tape.jacobian(y, z) is None
    assert tape.jacobian(y, z, unconnected_gradients="zero").shape == (3, 3)


def test_batch_jacobian_matches_jacrev_and_needs_no_persistent_tape():
    xs = np.array([[0.1, 0.2], [1.0, -0.5], [2.0, 0.3]], np.float32)
    w = np.array([[1.0, -1.0, 0.5], [0.3, 2.0, 1.0]], np.float32)
    x = mk.constant(xs)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = mk.tanh(mk.matmul(x, mk.constant(w)))
    bj = tape.batch_jacobian(y, x)
    expected = jax.jit(jax.vmap(jax.jacrev(lambda row: jnp.tanh(row @ w))))(xs)
    assert bj.shape == (3, 3, 2)
    close(bj, expected)


def test_batch_jacobian_needs_matching_batch_dimensions():
    x = mk.constant(np.ones((3, 2), np.float32))
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = mk.reduce_sum(x, axis=0)
    with pytest.raises(ValueError, match="first .*batch.* dimension"):
        tape.batch_jacobian(y, x)


def test_non_persistent_tape_allows_one_jacobian():
    x = mk.constant(X)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.jacobian(y, x)
    with pytest.raises(RuntimeError, match="persistent=True"):
        tape.jacobian(y, x)


# -- the compiled backward pass (a structure seen twice runs as one program) ----------------------------
def _step(x, w):
    with mk.GradientTape() as tape:
        tape.watch(x)
        h = mk.tanh(mk.matmul(x, w))
        loss = mk.reduce_mean(h * h) + mk.reduce_sum(w * w) * 0.01
    return tape.gradient(loss, [x, w])


def _step_jnp(x, w):
    return jnp.mean(jnp.tanh(x @ w) ** 2) + jnp.sum(w * w) * 0.01


_step_grad = jax.jit(jax.grad(_step_jnp, argnums=(0, 1)))


def test_repeated_structure_gives_the_same_gradients_as_jax():
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    w = mk.Variable(np.random.default_rng(1).standard_normal((3, 2)).astype(np.float32))
    expected = _step_grad(x, w.numpy())
    before = tape_compiled.remembered_structures()
    for _ in range(3):  # rule by rule, then compiled, then compiled again
        gx, gw = _step(mk.constant(x), w)
        close(gx, expected[0])
        close(gw, expected[1])
    assert tape_compiled.remembered_structures() >= min(before + 1, tape_compiled.MAX_PROGRAMS)


def test_repeated_structure_with_new_shapes_is_recompiled_correctly():
    w = mk.Variable(np.ones((3, 2), np.float32) * 0.3)
    for batch in (4, 4, 5, 5):
        x = np.linspace(-1, 1, batch * 3, dtype=np.float32).reshape(batch, 3)
        gx, gw = _step(mk.constant(x), w)
        expected = _step_grad(x, w.numpy())
        close(gx, expected[0])
        close(gw, expected[1])


def test_repeated_structure_keeps_unconnected_sources_none():
    for _ in range(3):
        a, b = mk.constant(1.0), mk.constant(2.0)
        with mk.GradientTape() as tape:
            tape.watch([a, b])
            y = a * 3.0
        ga, gb = tape.gradient(y, [a, b])
        assert float(ga) == 3.0 and gb is None


def test_repeated_structure_with_constants_that_change():
    x = mk.constant(2.0)
    for scale in (1.0, 2.0, 3.0, 4.0):
        with mk.GradientTape() as tape:
            tape.watch(x)
            y = x * mk.constant(scale) * x
        assert float(tape.gradient(y, x)) == 4.0 * scale


def test_repeated_structure_whose_rule_needs_concrete_values_runs_eagerly():
    peek = Primitive("peek", lambda x: x * 2.0)

    @peek.defgrad
    def _(g, out, x):
        return g * 2.0 if float(mk.reduce_sum(x)) > 0 else g * 0.0  # looks at a value: cannot be traced

    for _ in range(3):
        x = mk.constant([1.0, 2.0])
        with mk.GradientTape() as tape:
            tape.watch(x)
            y = peek(x) * 3.0
        close(tape.gradient(y, x), [6.0, 6.0])


def test_a_rule_missing_is_a_lookup_error():
    opaque = Primitive("opaque", lambda x: x + 1.0)
    x = mk.constant(1.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = opaque(x)
    with pytest.raises(LookupError, match="No gradient defined for operation 'opaque'"):
        tape.gradient(y, x)
