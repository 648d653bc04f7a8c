"""``keras.ops.linalg``: Keras 3's linear algebra (decompositions, solves, norms, ``jvp``).

Each decomposition and solve is one recorded op whose forward is jax's (what Keras 3's JAX
backend calls), differentiable to every order where jax's is; ``jvp`` is forward-mode
differentiation of a function of minikeras ops, computed on the tape (the transpose of a
reverse pass).

    from minikeras import keras
    x = keras.ops.linalg.solve(a, b)
    u, s, vh = keras.ops.linalg.svd(a, full_matrices=False)
"""
import jax
import jax.numpy as jnp
import jax.scipy as jsp

from minikeras.keras.ops.keras_op import jax_forward, keras_op
from minikeras.ops.math import zeros_like_
from minikeras.tape import GradientTape
from minikeras.tensor import Tensor, Variable, to_array


def _shape(x):
    return tuple(jnp.shape(to_array(x)))


def _assert_1d(*arrays):
    for a in arrays:
        if len(_shape(a)) < 1:
            raise ValueError(f"Expected input to have rank >= 1. Received scalar input {a}.")


def _assert_2d(*arrays):
    for a in arrays:
        if len(_shape(a)) < 2:
            raise ValueError(f"Expected input to have rank >= 2. Received input with shape {_shape(a)}.")


def _assert_square(*arrays):
    for a in arrays:
        m, n = _shape(a)[-2:]
        if m != n:
            raise ValueError(f"Expected a square matrix. Received non-square input with shape {_shape(a)}")


def _assert_a_b_compat(a, b):
    sa, sb = _shape(a), _shape(b)
    if len(sa) == len(sb) and sa[-2] != sb[-2]:
        raise ValueError("Incompatible shapes between `a` and `b`. Expected `a.shape[-2] == b.shape[-2]`. "
                         f"Received: a.shape={sa}, b.shape={sb}")
    if len(sa) == len(sb) + 1 and sa[-1] != sb[-1]:
        raise ValueError("Incompatible shapes between `a` and `b`. Expected `a.shape[-1] == b.shape[-1]`. "
                         f"Received: a.shape={sa}, b.shape={sb}")


def _square(x):
    _assert_2d(x)
    _assert_square(x)


def _cholesky(x, *, upper):
    return jnp.linalg.cholesky(x, upper=upper)


def _no_nan(out, what):
    """Eagerly, a factorization that failed (NaNs) is an error, as Keras's (and NumPy's)."""
    value = to_array(out)
    if not isinstance(value, jax.core.Tracer) and bool(jnp.any(jnp.isnan(value))):
        raise ValueError(f"{what} failed: Cholesky decomposition failed. The input might not be a valid positive "
                         "definite matrix.")
    return out


@keras_op("cholesky")
def cholesky(x, upper=False):
    """The Cholesky factor of the positive definite ``x`` (lower, or upper with ``upper=True``)."""
    _square(x)
    return _no_nan(jax_forward("cholesky", _cholesky, x, upper=bool(upper)), "Cholesky decomposition")


def _cholesky_inverse(x, *, upper):
    identity = jnp.eye(x.shape[-1], dtype=x.dtype)
    inv_factor = jsp.linalg.solve_triangular(x, identity, lower=not upper)
    if upper:
        return inv_factor @ jnp.swapaxes(inv_factor, -1, -2)
    return jnp.swapaxes(inv_factor, -1, -2) @ inv_factor


@keras_op("cholesky_inverse")
def cholesky_inverse(x, upper=False):
    """The inverse of ``A`` from its Cholesky factor ``x`` (``A = x x^T``, or ``x^T x`` if upper)."""
    _square(x)
    return jax_forward("cholesky_inverse", _cholesky_inverse, x, upper=bool(upper))


@keras_op("det")
def det(x):
    """The determinant of each square matrix in ``x``."""
    _square(x)
    return jax_forward("det", jnp.linalg.det, x)


@keras_op("eig")
def eig(x):
    """``(eigenvalues, eigenvectors)`` of a general square matrix (complex results)."""
    _square(x)
    return jax_forward("eig", jnp.linalg.eig, x)


