"""Decompositions with several results: ``eigh`` (symmetric eigendecomposition), ``svd``
and ``qr``.

A primitive has one output, so each decomposition packs its results into one array and
the public function slices them out (slicing is differentiable): ``eigh`` packs
``[V; e]`` as ``(..., n + 1, n)``, ``svd`` packs ``[s, u.ravel(), v.ravel()]`` and ``qr``
``[q.ravel(), r.ravel()]`` on the last axis. The gradient rules are TensorFlow's
(``linalg_grad.py``), written with minikeras ops so that they differentiate again. As in TF
they are infinite (NaN in practice) where eigenvalues or singular values repeat.
"""
import jax.numpy as jnp

from minikeras.errors import invalid_argument
from minikeras.ops.array import concat, expand_dims, getitem
from minikeras.ops.linalg import as_tensor, band_part, check_square, diag, diag_part, matmul, matrix_transpose
from minikeras.ops.linalg_solve import triangular_solve
from minikeras.ops.math import where
from minikeras.ops.primitive import Primitive
from minikeras.ops.reshape import reshape
from minikeras.tensor import Tensor


def _off_diagonal_reciprocal(d):
    """F[..., i, j] = 1 / (d_j - d_i) off the diagonal, 0 on it (TF's _SafeReciprocal, eps 1e-20)."""
    diff = expand_dims(d, -2) - expand_dims(d, -1)
    safe = diff / (diff * diff + 1e-20)
    on_diagonal = Tensor(jnp.eye(d.shape[-1], dtype=bool))
    return where(on_diagonal, 0.0 * safe, safe)


# -- eigh -------------------------------------------------------------------------------------
def _eigh_forward(a):
    e, v = jnp.linalg.eigh(a, UPLO="L", symmetrize_input=False)
    return jnp.concatenate([v, e[..., None, :]], axis=-2)


_eigh = Primitive("eigh", _eigh_forward)


@_eigh.defgrad
def _(g, out, a):
    n = a.shape[-1]
    v, e = getitem(out, (Ellipsis, slice(0, n), slice(None))), getitem(out, (Ellipsis, n, slice(None)))
    gv, ge = getitem(g, (Ellipsis, slice(0, n), slice(None))), getitem(g, (Ellipsis, n, slice(None)))
    inner = diag(ge) + _off_diagonal_reciprocal(e) * matmul(v, gv, transpose_a=True)
    grad = matmul(v, matmul(inner, v, transpose_b=True))
    # the forward reads only the lower triangle: symmetrize onto it, as TF does
    grad = band_part(grad + matrix_transpose(grad), -1, 0)
    return grad - 0.5 * diag(diag_part(grad))


