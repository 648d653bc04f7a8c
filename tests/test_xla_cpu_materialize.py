"""minikeras.xla_cpu.materialize: an identity XLA:CPU computes into a buffer of its own."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from minikeras.xla_cpu import materialize as materialize_module
from minikeras.xla_cpu.materialize import materialize

needs_build = pytest.mark.skipif(not materialize_module.available(), reason="materialize.cc could not be built here")


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.int8, jnp.bool_, jnp.bfloat16])
def test_materialize_is_the_identity(dtype):
    x = jnp.asarray(np.arange(24).reshape(2, 3, 4) % 5, dtype)
    np.testing.assert_array_equal(jax.jit(materialize)(x), x)
    np.testing.assert_array_equal(materialize(x), x)


@needs_build
def test_the_producer_is_computed_once_not_fused_into_each_read():
    def f(x):
        y = materialize(jnp.sin(x) * 3.0)  # a producer a broadcasting consumer would recompute
        return jnp.broadcast_to(y[:, None, :], (64, 4, 64)) + jnp.arange(4.0)[None, :, None]

    compiled = jax.jit(f).lower(jnp.ones((64, 64))).compile().as_text()
    assert 'custom_call_target="minikeras_materialize"' in compiled
    # the sine is computed at its own shape, not inside the loop that writes the broadcast
    computations = compiled.split("\n\n")
    with_sine = [c for c in computations if " sine(" in c]
    assert with_sine and not any("f32[64,4,64]" in c for c in with_sine), with_sine
    x = jnp.asarray(np.random.default_rng(0).standard_normal((64, 64)), jnp.float32)
    np.testing.assert_allclose(jax.jit(f)(x), jnp.broadcast_to((jnp.sin(x) * 3.0)[:, None, :], (64, 4, 64))
                               + jnp.arange(4.0)[None, :, None], rtol=1e-6)


def test_its_derivatives_are_the_identitys():
    x = jnp.asarray([0.5, -1.0, 2.0])
    f = lambda x: jnp.sum(materialize(x * x) * x)  # noqa: E731
    np.testing.assert_allclose(jax.grad(f)(x), 3 * x * x, rtol=1e-6)
    np.testing.assert_allclose(jax.jvp(materialize, (x,), (2 * x,))[1], 2 * x)
    np.testing.assert_allclose(jax.hessian(f)(x), np.diag(6 * x), rtol=1e-6)


def test_under_vmap():
    xs = jnp.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(jax.vmap(lambda v: materialize(v) * 2)(xs), xs * 2)