def _eigh(x):
    return tuple(jnp.linalg.eigh(x))


@keras_op("eigh")
def eigh(x):
    """``(eigenvalues, eigenvectors)`` of a symmetric (Hermitian) matrix, ascending."""
    _square(x)
    return jax_forward("eigh", _eigh, x)


@keras_op("inv")
def inv(x):
    """The inverse of each square matrix in ``x``."""
    _square(x)
    return jax_forward("inv", jnp.linalg.inv, x)


def _lu_factor(x):
    fn = jsp.linalg.lu_factor
    for _ in range(x.ndim - 2):
        fn = jax.vmap(fn)
    return tuple(fn(x))


@keras_op("lu_factor")
def lu_factor(x):
    """``(lu, pivots)``: the LU factorization with partial pivoting (scipy's ``lu_factor``)."""
    _assert_2d(x)
    return jax_forward("lu_factor", _lu_factor, x)


def _norm(x, *, ord, axis, keepdims):  # noqa: A002
    dtype = jnp.float32 if x.dtype == jnp.int64 else jnp.result_type(x.dtype, float)
    return jnp.linalg.norm(x.astype(dtype), ord=ord, axis=axis, keepdims=keepdims)


@keras_op("norm")
def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """The vector (one axis) or matrix (two axes) norm of ``x``; ints are computed as floats."""
    if isinstance(ord, str) and ord not in ("fro", "nuc"):
        raise ValueError(f"Invalid `ord` argument. Expected one of {{'fro', 'nuc'}} when using string. "
                         f"Received: ord={ord}")
    axes = tuple(range(len(_shape(x)))) if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
    if len(axes) == 1 and isinstance(ord, str):
        raise ValueError(f"Invalid `ord` argument for vector norm. Received: ord={ord}")
    if len(axes) == 2 and ord not in (None, "fro", "nuc", float("inf"), float("-inf"), 1, -1, 2, -2):
        raise ValueError(f"Invalid `ord` argument for matrix norm. Received: ord={ord}")
    axis = tuple(axis) if isinstance(axis, list) else axis
    return jax_forward("norm", _norm, x, ord=ord, axis=axis, keepdims=bool(keepdims))


def _qr(x, *, mode):
    return tuple(jnp.linalg.qr(x, mode=mode))


@keras_op("qr")
def qr(x, mode="reduced"):
    """``(q, r)`` of ``x``; ``mode`` "reduced" or "complete"."""
    if mode not in ("reduced", "complete"):
        raise ValueError("`mode` argument value not supported. Expected one of {'reduced', 'complete'}. "
                         f"Received: mode={mode}")
    if len(_shape(x)) < 2:
        raise ValueError(f"Input should have rank >= 2. Received: input.shape = {_shape(x)}")
    return jax_forward("qr", _qr, x, mode=mode)


@keras_op("solve")
def solve(a, b):
    """``x`` with ``a @ x == b`` (``a`` square)."""
    _square(a)
    _assert_1d(b)
    _assert_a_b_compat(a, b)
    return jax_forward("solve", jnp.linalg.solve, a, b)


def _solve_triangular(a, b, *, lower):
    return jsp.linalg.solve_triangular(a, b, lower=lower)


@keras_op("solve_triangular")
def solve_triangular(a, b, lower=False):
    """``x`` with ``a @ x == b`` for triangular ``a`` (upper unless ``lower=True``)."""
    _square(a)
    _assert_1d(b)
    _assert_a_b_compat(a, b)
    return jax_forward("solve_triangular", _solve_triangular, a, b, lower=bool(lower))


def _svd(x, *, full_matrices, compute_uv):
    out = jnp.linalg.svd(x, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


@keras_op("svd")
def svd(x, full_matrices=True, compute_uv=True):
    """``(u, s, vh)`` with ``x == u @ diag(s) @ vh``; only ``s`` when ``compute_uv=False``."""
    _assert_2d(x)
    return jax_forward("svd", _svd, x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))


def _lstsq(a, b, *, rcond):
    return jnp.linalg.lstsq(a, b, rcond=rcond)[0]


