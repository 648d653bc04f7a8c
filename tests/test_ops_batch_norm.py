"""ops.batch_norm.batch_norm_training (BatchNormalization's training-mode normalization as one op):
the forward is the op-by-op formula; gradients and Hessian-vector products against jax's
of the plain formula, with and without gamma/beta; the layer's training step uses it."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import check_grad

import minikeras as mk
from minikeras.ops.batch_norm import batch_norm_training


def reference(x, gamma=None, beta=None, axes=(0, 1, 2), epsilon=1e-3):
    mean = jnp.mean(x, axis=axes, keepdims=True)
    centered = x - mean
    out = centered * jax.lax.rsqrt(jnp.mean(centered * centered, axis=axes, keepdims=True) + epsilon)
    if gamma is not None:
        out = out * gamma
    return out if beta is None else out + beta


RNG = np.random.default_rng(0)
X = (RNG.standard_normal((3, 4, 5, 6)) * 2 + 1).astype(np.float32)
GAMMA = RNG.uniform(0.5, 1.5, (1, 1, 1, 6)).astype(np.float32)
BETA = RNG.standard_normal((1, 1, 1, 6)).astype(np.float32)


def test_gamma_and_beta():
    check_grad(lambda x, g, b: batch_norm_training(x, g, b, (0, 1, 2), 1e-3),
               lambda x, g, b: reference(x, g, b), X, GAMMA, BETA, rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("scale,center", [(True, False), (False, True), (False, False)])
def test_without_gamma_or_beta(scale, center):
    inputs = [X] + ([GAMMA] if scale else []) + ([BETA] if center else [])

    def split(rest):
        rest = list(rest)
        return (rest.pop(0) if scale else None), (rest.pop(0) if center else None)

    check_grad(lambda x, *rest: batch_norm_training(x, *split(rest), (0, 1, 2), 1e-3),
               lambda x, *rest: reference(x, *split(rest)), *inputs, rtol=2e-4, atol=2e-4)


def test_other_axes():  # a channels-first 2D input: statistics over (0, 2)
    x = X.reshape(6, 4, 15)
    gamma, beta = GAMMA.reshape(1, 6, 1)[:, :4], BETA.reshape(1, 6, 1)[:, :4]
    check_grad(lambda x, g, b: batch_norm_training(x, g, b, (0, 2), 1e-3),
               lambda x, g, b: reference(x, g, b, axes=(0, 2)), x, gamma, beta, rtol=2e-4, atol=2e-4)


def test_forward_is_the_op_by_op_formula():  # one fused XLA program: within rounding
    out = batch_norm_training(mk.constant(X), mk.constant(GAMMA), mk.constant(BETA), (0, 1, 2), 1e-3)
    mean = jnp.mean(X, axis=(0, 1, 2))
    centered = X - mean.reshape(1, 1, 1, 6)
    variance = jnp.mean(centered * centered, axis=(0, 1, 2))
    expected = centered * jax.lax.rsqrt(variance + 1e-3).reshape(1, 1, 1, 6) * GAMMA + BETA
    np.testing.assert_allclose(out.numpy(), np.asarray(expected), rtol=1e-6, atol=1e-6)


def test_layer_training_step_gradients_against_jax():
    layer = mk.layers.BatchNormalization()
    layer.build(X.shape)
    layer.gamma.assign(GAMMA.reshape(6))
    layer.beta.assign(BETA.reshape(6))
    w = RNG.standard_normal(X.shape).astype(np.float32)
    x = mk.constant(X)
    with mk.GradientTape() as tape:
        tape.watch(x)
        loss = mk.reduce_sum(layer(x, training=True) * w)
    grads = tape.gradient(loss, [x, layer.gamma, layer.beta])
    expected = jax.grad(lambda x, g, b: jnp.sum(reference(x, g.reshape(GAMMA.shape), b.reshape(BETA.shape)) * w),
                        argnums=(0, 1, 2))(X, GAMMA.reshape(6), BETA.reshape(6))
    for got, want in zip(grads, expected):
        np.testing.assert_allclose(got.numpy(), want, rtol=2e-4, atol=2e-4)
    np.testing.assert_allclose(layer.moving_mean.numpy(), 0.01 * X.mean(axis=(0, 1, 2)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.moving_variance.numpy(), 0.99 + 0.01 * X.var(axis=(0, 1, 2)), rtol=1e-5)