def eigh(tensor, name=None):
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices, as
    ``tf.linalg.eigh``: returns ``(e, v)`` with ``tensor @ v == v * e``. Only the lower
    triangle of ``tensor`` is read. Eigenvectors are defined up to sign."""
    a = as_tensor(tensor)
    check_square("SelfAdjointEigV2", a)
    packed = _eigh(a)
    n = a.shape[-1]
    return getitem(packed, (Ellipsis, n, slice(None))), getitem(packed, (Ellipsis, slice(0, n), slice(None)))


def eigvalsh(tensor, name=None):
    """The eigenvalues (ascending) of symmetric matrices (``tf.linalg.eigvalsh``)."""
    return eigh(tensor)[0]


# -- svd --------------------------------------------------------------------------------------
def _svd_forward(a, *, full_matrices):
    u, s, vh = jnp.linalg.svd(a, full_matrices=full_matrices)
    batch = a.shape[:-2]
    v = jnp.swapaxes(vh, -1, -2)
    return jnp.concatenate([s, u.reshape(batch + (-1,)), v.reshape(batch + (-1,))], axis=-1)


def _svd_sizes(shape, full_matrices):
    m, n = shape[-2:]
    k = min(m, n)
    return m, n, k, (m if full_matrices else k), (n if full_matrices else k)


def _unpack_svd(packed, shape, full_matrices):
    m, n, k, cu, cv = _svd_sizes(shape, full_matrices)
    batch = tuple(shape[:-2])
    s = getitem(packed, (Ellipsis, slice(0, k)))
    u = reshape(getitem(packed, (Ellipsis, slice(k, k + m * cu))), batch + (m, cu))
    v = reshape(getitem(packed, (Ellipsis, slice(k + m * cu, None))), batch + (n, cv))
    return s, u, v


_svd = Primitive("svd", _svd_forward)


@_svd.defgrad
def _(g, out, a, *, full_matrices):
    m, n = a.shape[-2:]
    if full_matrices and m != n:
        raise NotImplementedError(
            f"svd: the gradient with full_matrices=True is implemented for square matrices only, received shape "
            f"{a.shape} (use full_matrices=False)")
    s, u, v = _unpack_svd(out, a.shape, full_matrices)
    gs, gu, gv = _unpack_svd(g, a.shape, full_matrices)
    transposed = m > n  # differentiate A^T = V S U^T, then transpose back (TF's use_adjoint)
    if transposed:
        u, v, gu, gv = v, u, gv, gu
        m, n = n, m
    f = _off_diagonal_reciprocal(s * s)
    s_mat = diag(s)
    f_u = f * matmul(u, gu, transpose_a=True)
    f_v = f * matmul(v, gv, transpose_a=True)
    middle = diag(gs) + matmul(f_u + matrix_transpose(f_u), s_mat) + matmul(s_mat, f_v + matrix_transpose(f_v))
    grad = matmul(u, matmul(middle, v, transpose_b=True))
    if m != n:
        gvt = matrix_transpose(gv)
        rest = gvt - matmul(matmul(gvt, v), v, transpose_b=True)
        grad = grad + matmul(matmul(u, diag(s / (s * s + 1e-20))), rest)
    return matrix_transpose(grad) if transposed else grad


_singular_values = Primitive("singular_values", lambda a: jnp.linalg.svd(a, compute_uv=False))


@_singular_values.defgrad
def _(g, out, a):
    _, u, v = svd(a)
    return matmul(u, matmul(diag(g), v, transpose_b=True))


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """Singular value decomposition, as ``tf.linalg.svd``: ``s, u, v = svd(a)`` with
    ``a == u @ diag(s) @ v^T`` (note: ``v``, not its transpose, and TF's order s, u, v);
    singular values descend. ``compute_uv=False`` returns ``s`` only. Singular vectors are
    defined up to sign."""
    a = as_tensor(tensor)
    if a.ndim < 2:
        raise invalid_argument("Svd", f"svd expects a tensor of rank >= 2, received shape {a.shape}")
    if not compute_uv:
        return _singular_values(a)
    return _unpack_svd(_svd(a, full_matrices=bool(full_matrices)), a.shape, bool(full_matrices))



# -- qr ---------------------------------------------------------------------------------------
def _qr_forward(a, *, full_matrices):
    q, r = jnp.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    batch = a.shape[:-2]
    return jnp.concatenate([q.reshape(batch + (-1,)), r.reshape(batch + (-1,))], axis=-1)


def _unpack_qr(packed, shape, full_matrices):
    m, n = shape[-2:]
    k = m if full_matrices else min(m, n)
    batch = tuple(shape[:-2])
    q = reshape(getitem(packed, (Ellipsis, slice(0, m * k))), batch + (m, k))
    r = reshape(getitem(packed, (Ellipsis, slice(m * k, None))), batch + (k, n))
    return q, r


def _times_inverse_transpose_of(x, r):
    """``x @ inv(r)^T`` for an upper-triangular ``r`` (TF's _TriangularSolve in QrGrad)."""
    return matrix_transpose(triangular_solve(r, matrix_transpose(x), lower=False))


def _qr_grad_square_or_tall(q, r, dq, dr):
    qdq = matmul(q, dq, transpose_a=True)
    rdr = matmul(r, dr, transpose_b=True)
    lower = band_part(qdq - matrix_transpose(qdq) + rdr - matrix_transpose(rdr), -1, 0)
    grad_a = matmul(q, dr + _times_inverse_transpose_of(lower, r))
    return grad_a + _times_inverse_transpose_of(dq - matmul(q, qdq), r)


_qr = Primitive("qr", _qr_forward)


@_qr.defgrad
def _(g, out, a, *, full_matrices):
    m, n = a.shape[-2:]
    if full_matrices and m > n:
        raise NotImplementedError(f"qr: the gradient with full_matrices=True is implemented for m <= n only, "
                                  f"received shape {a.shape} (use full_matrices=False)")
    q, r = _unpack_qr(out, a.shape, full_matrices)
    dq, dr = _unpack_qr(g, a.shape, full_matrices)
    if m >= n:
        return _qr_grad_square_or_tall(q, r, dq, dr)
    # wide: a = [x, y], r = [u, v]; reduce to the square case (TF's QrGrad)
    y = getitem(a, (Ellipsis, slice(None), slice(m, None)))
    u = getitem(r, (Ellipsis, slice(None), slice(0, m)))
    du, dv = getitem(dr, (Ellipsis, slice(None), slice(0, m))), getitem(dr, (Ellipsis, slice(None), slice(m, None)))
    dx = _qr_grad_square_or_tall(q, u, dq + matmul(y, dv, transpose_b=True), du)
    return concat([dx, matmul(q, dv)], axis=-1)


def qr(input, full_matrices=False, name=None):  # noqa: A002 - TensorFlow's name
    """QR decomposition, as ``tf.linalg.qr``: ``q, r = qr(a)`` with ``a == q @ r``, ``q``'s
    columns orthonormal and ``r`` upper triangular; ``full_matrices=True`` gives the square
    ``q``. Differentiable (not for ``full_matrices=True`` with more rows than columns, as in TF)."""
    a = as_tensor(input)
    if a.ndim < 2:
        raise invalid_argument("Qr", f"qr expects a tensor of rank >= 2, received shape {a.shape}")
    return _unpack_qr(_qr(a, full_matrices=bool(full_matrices)), a.shape, bool(full_matrices))
