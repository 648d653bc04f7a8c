"""A sum over the leading axes of an array with wide rows (a Dense bias gradient over a
vocabulary) as a product with a vector of ones.

jax 0.10's XLA:CPU hands reductions to YNNPACK, which sums the rows of a wide array far below
memory speed: the bias gradient of keras.io's miniature GPT's 20,000-word output layer, the
(2560, 20000) logits' gradient summed over its rows, took 15-25x as long as ``ones @ x`` (a
matrix-vector product streaming the rows), and (64, 20000) 40x; at 4096 columns 1.7-3x, at 1024
and 2048 columns 1.3x, and for narrow rows (9216 x 256) YNNPACK's reduction is as fast. So the
product is used from ``MIN_COLUMNS`` columns on, float32 on the CPU backend. It adds each column
in another order than the reduction (a sequential float32 sum's rounding: 4e-4 on sums of 2560
standard normal numbers, the reduction's 2e-5), which is why it stands where a gradient is
summed (``ops.reduce.unbroadcast``), not in ``reduce_sum`` itself.

    if supported(x.shape, n_leading, x.dtype):
        total = leading_sum(x, n_leading)   # jnp.sum(x, axis=tuple(range(n_leading)))
"""
import math

import jax
import jax.numpy as jnp

from minikeras.xla_cpu import tuning

# YNNPACK's sum over rows runs below the product from here on (see the module docstring)
MIN_COLUMNS = 4096


def supported(shape, n_leading, dtype):
    """Whether ``leading_sum`` takes the sum over the first ``n_leading`` axes of this (concrete)
    shape and dtype: float32 on the CPU backend, at least ``MIN_COLUMNS`` elements kept."""
    return (tuning.NATIVE_KERNELS and jax.default_backend() == "cpu" and jnp.dtype(dtype) == jnp.float32
            and 0 < n_leading < len(shape) and all(type(d) is int for d in shape)
            and math.prod(shape[n_leading:]) >= MIN_COLUMNS and math.prod(shape[:n_leading]) > 1)


def leading_sum(x, n_leading):
    """``jnp.sum(x, axis=tuple(range(n_leading)))`` as ``ones @ x`` over the leading axes' rows."""
    rows = math.prod(x.shape[:n_leading])
    return (jnp.ones((rows,), x.dtype) @ x.reshape(rows, -1)).reshape(x.shape[n_leading:])
