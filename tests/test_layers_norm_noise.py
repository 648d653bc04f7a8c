"""GroupNormalization, RMSNormalization, UnitNormalization (values and derivatives against jax
formulas), the noise and dropout variants (their distributions and gradients), ActivityRegularization,
SpectralNormalization in a compiled training step, and Keras 3's argument errors."""
import math

import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_close, rand
from layer_reference import check_layer

import minikeras as mk

L = mk.layers


def test_group_normalization_matches_formula():
    x = rand(2, 3, 6, seed=1)

    def fn(x, gamma, beta):
        g = x.reshape(2, 3, 2, 3)
        mean = g.mean(axis=(1, 3), keepdims=True)
        var = ((g - mean) ** 2).mean(axis=(1, 3), keepdims=True)
        return ((g - mean) / jnp.sqrt(var + 1e-3)).reshape(2, 3, 6) * gamma + beta
    layer = L.GroupNormalization(2, gamma_initializer=mk.initializers.RandomNormal(seed=1),
                                 beta_initializer=mk.initializers.RandomNormal(seed=2))
    check_layer(layer, fn, x)


def test_rms_and_unit_normalization_match_formulas():
    x = rand(2, 3, 4, seed=2)
    check_layer(L.RMSNormalization(axis=[1, 2], epsilon=1e-3),
                lambda x, s: x / jnp.sqrt((x ** 2).mean(axis=(1, 2), keepdims=True) + 1e-3) * s, x)
    check_layer(L.UnitNormalization(), lambda x: x / jnp.sqrt((x ** 2).sum(-1, keepdims=True)), x)


def test_gaussian_noise_and_dropout_distributions_and_gradients():
    x = mk.constant(rand(200, 100, seed=3) + 3.0)
    with mk.GradientTape(persistent=True) as tape:
        tape.watch(x)
        noisy = L.GaussianNoise(0.5)(x, training=True)
        scaled = L.GaussianDropout(0.2)(x, training=True)
    noise = (noisy - x).numpy()
    assert abs(noise.mean()) < 0.01 and abs(noise.std() - 0.5) < 0.01
    factor = (scaled / x).numpy()
    assert abs(factor.mean() - 1.0) < 0.01 and abs(factor.std() - math.sqrt(0.2 / 0.8)) < 0.01
    assert_close(tape.gradient(noisy, x), np.ones(x.shape))
    assert_close(tape.gradient(scaled, x), factor, rtol=1e-5)
    np.testing.assert_array_equal(L.GaussianNoise(0.5)(x).numpy(), x.numpy())  # inference: the identity


def test_alpha_dropout_keeps_or_saturates_with_keras_affine_correction():
    rate = 0.3
    x = rand(400, 50, seed=4)
    y = L.AlphaDropout(rate, noise_shape=(None, 1))(x, training=True).numpy()
    alpha_p = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946
    a = ((1 - rate) * (1 + rate * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * rate
    kept = np.isclose(y, a * x + b, atol=1e-6)
    dropped = np.isclose(y, a * alpha_p + b, atol=1e-6)
    assert (kept | dropped).all()
    assert (kept.all(axis=1) | dropped.all(axis=1)).all()  # noise_shape (None, 1): whole rows
    assert abs(dropped[:, 0].mean() - rate) < 0.07


def test_spatial_dropout_drops_whole_channels():
    x = np.ones((64, 2, 3, 2, 8), np.float32)
    y = L.SpatialDropout3D(0.5)(x, training=True).numpy()
    per_channel = y.reshape(64, -1, 8)
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert (per_channel.min(axis=1) == per_channel.max(axis=1)).all()
    y1 = L.SpatialDropout1D(0.5)(np.ones((64, 5, 8), np.float32), training=True).numpy()
    assert (y1.min(axis=1) == y1.max(axis=1)).all()


def test_activity_regularization_adds_keras_penalty():
    x = rand(4, 3, seed=5)
    layer = L.ActivityRegularization(l1=0.1, l2=0.01)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    expected = (0.1 * np.abs(x).sum() + 0.01 * (x ** 2).sum()) / 4
    assert_close(layer.losses[0], expected, rtol=1e-5)


def test_spectral_normalization_trains_in_a_compiled_step():
    dense = L.Dense(3)
    model = mk.Sequential([mk.Input((4,)), L.SpectralNormalization(dense, power_iterations=2), L.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(rand(16, 4, seed=6), rand(16, 1, seed=7), batch_size=8, epochs=3, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    sigma = np.linalg.svd(dense.kernel.numpy(), compute_uv=False)[0]
    assert abs(sigma - 1.0) < 0.2  # normalized each step, then moved by one small SGD step


def test_keras_argument_errors():
    with pytest.raises(ValueError, match="Received an invalid value for argument `groups`, expected a positive "
                                         r"integer \(or `-1` for instance normalization\). Received: groups=0"):
        L.GroupNormalization(0)
    with pytest.raises(ValueError, match=r"Number of groups \(4\) must be a multiple of the number of channels \(6\)"):
        L.GroupNormalization(4)(np.zeros((1, 6), np.float32))
    with pytest.raises(ValueError, match=r"Number of groups \(8\) cannot be more than the number of channels \(6\)"):
        L.GroupNormalization(8)(np.zeros((1, 6), np.float32))
    with pytest.raises(ValueError, match="Invalid value received for argument `stddev`. Expected a float value "
                                         "between 0 and 1. Received: stddev=2"):
        L.GaussianNoise(2)
    with pytest.raises(ValueError, match="Invalid value received for argument `rate`"):
        L.AlphaDropout(1.5)
    with pytest.raises(TypeError, match="Invalid value for `axis` argument: expected an int or a list/tuple of ints"):
        L.UnitNormalization(axis="last")
    with pytest.raises(ValueError, match="`power_iterations` should be greater than zero"):
        L.SpectralNormalization(L.Dense(2), power_iterations=0)
    with pytest.raises(ValueError, match="object has no attribute 'kernel' nor 'embeddings'"):
        L.SpectralNormalization(L.ReLU())(np.zeros((1, 2), np.float32))