@keras_op("lstsq")
def lstsq(a, b, rcond=None):
    """The least-squares solution ``x`` of ``a @ x ~= b`` (``a`` rank 2, ``b`` rank 1 or 2)."""
    sa, sb = _shape(a), _shape(b)
    if len(sa) != 2:
        raise ValueError(f"Expected a to have rank 2. Received: a.shape={sa}")
    if len(sb) not in (1, 2):
        raise ValueError(f"Expected b to have rank 1 or 2. Received: b.shape={sb}")
    if sb[0] != sa[0]:
        raise ValueError(f"Expected b.shape[0] to be equal to a.shape[0]. Received: a.shape={sa}, b.shape={sb}")
    return jax_forward("lstsq", _lstsq, a, b, rcond=rcond)


def _matrix_rank(x, *, tol):
    return jnp.linalg.matrix_rank(x, tol).astype(jnp.int32)


@keras_op("matrix_rank")
def matrix_rank(x, tol=None):
    """The rank of each matrix in ``x`` (singular values above ``tol``), int32."""
    _assert_2d(x)
    return jax_forward("matrix_rank", _matrix_rank, x, tol=tol)


def _pinv(x, *, rcond):
    return jnp.linalg.pinv(x, rtol=rcond)


@keras_op("pinv")
def pinv(x, rcond=None):
    """The Moore-Penrose pseudo-inverse of each matrix in ``x``."""
    _assert_2d(x)
    return jax_forward("pinv", _pinv, x, rcond=rcond)


def _leaves(tree):
    return jax.tree_util.tree_flatten(tree, is_leaf=lambda x: isinstance(x, (Tensor, Variable)))


def _as_tensor(x):
    if isinstance(x, Variable):
        return x.value()
    return x if isinstance(x, Tensor) else Tensor(to_array(x))


def jvp(fun, primals, tangents, has_aux=False):
    """``(fun(*primals), J @ tangents)``, plus ``fun``'s auxiliary output with ``has_aux``
    (``fun`` then returns ``(output, aux)``), as ``jax.jvp``.

    Forward mode from reverse mode: the vector-Jacobian product ``u -> J^T u`` is linear in
    ``u``, so its own reverse pass at ``tangents`` is ``J @ tangents``. Both passes run on
    ``GradientTape``s, so ``fun`` may be any minikeras (or ``keras.ops``) computation.
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(f"primal and tangent arguments to jvp must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    if len(primals) != len(tangents):
        raise TypeError(f"jvp called with different primal and tangent structures: {len(primals)} primals and "
                        f"{len(tangents)} tangents")
    primal_leaves, primal_tree = _leaves(list(primals))
    primal_leaves = [_as_tensor(p) for p in primal_leaves]
    tangent_leaves = [_as_tensor(t) for t in _leaves(list(tangents))[0]]
    for p, t in zip(primal_leaves, tangent_leaves):
        if tuple(p.shape) != tuple(t.shape):
            raise ValueError(f"jvp called with different primal and tangent shapes: primal {tuple(p.shape)}, "
                             f"tangent {tuple(t.shape)}")
    with GradientTape(persistent=True) as outer:
        with GradientTape() as inner:
            inner.watch(primal_leaves)
            result = fun(*jax.tree_util.tree_unflatten(primal_tree, primal_leaves))
        aux = None
        if has_aux:
            result, aux = result
        out_leaves, out_tree = _leaves(result)
        out_leaves = [_as_tensor(o) for o in out_leaves]
        cotangents = [zeros_like_(o) for o in out_leaves]
        outer.watch(cotangents)
        pulled = inner.gradient(out_leaves, primal_leaves, output_gradients=cotangents,
                                unconnected_gradients="zero")
    pushed = outer.gradient(pulled, cotangents, output_gradients=tangent_leaves, unconnected_gradients="zero")
    tangent_out = jax.tree_util.tree_unflatten(out_tree, list(pushed))
    result = jax.tree_util.tree_unflatten(out_tree, out_leaves)
    return (result, tangent_out, aux) if has_aux else (result, tangent_out)


__all__ = ["cholesky", "cholesky_inverse", "det", "eig", "eigh", "inv", "jvp", "lstsq", "lu_factor", "matrix_rank",
    "norm", "pinv", "qr", "solve", "solve_triangular", "svd"]
