"""Matrix products and norms."""
import jax.numpy as jnp
import numpy as np

from minikeras.ops.array import transpose
from minikeras.ops.convert import binary_args
from minikeras.ops.elementwise import abs as abs_, sqrt, square
from minikeras.ops.math import where
from minikeras.ops.primitive import Primitive
from minikeras.ops.reduce import reduce_max, reduce_sum, unbroadcast
from minikeras.ops.reshape import reshape


def _matmul_forward(a, b, *, transpose_a, transpose_b):
    if transpose_a:
        a = jnp.swapaxes(a, -1, -2)
    if transpose_b:
        b = jnp.swapaxes(b, -1, -2)
    return jnp.matmul(a, b)


_matmul = Primitive("matmul", _matmul_forward)


@_matmul.defgrad
def _(g, out, a, b, *, transpose_a, transpose_b):
    if not transpose_a and not transpose_b:
        ga, gb = matmul(g, b, transpose_b=True), matmul(a, g, transpose_a=True)
    elif transpose_a and not transpose_b:
        ga, gb = matmul(b, g, transpose_b=True), matmul(a, g)
    elif not transpose_a and transpose_b:
        ga, gb = matmul(g, b), matmul(g, a, transpose_a=True)
    else:
        ga, gb = matmul(b, g, transpose_a=True, transpose_b=True), matmul(g, a, transpose_a=True, transpose_b=True)
    return unbroadcast(ga, a.shape), unbroadcast(gb, b.shape)


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    """Matrix product of the last two axes (batch axes broadcast), as ``tf.linalg.matmul``."""
    a, b = binary_args("MatMul", a, b)
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(
            f"matmul expects tensors of rank >= 2, received shapes {a.shape} and {b.shape} "
            "(use mk.tensordot or mk.reshape for vectors)")
    k_a = a.shape[-2] if transpose_a else a.shape[-1]
    k_b = b.shape[-1] if transpose_b else b.shape[-2]
    if k_a != k_b:
        raise ValueError(
            f"Matrix size-incompatible: In[0]: {list(a.shape)}, In[1]: {list(b.shape)} "
            f"(inner dimensions {k_a} and {k_b} differ)")
    return _matmul(a, b, transpose_a=bool(transpose_a), transpose_b=bool(transpose_b))


def norm(tensor, ord="euclidean", axis=None, keepdims=False, name=None):  # noqa: A002
    """Vector norm over ``axis`` (``ord`` 'euclidean'/2, 1 or np.inf), as ``tf.norm`` for vectors.

    The Euclidean norm's gradient at 0 is 0 (not NaN).
    """
    if ord in ("euclidean", 2, 2.0, "fro"):
        squared = reduce_sum(square(tensor), axis=axis, keepdims=keepdims)
        safe = where(squared > 0, squared, 1.0)
        return where(squared > 0, sqrt(safe), 0.0)
    if ord == 1:
        return reduce_sum(abs_(tensor), axis=axis, keepdims=keepdims)
    if ord in (float("inf"), "inf"):
        return reduce_max(abs_(tensor), axis=axis, keepdims=keepdims)
    raise ValueError(f"norm: ord must be 'euclidean', 2, 1 or inf, received {ord!r}")


def tensordot(a, b, axes, name=None):
    """Tensor contraction over ``axes`` (an int or a pair of axis lists), via reshape and matmul."""
    a, b = binary_args("TensorDot", a, b)
    if isinstance(axes, int):
        axes_a, axes_b = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        axes_a, axes_b = [list(np.atleast_1d(x)) for x in axes]
    axes_a = [x % a.ndim for x in axes_a]
    axes_b = [x % b.ndim for x in axes_b]
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [i for i in range(b.ndim) if i not in axes_b]
    k = int(np.prod([a.shape[i] for i in axes_a], dtype=np.int64))
    a2 = reshape(transpose(a, free_a + axes_a), (-1, k))
    b2 = reshape(transpose(b, axes_b + free_b), (k, -1))
    return reshape(matmul(a2, b2), tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b))
