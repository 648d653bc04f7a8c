"""jacobian and batch_jacobian (minikeras.tape.jacobian) against jax.jacrev."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk
from minikeras.ops.primitive import Primitive

X = np.array([0.3, -1.2, 2.0], np.float32)


def close(actual, expected, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)

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
