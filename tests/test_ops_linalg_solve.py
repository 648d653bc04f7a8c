"""mk.linalg's solves and factorizations (inv, det, solve, triangular_solve, cholesky):
forward values, first- and second-order gradients against JAX (conftest.check_grad), and
TensorFlow's errors (values and messages checked on TF 2.21)."""
import jax.numpy as jnp
import jax.scipy.linalg
import numpy as np
import pytest
from conftest import assert_close, check_grad, rand

import minikeras as mk


def _well_conditioned(*batch, n=3, seed=0):
    return (rand(*batch, n, n, seed=seed) * 0.3 + 2.0 * np.eye(n, dtype=np.float32)).astype(np.float32)


def _spd(*batch, n=3, seed=0):
    a = rand(*batch, n, n, seed=seed)
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=np.float32)).astype(np.float32)


@pytest.mark.parametrize("batch", [(), (2,)])
def test_inv(batch):
    check_grad(mk.linalg.inv, jnp.linalg.inv, _well_conditioned(*batch))


def test_det():
    check_grad(mk.linalg.det, jnp.linalg.det, _well_conditioned(2))
    assert float(mk.linalg.det([[1.0, 2.0], [3.0, 4.0]])) == pytest.approx(-2.0)  # TF: -2.0


@pytest.mark.parametrize("adjoint", [False, True])
def test_solve(adjoint):
    a, b = _well_conditioned(2), rand(2, 3, 2, seed=1)

    def ref(a, b):
        return jnp.linalg.solve(jnp.swapaxes(a, -1, -2) if adjoint else a, b)

    check_grad(lambda a, b: mk.linalg.solve(a, b, adjoint=adjoint), ref, a, b)


@pytest.mark.parametrize("lower, adjoint", [(True, False), (True, True), (False, False)])
def test_triangular_solve(lower, adjoint):
    a, b = _well_conditioned(), rand(3, 2, seed=1)

    def ref(a, b):
        return jax.scipy.linalg.solve_triangular(a, b, lower=lower, trans=1 if adjoint else 0)

    check_grad(lambda a, b: mk.linalg.triangular_solve(a, b, lower=lower, adjoint=adjoint), ref, a, b)


def test_cholesky():
    check_grad(mk.linalg.cholesky, jnp.linalg.cholesky, _spd(2))
    # TF 2.21: tf.linalg.cholesky([[4., 1.], [1., 3.]]) = [[2, 0], [0.5, 1.6583124]]
    assert_close(mk.linalg.cholesky([[4.0, 1.0], [1.0, 3.0]]), [[2.0, 0.0], [0.5, 1.6583124]])


def test_cholesky_reads_the_lower_triangle_only():
    a = _spd()
    upper_noise = np.triu(np.full((3, 3), 100.0, np.float32), 1)
    assert_close(mk.linalg.cholesky(a + upper_noise), np.linalg.cholesky(a))


def test_singular_matrix_is_invalid_argument():
    singular = [[1.0, 2.0], [2.0, 4.0]]
    with pytest.raises(mk.errors.InvalidArgumentError, match=r"Input is not invertible. \[Op:MatrixInverse\]"):
        mk.linalg.inv(singular)
    with pytest.raises(ValueError, match="not invertible"):  # still a ValueError
        mk.linalg.solve(singular, [[1.0], [1.0]])


def test_shape_errors_name_the_op_and_shapes():
    with pytest.raises(mk.errors.InvalidArgumentError, match=r"rhs are incompatible.*\(2, 2\).*\(3, 1\).*MatrixSolve"):
        mk.linalg.solve(mk.eye(2), mk.ones((3, 1)))
    with pytest.raises(mk.errors.InvalidArgumentError, match=r"square matrix.*\(2, 3\).*MatrixDeterminant"):
        mk.linalg.det(mk.ones((2, 3)))


def test_slogdet_and_logdet():
    a = _well_conditioned(2)
    a[1] = -a[1]  # a negative determinant in the batch (n = 3)
    check_grad(lambda a: mk.linalg.slogdet(a).log_abs_determinant, lambda a: jnp.linalg.slogdet(a)[1], a)
    np.testing.assert_array_equal(mk.linalg.slogdet(a).sign, np.linalg.slogdet(a)[0])
    # logdet goes through cholesky, whose gradient (TF's) is that of a function of the symmetric part
    check_grad(mk.linalg.logdet, lambda a: jnp.linalg.slogdet((a + jnp.swapaxes(a, -1, -2)) / 2)[1], _spd(2))
    # TF 2.21: slogdet([[1, 2], [3, 4]]) = (-1, 0.6931472), logdet([[4, 1], [1, 3]]) = 2.3978953
    sign, log_abs = mk.linalg.slogdet([[1.0, 2.0], [3.0, 4.0]])
    assert float(sign) == -1.0 and float(log_abs) == pytest.approx(0.6931472)
    assert float(mk.linalg.logdet([[4.0, 1.0], [1.0, 3.0]])) == pytest.approx(2.3978953)
