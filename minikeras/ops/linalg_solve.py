"""Solves and factorizations of square matrices: inv, det, slogdet, logdet, solve,
triangular_solve, cholesky.

Every op works on the last two axes, batch axes first, like ``tf.linalg``. Each gradient
rule is written with these ops and ``matmul``, so higher-order derivatives come from
nesting tapes. As in TensorFlow, ``inv``, ``solve`` and ``det`` of a singular matrix raise
``InvalidArgumentError`` when computed eagerly; ``cholesky`` of a matrix that is not positive
definite fills the factor with NaNs (TF's CPU kernel does the same).
"""
import collections

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.backend import is_tracer
from minikeras.errors import invalid_argument
from minikeras.ops.array import expand_dims
from minikeras.ops.convert import binary_args
from minikeras.ops.elementwise import log
from minikeras.ops.linalg import as_tensor, band_part, check_square, diag_part, matmul, matrix_transpose
from minikeras.ops.primitive import Primitive
from minikeras.ops.reduce import reduce_sum


def _check_invertible(op, a, out):
    """TF's eager 'Input is not invertible.': a non-finite result from finite input."""
    if is_tracer(out._value) or is_tracer(a._value):
        return out
    if not np.all(np.isfinite(np.asarray(out._value))) and np.all(np.isfinite(np.asarray(a._value))):
        raise invalid_argument(op, "Input is not invertible.")
    return out


# -- inverse -----------------------------------------------------------------------------------
_inv = Primitive("inv", jnp.linalg.inv)


@_inv.defgrad
def _(g, out, a):
    return -matmul(out, matmul(g, out, transpose_b=True), transpose_a=True)


def inv(input, adjoint=False, name=None):  # noqa: A002 - TensorFlow's name
    """The inverse of each square matrix in the last two axes (``tf.linalg.inv``)."""
    a = as_tensor(input)
    check_square("MatrixInverse", a)
    if adjoint:
        a = matrix_transpose(a)
    return _check_invertible("MatrixInverse", a, _inv(a))


# -- determinant --------------------------------------------------------------------------------
_det = Primitive("det", jnp.linalg.det)


@_det.defgrad
def _(g, out, a):
    # d det(A) = det(A) tr(A^-1 dA): the gradient is g det(A) A^-T (undefined at singular A, as in TF)
    return expand_dims(expand_dims(g * out, -1), -1) * matrix_transpose(inv(a))


def det(input, name=None):  # noqa: A002
    """The determinant of each square matrix in the last two axes (``tf.linalg.det``)."""
    a = as_tensor(input)
    check_square("MatrixDeterminant", a)
    return _det(a)


LogMatrixDeterminant = collections.namedtuple("LogMatrixDeterminant", ["sign", "log_abs_determinant"])

_log_abs_det = Primitive("log_abs_det", lambda a: jnp.linalg.slogdet(a)[1])
_det_sign = Primitive("det_sign", lambda a: jnp.linalg.slogdet(a)[0], differentiable=False)


@_log_abs_det.defgrad
def _(g, out, a):
    return expand_dims(expand_dims(g, -1), -1) * matrix_transpose(inv(a))


def slogdet(input, name=None):  # noqa: A002
    """The sign and the log of the absolute value of the determinant, without overflow, as
    ``tf.linalg.slogdet``: a ``LogMatrixDeterminant(sign, log_abs_determinant)``. The
    log is differentiable (its gradient is ``inv(input)^T``); the sign is not."""
    a = as_tensor(input)
    check_square("LogMatrixDeterminant", a)
    return LogMatrixDeterminant(_det_sign(a), _log_abs_det(a))


def logdet(matrix, name=None):
    """log(det(matrix)) of symmetric positive definite matrices, through their Cholesky
    factor, as ``tf.linalg.logdet``."""
    return 2.0 * reduce_sum(log(diag_part(cholesky(matrix))), axis=-1)


