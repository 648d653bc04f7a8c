"""Two-operand einsums that are batches of matrix products, on a native kernel that reads the
operands in place through their strides and shares the products among the threads
(``matmul_native.cc``'s ``StridedBatchedMatmul``).

A multi-head attention layer multiplies, for every example and head, a [sequence, sequence] matrix
by a [sequence, dim] one, on operands laid out [batch, sequence, heads, dim]: ``'acbe,aecd->abcd'``
(the probabilities times the values) and, in its gradient, ``'abcd,acbe->aecd'`` and
``'acbe,aecd->abcd'`` again. XLA:CPU copies such operands into [batch, heads, ...] order and runs the
batched dot on one thread. ``einsum(equation, p, q)`` runs it on the kernel where the equation has
this form:

- one or two batch labels (in both operands and the output), one contracted label (in both
  operands, not the output), and one free label in each operand;
- the output's last label is the last label of the operand it comes from (so that the kernel's
  vectors run along unit strides), and its size is a multiple of 16;

with float32 operands of concrete shapes, at least ``tuning.STRIDED_MATMUL_FLOPS``, on a CPU with
AVX-512 (``tuning.STRIDED_MATMUL_NEEDS_AVX512``). Every element's sum runs in order of the contracted
label, one float32 fused multiply-add per term. Elsewhere it returns None, and the caller runs
``jnp.einsum``. It is differentiable in reverse mode (``jax.custom_vjp``), its gradients the
einsums of the output's cotangent with the other operand, which take the kernel in turn where their
form allows. ``ops.einsum`` calls it, and ``ops.linalg.matmul`` for batched 3-D and 4-D operands.
"""
import functools
import math
import typing

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.xla_cpu import tuning
from minikeras.xla_cpu.low_precision import cpu_flags
from minikeras.xla_cpu.native_build import register_targets, usable_cpus

_TARGET = "minikeras_strided_batched_matmul"


@functools.lru_cache(maxsize=None)
def available():
    """True when the kernel is built for this machine and registered with XLA:CPU."""
    return register_targets("matmul_native.cc", {_TARGET: "MinikerasStridedBatchedMatmul"})


def _row_major_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return strides[::-1]


class Call(typing.NamedTuple):
    """A call of the kernel: its ``attributes``, the output's shape, whether the operands swap (the
    output's last label from ``p``) and the FLOPs of all its products."""
    attributes: tuple
    out_shape: tuple
    swap: bool
    flops: int


@functools.lru_cache(maxsize=1024)
def plan(equation, p_shape, q_shape):
    """The kernel's ``Call`` for ``einsum(equation, p, q)`` (``equation`` explicit, with '->'); None
    where the kernel cannot take the equation (see the module docstring; the size threshold and
    the switches are ``applies``')."""
    lhs, out = equation.split("->")
    subs = lhs.split(",")
    if len(subs) != 2 or "." in equation:
        return None
    p_sub, q_sub = subs
    if (any(len(set(s)) != len(s) for s in (p_sub, q_sub, out)) or len(p_sub) != len(p_shape)
            or len(q_sub) != len(q_shape) or set(out) - set(p_sub) - set(q_sub)):
        return None
    sizes = {}
    for sub, shape in ((p_sub, p_shape), (q_sub, q_shape)):
        for label, size in zip(sub, shape):
            if type(size) is not int or sizes.setdefault(label, size) != size:
                return None
    batch = [c for c in out if c in p_sub and c in q_sub]
    contracted = [c for c in p_sub if c in q_sub and c not in out]
    p_free = [c for c in p_sub if c not in q_sub]
    q_free = [c for c in q_sub if c not in p_sub]
    if (not 1 <= len(batch) <= 2 or len(contracted) != 1 or len(p_free) != 1 or len(q_free) != 1
            or set(p_free + q_free) - set(out)):
        return None
    n_label = out[-1]
    swap = n_label in p_free
    a_sub, a_shape, b_sub, b_shape = (q_sub, q_shape, p_sub, p_shape) if swap else (p_sub, p_shape, q_sub, q_shape)
    (m_label,), (k_label,) = (q_free if swap else p_free), contracted
    m, n, k = sizes[m_label], sizes[n_label], sizes[k_label]
    if n % 16 or b_sub[-1] != n_label:
        return None
    a_strides = dict(zip(a_sub, _row_major_strides(a_shape)))
    b_strides = dict(zip(b_sub, _row_major_strides(b_shape)))
    c_strides = dict(zip(out, _row_major_strides([sizes[c] for c in out])))
    batch = batch + [None] * (2 - len(batch))  # a second batch label of size 1
    size, stride = (lambda c: sizes[c] if c else 1), (lambda strides, c: strides[c] if c else 0)
    attributes = dict(
        batch0=size(batch[0]), batch1=size(batch[1]), m=m, n=n, k=k,
        sa0=stride(a_strides, batch[0]), sa1=stride(a_strides, batch[1]),
        sam=a_strides[m_label], sak=a_strides[k_label],
        sb0=stride(b_strides, batch[0]), sb1=stride(b_strides, batch[1]), sbk=b_strides[k_label],
        sc0=stride(c_strides, batch[0]), sc1=stride(c_strides, batch[1]), scm=c_strides[m_label])
    return Call(tuple(attributes.items()), tuple(sizes[c] for c in out), swap,
                2 * math.prod(sizes[c] for c in batch if c) * m * n * k)


def applies(equation, p, q):
    """Whether ``einsum`` runs ``equation`` on these operands (jax arrays or Tensors) on the kernel."""
    if not (tuning.NATIVE_KERNELS and tuning.STRIDED_MATMUL_NATIVE and jax.default_backend() == "cpu"
            and p.dtype == jnp.float32 and q.dtype == jnp.float32
            and (not tuning.STRIDED_MATMUL_NEEDS_AVX512 or "avx512f" in cpu_flags())):
        return False
    call = plan(equation, tuple(p.shape), tuple(q.shape))
    return call is not None and call.flops >= tuning.STRIDED_MATMUL_FLOPS and available()


def einsum(equation, p, q):
    """``jnp.einsum(equation, p, q)`` (``equation`` explicit) on the kernel where ``applies``; None elsewhere."""
    if not applies(equation, p, q):
        return None
    return _product(p, q, equation)


def _einsum_or_jnp(equation, p, q):
    product = einsum(equation, p, q)
    return jnp.einsum(equation, p, q) if product is None else product


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def _product(p, q, equation):
    call = plan(equation, tuple(p.shape), tuple(q.shape))
    a, b = (q, p) if call.swap else (p, q)
    kernel = jax.ffi.ffi_call(_TARGET, jax.ShapeDtypeStruct(call.out_shape, p.dtype), vmap_method="sequential")
    return kernel(a, b, **{name: np.int64(value) for name, value in call.attributes}, threads=np.int64(usable_cpus()))


def _product_fwd(p, q, equation):
    return _product(p, q, equation), (p, q)


def _product_bwd(equation, residuals, g):
    p, q = residuals
    lhs, out = equation.split("->")
    p_sub, q_sub = lhs.split(",")
    return (_einsum_or_jnp(f"{out},{q_sub}->{p_sub}", g, q), _einsum_or_jnp(f"{p_sub},{out}->{q_sub}", p, g))


_product.defvjp(_product_fwd, _product_bwd)
