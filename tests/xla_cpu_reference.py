"""Helpers shared by the xla_cpu tests: random inputs and a closeness check scaled to the
reference's magnitude."""
import jax.numpy as jnp
import numpy as np


def rand(shape, seed):
    return jnp.asarray(np.random.default_rng(seed).standard_normal(shape), jnp.float32)


def close(actual, expected, what, tol=2e-5):
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    scale = max(1.0, float(jnp.max(jnp.abs(expected)))) if expected.size else 1.0
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=tol, atol=tol * scale, err_msg=what)
