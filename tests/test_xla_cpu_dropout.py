"""minikeras.xla_cpu.dropout: the mask is ``jax.random.bernoulli``'s, with the right statistics."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from minikeras.xla_cpu import dropout


# -- dropout ----------------------------------------------------------------------------------
@pytest.mark.parametrize("rate", [0.0, 0.3])
def test_dropout_mask_is_jax_bernoulli(rate):
    for key in (jax.random.fold_in(jax.random.key(1), 3), jax.random.PRNGKey(7)):
        shape = (3, 41, 5)
        ours = jax.jit(lambda k: dropout.dropout_mask(k, shape, rate))(key)
        assert ours.dtype == jnp.bool_ and ours.shape == shape
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(jax.random.bernoulli(key, 1.0 - rate, shape)))


def test_dropout_statistics_and_reproducibility():
    rate, shape = 0.25, (64, 12, 12, 16)
    key = jax.random.key(42)
    mask = np.asarray(dropout.dropout_mask(key, shape, rate))
    n = mask.size
    assert abs(mask.mean() - (1 - rate)) < 4 * np.sqrt(rate * (1 - rate) / n)
    # neighbouring elements are independent
    flat = mask.reshape(-1).astype(np.float64)
    assert abs(np.corrcoef(flat[:-1], flat[1:])[0, 1]) < 4 / np.sqrt(n)
    np.testing.assert_array_equal(mask, np.asarray(dropout.dropout_mask(key, shape, rate)))
    other = np.asarray(dropout.dropout_mask(jax.random.fold_in(key, 1), shape, rate))
    assert abs((mask == other).mean() - (rate ** 2 + (1 - rate) ** 2)) < 0.01  # independent across keys
    x = jnp.ones(shape)
    out = np.asarray(dropout.dropout(x, key, rate))
    assert set(np.unique(out).tolist()) <= {0.0, float(np.float32(1) / np.float32(1 - rate))}
    np.testing.assert_array_equal(out != 0, mask)
    assert abs(out.mean() - 1.0) < 0.02


def test_dropout_other_key_impls_fall_back_to_jax():
    key = jax.random.key(0, impl="rbg")
    np.testing.assert_array_equal(np.asarray(dropout.dropout_mask(key, (100,), 0.5)),
                                  np.asarray(jax.random.bernoulli(key, 0.5, (100,))))

