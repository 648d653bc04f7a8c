"""Matrix products and the matrix helpers built on array ops: matmul, matvec, tensordot, diag,
diag_part, trace, band_part, matrix_transpose.

Decompositions and solves are in ``linalg_solve`` and ``linalg_eig``; norms in ``norm``.
The helpers here are compositions of differentiable ops, so their gradients (of any order)
come from the ops they are made of.
"""
import jax.numpy as jnp
import numpy as np

from minikeras.errors import invalid_argument
from minikeras.ops.array import expand_dims, getitem, transpose
from minikeras.ops.convert import binary_args
from minikeras.ops.creation import eye
from minikeras.ops.primitive import Primitive
from minikeras.ops.reduce import reduce_sum, unbroadcast
from minikeras.ops.reshape import reshape
from minikeras.tensor import Tensor, Variable, to_array
from minikeras.xla_cpu import low_precision, matmul_bf16_native, strided_matmul
from minikeras.xla_cpu.matmul_native import matmul_tn


def _matmul_forward(a, b, *, transpose_a, transpose_b):
    if low_precision.is_low(a.dtype):  # bfloat16/float16: float32 accumulation, on the fast path where there is one
        if (transpose_a and not transpose_b and matmul_bf16_native.supported(a.shape, b.shape, a.dtype)
                and b.dtype == a.dtype and matmul_bf16_native.available()):
            return matmul_bf16_native.matmul_tn(a, b)  # x^T g, a bfloat16 Dense weight gradient
        if (transpose_b and not transpose_a and matmul_bf16_native.supported_nt(a.shape, b.shape, a.dtype)
                and b.dtype == a.dtype and matmul_bf16_native.available()):
            return matmul_bf16_native.matmul_nt(a, b)  # g W^T, a bfloat16 Dense input gradient
        return low_precision.matmul(a, b, transpose_a, transpose_b)
    if transpose_a and not transpose_b and a.ndim == b.ndim == 2:
        return matmul_tn(a, b)  # x^T g, a Dense weight gradient: a native kernel on the CPU
    product = _batched(a, b, transpose_a, transpose_b)
    if product is not None:
        return product
    if transpose_a:
        a = jnp.swapaxes(a, -1, -2)
    if transpose_b:
        b = jnp.swapaxes(b, -1, -2)
    return jnp.matmul(a, b)


def _batched(a, b, transpose_a, transpose_b):
    """A batch of products of 3-D or 4-D float32 operands with the same batch axes on
    ``xla_cpu.strided_matmul``'s kernel, the threads sharing the products (an attention's
    probabilities times values, and the gradients of its products that do not contract the last
    axes of both operands); None where it does not apply."""
    if transpose_b or a.ndim != b.ndim or a.ndim not in (3, 4) or a.shape[:-2] != b.shape[:-2]:
        return None
    batch = "ab"[:a.ndim - 2]
    return strided_matmul.einsum(f"{batch}{'km' if transpose_a else 'mk'},{batch}kn->{batch}mn", a, b)


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
        raise invalid_argument(
            "MatMul", f"matmul expects tensors of rank >= 2, received shapes {a.shape} and {b.shape} "
            "(use mk.tensordot or mk.reshape for vectors)")
    k_a = a.shape[-2] if transpose_a else a.shape[-1]
    k_b = b.shape[-1] if transpose_b else b.shape[-2]
    if k_a != k_b:
        raise invalid_argument("MatMul", f"Matrix size-incompatible: In[0]: [{_dims(a.shape)}], In[1]: "
                                         f"[{_dims(b.shape)}] (inner dimensions {k_a} and {k_b} differ)")
    return _matmul(a, b, transpose_a=bool(transpose_a), transpose_b=bool(transpose_b))


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


def _dims(shape):
    return ",".join(str(n) for n in shape)


def as_tensor(x):
    """``x`` as a Tensor (a Variable stays a Variable: ops read it)."""
    return x if isinstance(x, (Tensor, Variable)) else Tensor(to_array(x))


def matvec(a, b, transpose_a=False, name=None):
    """Matrix-vector product ``a @ b`` over the last axes: ``(..., M, N)`` times ``(..., N)``
    gives ``(..., M)`` (``tf.linalg.matvec``)."""
    a, b = binary_args("MatVec", a, b)
    product = matmul(a, expand_dims(b, -1), transpose_a=transpose_a)
    return reshape(product, product.shape[:-1])


def matrix_transpose(a, name=None, conjugate=False):
    """Swaps the last two axes (``tf.linalg.matrix_transpose``); batch axes stay."""
    a = as_tensor(a)
    if a.ndim < 2:
        raise invalid_argument("MatrixTranspose", f"matrix_transpose expects a tensor of rank >= 2, received shape "
                               f"{a.shape}")
    return transpose(a, tuple(range(a.ndim - 2)) + (a.ndim - 1, a.ndim - 2))


adjoint = matrix_transpose  # real dtypes only: the adjoint is the transpose


def check_square(op, a):
    """Raises InvalidArgumentError naming ``op`` unless ``a`` is a (batch of) square matrices."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise invalid_argument(op, f"Input must be a square matrix (or a batch of them), received shape {a.shape}")


def diag(diagonal, name=None):
    """The (batched) square matrix with ``diagonal`` on its diagonal and zeros elsewhere:
    shape ``(..., n)`` gives ``(..., n, n)`` (``tf.linalg.diag`` with k=0)."""
    d = as_tensor(diagonal)
    if d.ndim < 1:
        raise invalid_argument("MatrixDiagV3", f"diag expects a tensor of rank >= 1, received shape {d.shape}")
    return expand_dims(d, -1) * eye(d.shape[-1], dtype=d.dtype)


def diag_part(input, name=None):  # noqa: A002 - TensorFlow's name
    """The main diagonal of the last two axes: ``(..., m, n)`` gives ``(..., min(m, n))``."""
    x = as_tensor(input)
    if x.ndim < 2:
        raise invalid_argument("MatrixDiagPartV3", f"diag_part expects a tensor of rank >= 2, received shape "
                               f"{x.shape}")
    k = min(x.shape[-2:])
    square = getitem(x, (Ellipsis, slice(0, k), slice(0, k)))
    return reduce_sum(square * eye(k, dtype=x.dtype), axis=-1)


def trace(x, name=None):
    """Sum of the main diagonal of the last two axes (``tf.linalg.trace``)."""
    return reduce_sum(diag_part(x), axis=-1)


def band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """Keeps ``num_lower`` sub-diagonals and ``num_upper`` super-diagonals (-1: all of them) of
    the last two axes and zeroes the rest: ``band_part(x, -1, 0)`` is the lower triangle."""
    x = as_tensor(input)
    if x.ndim < 2:
        raise invalid_argument("MatrixBandPart", f"band_part expects a tensor of rank >= 2, received shape {x.shape}")
    m, n = x.shape[-2:]
    rows, cols = np.arange(m)[:, None], np.arange(n)[None, :]
    keep = np.ones((m, n), bool)
    if num_lower >= 0:
        keep &= rows - cols <= num_lower
    if num_upper >= 0:
        keep &= cols - rows <= num_upper
    return x * Tensor(jnp.asarray(keep, x.dtype))
