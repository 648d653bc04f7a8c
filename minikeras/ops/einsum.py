"""``mk.einsum``: Einstein summation, as ``tf.einsum``, with gradients of any order.

The equation is first made explicit (``'ij,jk'`` -> ``'ij,jk->ik'``). Before the
contraction each operand loses, with ordinary differentiable ops, the labels that need no
partner: a label repeated inside one operand (``'ii'``) becomes its diagonal, and a label
found in no other operand nor the output is summed away. After that every label of an
operand also appears in the output or in another operand, so the gradient of operand i is
itself an einsum: ``'<out>,<other operands>-><operand i>'`` of the output cotangent with the
other operands.
"""
import string

import jax.numpy as jnp
import numpy as np

from minikeras.errors import invalid_argument
from minikeras.ops.array import transpose
from minikeras.ops.creation import eye
from minikeras.ops.linalg import as_tensor
from minikeras.ops.primitive import Primitive
from minikeras.ops.reduce import reduce_sum, unbroadcast
from minikeras.xla_cpu import low_precision, matmul_native, strided_matmul

_ELLIPSIS = "..."


def _parse(equation, ranks):
    """(input subscripts, output subscript) with '...' kept; the output made explicit."""
    equation = equation.replace(" ", "")
    lhs, arrow, out = equation.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(ranks):
        raise invalid_argument("Einsum", f"einsum equation {equation!r} names {len(inputs)} operands, received "
                               f"{len(ranks)}")
    for sub in inputs + ([out] if arrow else []):
        letters = sub.replace(_ELLIPSIS, "")
        if not all(c in string.ascii_letters for c in letters) or sub.count(_ELLIPSIS) > 1:
            raise invalid_argument("Einsum", f"einsum equation {equation!r}: subscripts must be letters with at "
                                   f"most one '...', received {sub!r}")
    if not arrow:
        counts = {}
        for sub in inputs:
            for c in sub.replace(_ELLIPSIS, ""):
                counts[c] = counts.get(c, 0) + 1
        out = (_ELLIPSIS if any(_ELLIPSIS in s for s in inputs) else "") + "".join(
            sorted(c for c, n in counts.items() if n == 1))
    for sub, rank in zip(inputs, ranks):
        named = len(sub.replace(_ELLIPSIS, ""))
        if named > rank or (_ELLIPSIS not in sub and named != rank):
            raise invalid_argument("Einsum", f"einsum equation {equation!r}: subscript {sub!r} does not fit an "
                                   f"operand of rank {rank}")
    return inputs, out


def _axis_labels(sub, rank):
    """One label per axis: letters, and ('.', k) for the k-th axis under '...'."""
    head, _, tail = sub.partition(_ELLIPSIS)
    if _ELLIPSIS not in sub:
        return list(sub)
    n_ellipsis = rank - len(head) - len(tail)
    return list(head) + [(".", k) for k in range(n_ellipsis)] + list(tail)


def _diagonal(x, labels, letter):
    """Keeps the diagonal over the axes labelled ``letter`` (all but the first removed)."""
    positions = [i for i, label in enumerate(labels) if label == letter]
    first, second = positions[0], positions[1]
    n = x.shape[first]
    if x.shape[second] != n:
        raise invalid_argument("Einsum", f"einsum: label {letter!r} has sizes {n} and {x.shape[second]} in one operand")
    perm = [i for i in range(x.ndim) if i not in (first, second)] + [first, second]
    moved = transpose(x, tuple(perm)) * eye(n, dtype=x.dtype)
    diag = reduce_sum(moved, axis=-1)  # (..., n) with the kept axis last
    rest = [labels[i] for i in perm[:-2]]
    back = list(range(diag.ndim))
    back.insert(first if first < second else first - 1, back.pop())
    keep = rest + [letter]
    return transpose(diag, tuple(back)) if back != list(range(diag.ndim)) else diag, [keep[i] for i in back]


def _reduce_operand(x, labels, needed):
    """Diagonals of repeated labels, then sums over labels not ``needed``."""
    while True:
        repeated = next((c for c in labels if not isinstance(c, tuple) and labels.count(c) > 1), None)
        if repeated is None:
            break
        x, labels = _diagonal(x, labels, repeated)
    drop = [i for i, c in enumerate(labels) if not isinstance(c, tuple) and c not in needed]
    if drop:
        x = reduce_sum(x, axis=drop)
        labels = [c for i, c in enumerate(labels) if i not in drop]
    return x, labels


def _subscript(labels):
    """Labels back to a subscript; the '...' axes (kept contiguous here) become '...'."""
    text, ellipsis_done = "", False
    for c in labels:
        if isinstance(c, tuple):
            if not ellipsis_done:
                text += _ELLIPSIS
                ellipsis_done = True
        else:
            text += c
    if not ellipsis_done and any(isinstance(c, tuple) for c in labels):
        text += _ELLIPSIS
    return text


def _einsum_forward(*xs, equation, cotangent_last=False):
    if low_precision.is_low(xs[0].dtype):  # bfloat16/float16: float32 accumulation, as matmul
        return low_precision.einsum(equation, *xs)
    if len(xs) == 2:
        product = _rows_contracted(equation, *xs)
        if product is None:  # a batch of matrix products (attention's), read in place by a kernel
            product = strided_matmul.einsum(equation, *xs)
        if product is not None:
            return product
    return jnp.einsum(equation, *xs)


