"""BatchNormalization: batch statistics and the moving-average update in training (eagerly and
inside mk.function), moving statistics at inference."""
import numpy as np
import pytest

import minikeras as mk

X = np.random.default_rng(0).normal(3.0, 2.0, (16, 3)).astype(np.float32)
EPS, MOMENTUM = 1e-3, 0.9


def reference_train(x, gamma, beta, moving_mean, moving_var, axes=(0,)):
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    out = (x - mean) / np.sqrt(var + EPS) * gamma + beta
    return out, moving_mean * MOMENTUM + mean * (1 - MOMENTUM), moving_var * MOMENTUM + var * (1 - MOMENTUM)


def make_bn(**kwargs):
    bn = mk.layers.BatchNormalization(momentum=MOMENTUM, epsilon=EPS, **kwargs)
    bn.build(X.shape)
    bn.gamma.assign(np.array([1.0, 2.0, 0.5], np.float32))
    bn.beta.assign(np.array([0.0, -1.0, 1.0], np.float32))
    return bn


def test_weights_and_defaults():
    bn = mk.layers.BatchNormalization()
    assert (bn.momentum, bn.epsilon, bn.axis) == (0.99, 1e-3, -1)
    bn.build((None, 3))
    assert [w.name for w in bn.trainable_weights] == ["gamma", "beta"]
    assert [w.name for w in bn.non_trainable_weights] == ["moving_mean", "moving_variance"]
    np.testing.assert_array_equal(bn.moving_variance.numpy(), np.ones(3))


def test_training_uses_batch_statistics_and_updates_the_moving_ones_eagerly():
    bn = make_bn()
    gamma, beta = bn.gamma.numpy(), bn.beta.numpy()
    moving_mean, moving_var = np.zeros(3), np.ones(3)
    for _ in range(2):
        out = bn(X, training=True).numpy()
        expected, moving_mean, moving_var = reference_train(X, gamma, beta, moving_mean, moving_var)
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(bn.moving_mean.numpy(), moving_mean, rtol=1e-5)
        np.testing.assert_allclose(bn.moving_variance.numpy(), moving_var, rtol=1e-5)


def test_training_inside_mk_function_updates_the_moving_statistics():
    bn = make_bn()
    gamma, beta = bn.gamma.numpy(), bn.beta.numpy()

    @mk.function
    def step(x):
        return bn(x, training=True)

    moving_mean, moving_var = np.zeros(3), np.ones(3)
    for _ in range(3):
        out = step(mk.constant(X)).numpy()
        expected, moving_mean, moving_var = reference_train(X, gamma, beta, moving_mean, moving_var)
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    assert step.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(bn.moving_mean.numpy(), moving_mean, rtol=1e-5)
    np.testing.assert_allclose(bn.moving_variance.numpy(), moving_var, rtol=1e-5)


def test_inference_uses_the_moving_statistics_and_changes_nothing():
    bn = make_bn()
    bn.moving_mean.assign(np.array([1.0, 2.0, 3.0], np.float32))
    bn.moving_variance.assign(np.array([4.0, 1.0, 0.25], np.float32))
    for training in (None, False):
        out = bn(X, training=training).numpy()
        expected = (X - [1.0, 2.0, 3.0]) / np.sqrt(np.array([4.0, 1.0, 0.25]) + EPS) * bn.gamma.numpy() \
            + bn.beta.numpy()
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(bn.moving_mean.numpy(), [1.0, 2.0, 3.0])


def test_gradients_reach_gamma_and_beta_but_not_the_moving_statistics():
    bn = make_bn()
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(bn(X, training=True) * np.arange(3, dtype=np.float32))
    grads = tape.gradient(loss, bn.trainable_variables)
    normalized = (X - X.mean(0)) / np.sqrt(X.var(0) + EPS)
    np.testing.assert_allclose(grads[0].numpy(), (normalized * np.arange(3)).sum(0), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(grads[1].numpy(), 16 * np.arange(3.0), rtol=1e-5)
    assert all(v.trainable for v in bn.trainable_variables) and len(bn.non_trainable_variables) == 2


def test_images_normalize_each_channel_over_batch_height_and_width():
    images = np.random.default_rng(1).normal(1.0, 3.0, (4, 3, 2, 3)).astype(np.float32)
    bn = mk.layers.BatchNormalization(momentum=MOMENTUM, epsilon=EPS)
    bn.build(images.shape)
    bn.gamma.assign(np.array([1.0, 2.0, 0.5], np.float32))
    out = bn(images, training=True).numpy()
    expected, _, _ = reference_train(images, bn.gamma.numpy(), bn.beta.numpy(), 0.0, 1.0, axes=(0, 1, 2))
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_frozen_batch_norm_keeps_its_statistics_non_trainable():
    bn = make_bn()
    bn.trainable = False
    assert bn.trainable_weights == [] and len(bn.non_trainable_weights) == 4
    bn.trainable = True
    assert [w.name for w in bn.trainable_weights] == ["gamma", "beta"]


def test_frozen_batch_norm_runs_in_inference_mode_even_when_training():
    bn = make_bn()
    bn.trainable = False  # Keras 3: a frozen BatchNormalization uses (and keeps) its moving statistics
    out = bn(X, training=True).numpy()
    np.testing.assert_allclose(out, X / np.sqrt(1 + EPS) * bn.gamma.numpy() + bn.beta.numpy(), rtol=1e-5)
    np.testing.assert_array_equal(bn.moving_mean.numpy(), np.zeros(3))


def test_input_rank_and_size_are_checked():
    bn = make_bn()
    with pytest.raises(ValueError, match=rf"'{bn.name}'.*ndim=2.*ndim=4"):
        bn(np.zeros((2, 2, 2, 3), np.float32))
    with pytest.raises(ValueError, match=rf"'{bn.name}' expects 3 features on axis -1, received shape \(2, 5\)"):
        bn(np.zeros((2, 5), np.float32))