# -- solve ---------------------------------------------------------------------------------------
_solve = Primitive("solve", lambda a, b, *, adjoint: jnp.linalg.solve(jnp.swapaxes(a, -1, -2) if adjoint else a, b))


@_solve.defgrad
def _(g, out, a, b, *, adjoint):
    gb = solve(a, g, adjoint=not adjoint)
    ga = -matmul(out, gb, transpose_b=True) if adjoint else -matmul(gb, out, transpose_b=True)
    return ga, gb


def solve(matrix, rhs, adjoint=False, name=None):
    """Solves ``matrix @ X = rhs`` for X (``matrix^T @ X = rhs`` when ``adjoint``), as
    ``tf.linalg.solve``: matrix ``(..., M, M)``, rhs ``(..., M, K)``, X ``(..., M, K)``."""
    a, b = binary_args("MatrixSolve", matrix, rhs)
    check_square("MatrixSolve", a)
    if b.ndim < 2 or b.shape[-2] != a.shape[-1] or b.shape[:-2] != a.shape[:-2]:
        raise invalid_argument("MatrixSolve", f"Input matrix and rhs are incompatible: matrix shape {a.shape}, "
                               f"rhs shape {b.shape} (expected rhs (..., {a.shape[-1]}, K) with the matrix's batch "
                               "shape)")
    return _check_invertible("MatrixSolve", a, _solve(a, b, adjoint=bool(adjoint)))


# -- triangular solve ---------------------------------------------------------------------------
def _triangular_forward(a, b, *, lower, adjoint):
    return jax.lax.linalg.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=adjoint)


_triangular_solve = Primitive("triangular_solve", _triangular_forward)


@_triangular_solve.defgrad
def _(g, out, a, b, *, lower, adjoint):
    gb = triangular_solve(a, g, lower=lower, adjoint=not adjoint)
    ga = -matmul(out, gb, transpose_b=True) if adjoint else -matmul(gb, out, transpose_b=True)
    return band_part(ga, -1, 0) if lower else band_part(ga, 0, -1), gb


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """Solves ``matrix @ X = rhs`` for a triangular ``matrix`` (only its ``lower`` or upper
    triangle is read), as ``tf.linalg.triangular_solve``; ``adjoint`` solves with its transpose."""
    a, b = binary_args("MatrixTriangularSolve", matrix, rhs)
    check_square("MatrixTriangularSolve", a)
    if b.ndim < 2 or b.shape[-2] != a.shape[-1] or b.shape[:-2] != a.shape[:-2]:
        raise invalid_argument("MatrixTriangularSolve", f"Input matrix and rhs are incompatible: matrix shape "
                               f"{a.shape}, rhs shape {b.shape}")
    return _triangular_solve(a, b, lower=bool(lower), adjoint=bool(adjoint))


# -- Cholesky ------------------------------------------------------------------------------------
_cholesky = Primitive("cholesky", lambda a: jax.lax.linalg.cholesky(a, symmetrize_input=False))


@_cholesky.defgrad
def _(g, out, a):
    # TF's CholeskyGrad (Murray 2016): S = L^-T Phi(L^T g) L^-1 with Phi the lower triangle and
    # half the diagonal; the gradient is S's symmetric part.
    middle = band_part(matmul(out, g, transpose_a=True), -1, 0)
    middle = middle - 0.5 * band_part(middle, 0, 0)
    left = triangular_solve(out, middle, lower=True, adjoint=True)
    s = matrix_transpose(triangular_solve(out, matrix_transpose(left), lower=True, adjoint=True))
    return 0.5 * (s + matrix_transpose(s))


def cholesky(input, name=None):  # noqa: A002
    """The lower-triangular Cholesky factor L with ``L @ L^T = input`` of each symmetric
    positive definite matrix (only the lower triangle of ``input`` is read), as ``tf.linalg.cholesky``."""
    a = as_tensor(input)
    check_square("Cholesky", a)
    return _cholesky(a)