def _rows_contracted(equation, p, q):
    """``einsum(equation, p, q)`` as ``x.T @ y`` on ``xla_cpu.matmul_native``'s kernel where the
    equation contracts the leading axes of both operands and keeps the rest, one operand's free
    axes then the other's (an EinsumDense's weight gradient, ``'abde,abc->cde'``: XLA:CPU runs
    such a product contracting the rows well below its GEMM speed); None elsewhere."""
    lhs, out = equation.split("->")
    p_sub, q_sub = lhs.split(",")
    if (_ELLIPSIS in equation or len(set(p_sub)) != len(p_sub) or len(set(q_sub)) != len(q_sub)
            or not all(type(d) is int for d in p.shape + q.shape)):
        return None
    n = 0
    while n < min(len(p_sub), len(q_sub)) and p_sub[n] == q_sub[n] and p_sub[n] not in out:
        n += 1
    p_free, q_free = p_sub[n:], q_sub[n:]
    if n == 0 or set(p_free) & set(q_free) or set(p_free + q_free) & set(p_sub[:n]):
        return None
    if out == q_free + p_free:
        x, y = q, p
    elif out == p_free + q_free:
        x, y = p, q
    else:
        return None
    rows = int(np.prod(x.shape[:n], dtype=np.int64))
    x2, y2 = x.reshape(rows, -1), y.reshape(rows, -1)
    if not (matmul_native.supported(x2.shape, y2.shape, x2.dtype) and matmul_native.available()):
        return None
    return matmul_native.matmul_tn(x2, y2).reshape(x.shape[n:] + y.shape[n:])


_einsum = Primitive("einsum", _einsum_forward)


@_einsum.defgrad
def _(g, out, *xs, equation, cotangent_last=False):
    lhs, out_sub = equation.split("->")
    subs = lhs.split(",")
    grads = []
    for i, x in enumerate(xs):
        others = [s for j, s in enumerate(subs) if j != i]
        operands = [y for j, y in enumerate(xs) if j != i]
        if cotangent_last:
            grad = einsum(",".join(others + [out_sub]) + "->" + subs[i], *operands, g)
        else:
            grad = einsum(",".join([out_sub] + others) + "->" + subs[i], g, *operands)
        grads.append(unbroadcast(grad, x.shape) if grad.shape != x.shape else grad)
    return tuple(grads)


def einsum_cotangent_last(equation, *inputs):
    """``einsum(equation, *inputs)`` whose gradient products take the output's cotangent as their
    last operand rather than their first (the same sums, in another order of the operands).

    The operands' order decides the layouts XLA:CPU gives a batched product's operands and result,
    so it decides which of them it transposes in memory first. MultiHeadAttention's query-key
    product uses this: its key gradient, ``einsum('abcd,acbe->aecd', query, g)``, reads the query
    in the [batch, heads, seq, dim] copy the forward product made, where ``'acbe,abcd->aecd'``
    (cotangent first) transposed both the query and the result across their last two axes.
    """
    return _einsum_call(equation, inputs, {}, cotangent_last=True)


def einsum(equation, *inputs, **kwargs):
    """Einstein summation over ``inputs`` as described by ``equation`` (``tf.einsum``).

    >>> mk.einsum("ij,jk->ik", a, b)        # matmul
    >>> mk.einsum("bij,bkj->bik", q, k)     # batched, transposed
    >>> mk.einsum("ii", m)                  # trace (implicit output)
    >>> mk.einsum("...ij,...jk", a, b)      # broadcast batch axes

    Differentiable in every floating input, to any order. Operands must share a dtype.
    """
    return _einsum_call(equation, inputs, kwargs)


def _einsum_call(equation, inputs, kwargs, cotangent_last=False):
    unknown = set(kwargs) - {"name", "optimize"}
    if unknown:
        raise TypeError(f"einsum got unexpected keyword arguments {sorted(unknown)}")
    xs = [as_tensor(x) for x in inputs]
    if not xs:
        raise invalid_argument("Einsum", "einsum needs at least one operand")
    dtypes = {x.dtype for x in xs}
    if len(dtypes) > 1:
        raise TypeError(f"einsum: operands must share a dtype, received {[x.dtype.name for x in xs]}")
    subs, out_sub = _parse(equation, [x.ndim for x in xs])
    all_labels = [_axis_labels(s, x.ndim) for s, x in zip(subs, xs)]
    reduced, reduced_subs = [], []
    for i, (x, labels) in enumerate(zip(xs, all_labels)):
        needed = set(out_sub) | {c for j, other in enumerate(all_labels) if j != i for c in other}
        x, labels = _reduce_operand(x, labels, needed)
        reduced.append(x)
        reduced_subs.append(_subscript(labels))
    core = ",".join(reduced_subs) + "->" + out_sub
    _check_sizes(core, reduced)
    if cotangent_last:
        return _einsum(*reduced, equation=core, cotangent_last=True)
    return _einsum(*reduced, equation=core)


def _check_sizes(equation, xs):
    sizes = {}
    for sub, x in zip(equation.split("->")[0].split(","), xs):
        for axis, c in enumerate(_axis_labels(sub, x.ndim)):
            if isinstance(c, tuple):
                continue
            n = x.shape[axis]
            if sizes.setdefault(c, n) != n:
                raise invalid_argument("Einsum", f"einsum {equation!r}: label {c!r} has size {sizes[c]} in one operand "
                                       f"and {n} in another (operand shapes {[x.shape for x in xs]})")


