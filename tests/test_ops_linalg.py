"""mk.linalg's array helpers (diag, diag_part, trace, band_part, matrix_transpose), mk.norm's
vector and matrix norms and matmul's errors: values checked on TF 2.21, gradients against JAX."""
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_close, check_grad, rand

import minikeras as mk


def test_diag_diag_part_trace_match_tf():
    assert_close(mk.linalg.diag([1.0, 2.0]), [[1.0, 0.0], [0.0, 2.0]])
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    assert_close(mk.linalg.diag_part(x), [0.0, 4.0])  # TF 2.21
    assert float(mk.linalg.trace(x)) == 4.0


def test_diag_gradients():
    check_grad(mk.linalg.diag, lambda d: jnp.vectorize(jnp.diag, signature="(n)->(n,n)")(d), rand(2, 3))
    check_grad(mk.linalg.diag_part, lambda x: jnp.diagonal(x, axis1=-2, axis2=-1), rand(2, 3, 4))
    check_grad(mk.linalg.trace, lambda x: jnp.trace(x, axis1=-2, axis2=-1), rand(2, 3, 3))


def test_band_part():
    x = rand(2, 4, 4)
    check_grad(lambda x: mk.linalg.band_part(x, -1, 0), lambda x: jnp.tril(x), x, order=1)
    check_grad(lambda x: mk.linalg.band_part(x, 1, 2), lambda x: jnp.triu(jnp.tril(x, 2), -1), x, order=1)


def test_matrix_transpose():
    x = rand(2, 3, 4)
    assert_close(mk.linalg.matrix_transpose(x), np.swapaxes(x, -1, -2))


@pytest.mark.parametrize("ord_", ["fro", 1, np.inf, 2])
def test_matrix_norms(ord_):
    x = np.array([[1.0, -2.0], [3.0, 4.0]], np.float32)
    tf_values = {"fro": 5.477226, 1: 6.0, np.inf: 7.0, 2: 5.1166735}  # TF 2.21, tf.norm(x, ord, axis=[-2, -1])
    assert float(mk.norm(x, ord=ord_, axis=[-2, -1])) == pytest.approx(tf_values[ord_], rel=1e-5)
    b = rand(2, 3, 4, seed=5)
    np_ord = "fro" if ord_ == "fro" else ord_
    check_grad(lambda b: mk.norm(b, ord=ord_, axis=(1, 2)), lambda b: jnp.linalg.norm(b, ord=np_ord, axis=(1, 2)),
               b, rtol=2e-3, atol=2e-3)


def test_matrix_norm_over_leading_axes_keepdims():
    b = rand(3, 4, 2, seed=6)
    out = mk.norm(b, ord=2, axis=(0, 1), keepdims=True)
    assert out.shape == (1, 1, 2)
    assert_close(out[0, 0], np.linalg.norm(np.moveaxis(b, 2, 0), ord=2, axis=(1, 2)))


def test_vector_p_norm():
    assert float(mk.norm([1.0, -2.0, 3.0], ord=3)) == pytest.approx(3.3019273)  # TF 2.21
    check_grad(lambda x: mk.norm(x, ord=3, axis=1), lambda x: jnp.linalg.norm(x, ord=3, axis=1), rand(2, 4))


def test_norm_rejects_bad_ord():
    with pytest.raises(ValueError, match="ord"):
        mk.norm([1.0], ord="nuclear")
    with pytest.raises(ValueError, match="matrix ord"):
        mk.norm(mk.ones((2, 2)), ord=3, axis=[0, 1])


def test_matmul_shape_mismatch_is_invalid_argument():
    with pytest.raises(mk.errors.InvalidArgumentError,
                       match=r"Matrix size-incompatible: In\[0\]: \[2,3\], In\[1\]: \[2,3\].*\[Op:MatMul\]"):
        mk.matmul(mk.ones((2, 3)), mk.ones((2, 3)))


def test_matvec():
    check_grad(mk.linalg.matvec, lambda a, b: jnp.einsum("...ij,...j->...i", a, b), rand(2, 3, 4), rand(2, 4, seed=1))
    check_grad(lambda a, b: mk.linalg.matvec(a, b, transpose_a=True),
               lambda a, b: jnp.einsum("...ji,...j->...i", a, b), rand(3, 4), rand(3, seed=1), order=1)
