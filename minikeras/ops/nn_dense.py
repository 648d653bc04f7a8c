"""``dense_bias(x, kernel, bias)`` = ``x @ kernel + bias`` for a 2-D float32 ``x``: a Dense layer's
output before its activation, as one op whose kernel and bias gradients come from one pass over
the output gradient ``g``.

As two ops, the bias gradient (``g`` summed over its rows) read all of ``g`` once more beside the
kernel gradient ``x^T g``: over a vocabulary (the keras.io miniature GPT's 2560 x 20000 logits'
gradient) a pass of its own over 205 MB. Here, when nothing records the backward pass, both come
from ``matmul_tn_and_column_sums``: the native ``x^T g`` kernel adds up the slices of ``g`` it has
just read, or, for ``g`` too wide for that kernel, XLA's dot computes ``[1 x]^T g``. When an outer
tape records the backward pass (a higher-order gradient), the rule is the two ops,
``matmul(x, g, transpose_a=True)`` and ``unbroadcast(g, bias.shape)``, so that their own gradients
apply; the sums then run in another order (a float32 sum's rounding apart). The forward is
``jnp.matmul(x, kernel) + bias``, which XLA compiles as it did the two ops.
"""
import jax.numpy as jnp

from minikeras.ops.linalg import matmul
from minikeras.ops.primitive import Primitive
from minikeras.ops.reduce import unbroadcast
from minikeras.tensor import Tensor, to_array
from minikeras.xla_cpu.matmul_native import matmul_tn_and_column_sums


class _DenseBias(Primitive):
    """The op: the recorded rule is ``defgrad``'s; on arrays the kernel and bias gradients are one
    native call (``matmul_tn_and_column_sums``)."""

    def rule_on_arrays(self, g, out, inputs, params):
        x, kernel, _ = inputs
        grad_x = to_array(matmul(Tensor(g), Tensor(kernel), transpose_b=True))
        grad_kernel, grad_bias = matmul_tn_and_column_sums(x, g)
        return grad_x, grad_kernel, grad_bias


_dense_bias = _DenseBias("dense_bias", lambda x, kernel, bias: jnp.matmul(x, kernel) + bias)


@_dense_bias.defgrad
def _(g, out, x, kernel, bias):
    return matmul(g, kernel, transpose_b=True), matmul(x, g, transpose_a=True), unbroadcast(g, bias.shape)


def applies(x, kernel, bias):
    """Whether ``dense_bias`` takes these operands (Tensors or Variables): a 2-D ``x`` and a 2-D
    ``kernel`` of matching inner size, a bias over the kernel's columns, all float32. Other cases
    (mixed precision, a symbolic graph of another rank) stay the separate ops."""
    return (x.ndim == 2 and kernel.ndim == 2 and bias.ndim == 1 and x.shape[1] == kernel.shape[0]
            and bias.shape[0] == kernel.shape[1] and all(t.dtype == jnp.float32 for t in (x, kernel, bias)))


def dense_bias(x, kernel, bias):
    """``x @ kernel + bias`` (x: (rows, K), kernel: (K, N), bias: (N,), float32; see ``applies``)."""
    return _dense_bias(x, kernel, bias)
