"""mk.linalg.eigh and svd: values against NumPy/TF, first- and second-order gradients of
sign-invariant functions (eigenvalues, projectors V diag(c) V^T) against JAX."""
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_close, check_grad, rand

import minikeras as mk

RTOL = ATOL = 2e-3  # float32 through a decomposition, twice differentiated


def _symmetric_distinct(n=3, seed=0):
    q, _ = np.linalg.qr(rand(n, n, seed=seed).astype(np.float64))
    return (q @ np.diag(np.arange(1.0, n + 1) * 1.5) @ q.T).astype(np.float32)


def _lower_symmetrized(a):  # what TF's eigh reads: the lower triangle, mirrored
    return jnp.tril(a) + jnp.swapaxes(jnp.tril(a, -1), -1, -2)


WEIGHTS = np.array([0.5, -1.0, 2.0], np.float32)


def test_eigh_values_and_vectors():
    a = _symmetric_distinct()
    e, v = mk.linalg.eigh(a)
    assert_close(e, np.linalg.eigvalsh(a))
    assert_close(mk.matmul(mk.constant(a), v), v * e)
    # TF 2.21: tf.linalg.eigh([[2., 1.], [1., 3.]])[0] = [1.381966, 3.618034]; nonsymmetric input reads the lower part
    assert_close(mk.linalg.eigh([[2.0, 100.0], [1.0, 3.0]])[0], [1.3819659, 3.6180334])


def test_eigh_gradients():
    def mk_fn(a):
        e, v = mk.linalg.eigh(a)
        projector = mk.matmul(v * WEIGHTS, v, transpose_b=True)
        return mk.concat([e, mk.reshape(projector, (-1,))], axis=0)

    def ref(a):
        e, v = jnp.linalg.eigh(_lower_symmetrized(a))
        return jnp.concatenate([e, ((v * WEIGHTS) @ v.T).reshape(-1)])

    check_grad(mk_fn, ref, _symmetric_distinct(), rtol=RTOL, atol=ATOL)


def _sign_invariant_svd(s, u, v, matmul, transpose):
    c = WEIGHTS[:s.shape[-1]]
    return s, matmul(u * c, transpose(u)), matmul(v * c[::-1].copy(), transpose(v))


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
def test_svd_gradients(shape):
    a = rand(*shape, seed=3)

    def mk_fn(a):
        s, u, v = mk.linalg.svd(a)
        s, pu, pv = _sign_invariant_svd(s, u, v, mk.matmul, mk.linalg.matrix_transpose)
        return mk.concat([s, mk.reshape(pu, (-1,)), mk.reshape(pv, (-1,))], axis=0)

    def ref(a):
        u, s, vh = jnp.linalg.svd(a, full_matrices=False)
        s, pu, pv = _sign_invariant_svd(s, u, vh.T, jnp.matmul, jnp.transpose)
        return jnp.concatenate([s, pu.reshape(-1), pv.reshape(-1)])

    check_grad(mk_fn, ref, a, rtol=RTOL, atol=ATOL)


def test_svd_values_only():
    a = rand(2, 4, 3, seed=4)
    check_grad(lambda a: mk.linalg.svd(a, compute_uv=False),
               lambda a: jnp.linalg.svd(a, compute_uv=False), a, rtol=RTOL, atol=ATOL)


def test_svd_reconstructs_and_matches_tf():
    a = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
    s, u, v = mk.linalg.svd(a)
    assert_close(s, [9.525518, 0.51429987])  # TF 2.21
    assert u.shape == (3, 2) and v.shape == (2, 2)
    assert_close(mk.matmul(u * s, v, transpose_b=True), a)
    s, u, v = mk.linalg.svd(a, full_matrices=True)
    assert u.shape == (3, 3) and v.shape == (2, 2)


def test_svd_full_matrices_gradient_of_non_square_is_not_implemented():
    x = mk.constant(rand(3, 2))
    with mk.GradientTape() as tape:
        tape.watch(x)
        s, u, v = mk.linalg.svd(x, full_matrices=True)
        y = mk.reduce_sum(s)
    with pytest.raises(NotImplementedError, match="full_matrices=True.*square"):
        tape.gradient(y, x)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 2)])
def test_qr(shape):
    a = rand(*shape, seed=7)

    def mk_fn(a):
        q, r = mk.linalg.qr(a)
        return mk.concat([mk.reshape(q, (-1,)), mk.reshape(r, (-1,))], axis=0)

    def ref(a):
        q, r = jnp.linalg.qr(a, mode="reduced")
        return jnp.concatenate([q.reshape(-1), r.reshape(-1)])

    check_grad(mk_fn, ref, a, rtol=RTOL, atol=ATOL)
    q, r = mk.linalg.qr(a)
    assert_close(mk.matmul(q, r), a)


def test_qr_full_matrices():
    q, r = mk.linalg.qr(rand(4, 2), full_matrices=True)
    assert q.shape == (4, 4) and r.shape == (4, 2)
