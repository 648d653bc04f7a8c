"""``batch_norm_training``: BatchNormalization's training-mode normalization as one op with its
gradient written out.

    y = (x - mean) * rsqrt(variance + epsilon) * gamma + beta     # batch statistics over ``axes``

The forward is the formula BatchNormalization computed op by op, in one XLA program (inside a
compiled step, where XLA fused the ops anyway, the same computation; eagerly, within a rounding
of the op-by-op values). With
``xhat = (x - mean) * rstd`` and ``n`` the number of values each statistic is taken over, the
gradient is the closed form

    dbeta = sum(g),   dgamma = sum(g * (x - mean)) * rstd         # over ``axes``
    dx = rstd * gamma * (g - dbeta / n - xhat * dgamma / n)

so a layer's backward pass is two sums of the same two arrays and one elementwise pass.
Differentiating the op-by-op formula instead takes four reductions, the last of which waits
for a full-size elementwise pass (the mean's path through the centred values). The rule is
written with minikeras ops, so higher orders work as for any op.

Where the statistics are over every axis but the last (a channels-last BatchNormalization) and
``xla_cpu.batch_moments_native`` takes the shape, the mean and variance come from its kernel (one
read of x instead of XLA's three passes) through the op ``batch_statistics``, whose value the
forward and the gradient rule share (XLA computes the one call once in a compiled step), and the
gradient's two sums from its second kernel (``batch_norm_gradient_sums``: one pass over g and x,
where XLA wrote ``x - mean`` out to sum its product with g).
"""
import math

import jax
import jax.numpy as jnp

from minikeras.ops.elementwise import rsqrt
from minikeras.ops.primitive import Primitive
from minikeras.ops.reduce import reduce_mean, reduce_sum
from minikeras.ops.reshape import reshape
from minikeras.ops.standardized import centered_and_rstd
from minikeras.xla_cpu import batch_moments_native


def _native_statistics(shape, dtype, axes):
    """Whether the statistics over ``axes`` of an array of ``shape`` run on the native kernel."""
    return tuple(axes) == tuple(range(len(shape) - 1)) and batch_moments_native.supported(shape, dtype)


def _statistics_forward(x, *, axes):
    mean, variance = batch_moments_native.moments(x)
    return jnp.stack([mean, variance]).reshape((2,) + tuple(1 if a in axes else d for a, d in enumerate(x.shape)))


# (mean, variance) over ``axes``, stacked on a new leading axis, each with x's rank (size 1 on axes)
_batch_statistics = Primitive("batch_statistics", _statistics_forward)


@_batch_statistics.defgrad
def _(g, out, x, *, axes):
    inverse_n = 1.0 / math.prod(x.shape[a] for a in axes)
    return g[0] * inverse_n + g[1] * (2.0 * inverse_n) * (x - out[0])


def _gradient_sums_forward(g, x, mean, *, axes):
    sum_g, sum_gc = batch_moments_native.gradient_sums(g, x, mean.reshape(x.shape[-1]))
    return jnp.stack([sum_g, sum_gc]).reshape((2,) + mean.shape)


# (sum(g), sum(g * (x - mean))) over ``axes``, stacked, each of mean's shape: the gradient's two sums
# in one pass, with no x - mean array written for them
_gradient_sums = Primitive("batch_norm_gradient_sums", _gradient_sums_forward)


@_gradient_sums.defgrad
def _(cotangent, out, g, x, mean, *, axes):
    centered_cotangent = cotangent[1]
    return (cotangent[0] + centered_cotangent * (x - mean), centered_cotangent * g,
            -centered_cotangent * reduce_sum(g, axis=axes, keepdims=True))


def _forward(x, *weights, axes, has_gamma, has_beta, epsilon):
    if _native_statistics(x.shape, x.dtype, axes):
        mean, variance = _statistics_forward(x, axes=axes)
        centered = x - mean
    else:
        mean = jnp.mean(x, axis=axes, keepdims=True)
        centered = x - mean
        variance = jnp.mean(centered * centered, axis=axes, keepdims=True)
    out = centered * jax.lax.rsqrt(variance + epsilon)
    weights = list(weights)
    if has_gamma:
        out = out * weights.pop(0)
    if has_beta:
        out = out + weights.pop(0)
    return out


_batch_norm_training = Primitive("batch_norm_training", _forward)


@_batch_norm_training.defgrad
def _(g, out, x, *weights, axes, has_gamma, has_beta, epsilon):
    if _native_statistics(x.shape, x.dtype, axes) and g.shape == x.shape:
        statistics = _batch_statistics(x, axes=axes)
        mean, rstd = statistics[0], rsqrt(statistics[1] + epsilon)
        sums = _gradient_sums(g, x, mean, axes=axes)
        dbeta, dgamma = sums[0], sums[1] * rstd
        xhat = (x - mean) * rstd
    else:
        centered, rstd = centered_and_rstd(x, axes, epsilon)
        xhat = centered * rstd
        dbeta = reduce_sum(g, axis=axes, keepdims=True)
        # sum(g * centered) * rstd, not sum(g * xhat): the variance's pass already wrote the centered
        # values, and a sum of products reads them; xhat would be one more full-size array to write
        dgamma = reduce_sum(g * centered, axis=axes, keepdims=True) * rstd
    sizes = [x.shape[a] for a in axes]
    if all(type(s) is int for s in sizes):
        inverse_n = 1.0 / math.prod(sizes)
        mean_g, mean_gx = dbeta * inverse_n, dgamma * inverse_n
    else:  # symbolic sizes (a general program): the means as reductions of their own
        mean_g, mean_gx = reduce_mean(g, axis=axes, keepdims=True), reduce_mean(g * xhat, axis=axes, keepdims=True)
    scale = rstd * weights[0] if has_gamma else rstd
    grads = [scale * (g - mean_g - xhat * mean_gx)]
    if has_gamma:
        grads.append(dgamma)
    if has_beta:
        grads.append(dbeta)
    return tuple(grads)


def batch_norm_training(x, gamma, beta, axes, epsilon):
    """``(x - mean) * rsqrt(variance + epsilon) * gamma + beta`` with the mean and the (biased)
    variance of ``x`` over ``axes`` (a sorted tuple of non-negative axes); ``gamma`` and ``beta``
    (either may be None) have ``x``'s rank, size 1 on ``axes``, and ``x``'s dtype."""
    weights = [w for w in (gamma, beta) if w is not None]
    return _batch_norm_training(x, *weights, axes=tuple(axes), has_gamma=gamma is not None,
                                has_beta=beta is not None, epsilon=float(epsilon))


def batch_statistics(x, axes):
    """``(mean, variance)`` of ``x`` over ``axes`` (a sorted tuple; the axes removed), the biased
    variance: the statistics ``batch_norm_training`` normalizes by, for BatchNormalization's moving
    averages. On the native kernel the same op as the normalization's, so a compiled step computes
    them once; elsewhere the two-pass formula, which XLA shares with the op's as well."""
    axes = tuple(axes)
    kept = [d for a, d in enumerate(x.shape) if a not in axes]
    if _native_statistics(x.shape, x.dtype, axes):
        statistics = _batch_statistics(x, axes=axes)
        return reshape(statistics[0], kept), reshape(statistics[1], kept)
    mean = reduce_mean(x, axis=axes, keepdims=True)
    centered = x - mean
    return reshape(mean, kept), reduce_mean(centered * centered, axis=axes)
