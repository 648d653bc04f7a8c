"""``layer_norm``: LayerNormalization's centring and scaling as one op with its gradient written out.

    y = (x - mean) * rsqrt(variance + epsilon) * gamma + beta     # statistics over ``axes``

The forward is the formula LayerNormalization computed op by op (the same bits). The gradient
is the closed form over the normalized value ``xhat = (x - mean) * rstd``:

    dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)),   dxhat = g * gamma
    dgamma = sum(g * xhat), dbeta = sum(g)      # over the axes not normalized

Differentiating the op-by-op formula instead gives a dozen full-size products and broadcast
reductions per layer (the mean's and the variance's paths separately), which XLA fuses less
well. The rule is written with minikeras ops, so higher orders work as for any op.
"""
import jax
import jax.numpy as jnp

from minikeras.ops.primitive import Primitive
from minikeras.ops.reduce import reduce_mean, reduce_sum
from minikeras.ops.standardized import standardized


def _forward(x, *weights, axes, has_gamma, has_beta, epsilon):
    mean = jnp.mean(x, axis=axes, keepdims=True)
    inv = jax.lax.rsqrt(jnp.mean(jnp.square(x - mean), axis=axes, keepdims=True) + epsilon)
    weights = list(weights)
    if has_gamma:
        inv = inv * weights.pop(0)
    shift = -(mean * inv)
    if has_beta:
        shift = shift + weights.pop(0)
    return x * inv + shift


_layer_norm = Primitive("layer_norm", _forward)


@_layer_norm.defgrad
def _(g, out, x, *weights, axes, has_gamma, has_beta, epsilon):
    xhat, rstd = standardized(x, axes, epsilon)
    dxhat = g * weights[0] if has_gamma else g
    dx = rstd * (dxhat - reduce_mean(dxhat, axis=axes, keepdims=True)
                 - xhat * reduce_mean(dxhat * xhat, axis=axes, keepdims=True))
    others = tuple(i for i in range(x.ndim) if i not in axes)
    grads = [dx]
    if has_gamma:
        grads.append(reduce_sum(g * xhat, axis=others, keepdims=True) if others else g * xhat)
    if has_beta:
        grads.append(reduce_sum(g, axis=others, keepdims=True) if others else g)
    return tuple(grads)


def layer_norm(x, gamma, beta, axes, epsilon):
    """``(x - mean) * rsqrt(variance + epsilon) * gamma + beta``, the statistics over ``axes`` (a
    sorted tuple of non-negative axes of ``x``); ``gamma`` and ``beta`` (either may be None) have
    ``x``'s rank, size 1 on the axes not in ``axes``, and ``x``'s dtype."""
    weights = [w for w in (gamma, beta) if w is not None]
    return _layer_norm(x, *weights, axes=tuple(axes), has_gamma=gamma is not None, has_beta=beta is not None,
                       epsilon=float(epsilon))
