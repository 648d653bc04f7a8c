"""The compiled backward pass (minikeras.tape.compiled): a structure seen twice runs as one
program, with the same gradients as jax.grad."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk
from minikeras.ops.primitive import Primitive
from minikeras.tape import compiled as tape_compiled


def close(actual, expected, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)

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


def test_the_same_structure_on_variables_of_other_shapes_is_not_confused():
    # A Variable's own value is not an input of the backward pass, but its read's output is:
    # a program compiled for a (2,) variable must not be reused for a (5, 4) one (zeros of the
    # first one's shape stood in for the values the gradient does not read).
    def gradient(v):
        with mk.GradientTape() as tape:
            loss = mk.reduce_sum(v * v)
        return tape.gradient(loss, v).numpy()

    for shape in ((2,), (2,), (2,), (5, 4), (5, 4), (3, 1)):
        v = mk.Variable(np.linspace(-1, 1, int(np.prod(shape)), dtype=np.float32).reshape(shape))
        np.testing.assert_array_equal(gradient(v), 2 * v.numpy())


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
