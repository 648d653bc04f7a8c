"""``mk.linalg``: ``tf.linalg``'s matrix functions, differentiable (any order) on the tape.

    a = mk.constant([[4.0, 1.0], [1.0, 3.0]])
    x = mk.linalg.solve(a, mk.ones((2, 1)))
    e, v = mk.linalg.eigh(a)
    s, u, v = mk.linalg.svd(a)
"""
from minikeras.ops.einsum import einsum  # noqa: F401
from minikeras.ops.linalg import adjoint, band_part, diag, diag_part, matmul, matrix_transpose, matvec, tensordot, trace  # noqa: F401
from minikeras.ops.linalg_eig import eigh, eigvalsh, qr, svd  # noqa: F401
from minikeras.ops.linalg_solve import (  # noqa: F401
    LogMatrixDeterminant,
    cholesky,
    det,
    inv,
    logdet,
    slogdet,
    solve,
    triangular_solve,
)
from minikeras.ops.norm import norm  # noqa: F401
