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
"""
import math

import jax
import jax.numpy as jnp

from minikeras.ops.primitive import Primitive
from minikeras.ops.reduce import reduce_mean, reduce_sum
from minikeras.ops.standardized import centered_and_rstd


def _forward(x, *weights, axes, has_gamma, has_beta, epsilon):
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
