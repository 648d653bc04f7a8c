"""xla_cpu.batch_moments_native: the native per-channel mean and variance against float64 NumPy
(one part and several of unequal sizes, a mean far above the spread, threads or not, NaN), its
derivatives against jax's of the two-pass formula, and the fallback where the kernel does not
apply; the gradient sums the same way; BatchNormalization's op on the kernels against jax.grad of
the plain formula, first and second order, and one call of each kernel in a compiled step."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import check_grad
from xla_cpu_reference import close, rand

import minikeras as mk
from minikeras.ops.batch_norm import batch_norm_training
from minikeras.xla_cpu import batch_moments_native as bm, tuning

_UNAVAILABLE = "" if bm.available() else bm.unavailable_reason()
pytestmark = pytest.mark.skipif(bool(_UNAVAILABLE) and not _UNAVAILABLE.startswith("building"), reason=_UNAVAILABLE)


def _float64_moments(x):
    x = np.asarray(x, np.float64).reshape(-1, x.shape[-1])
    return x.mean(axis=0), x.var(axis=0)


def _two_pass(x):
    axes = tuple(range(x.ndim - 1))
    mean = jnp.mean(x, axis=axes)
    return mean, jnp.mean((x - mean) ** 2, axis=axes)


def test_the_kernel_builds_where_a_compiler_is():
    assert bm.available(), bm.unavailable_reason()


@pytest.mark.parametrize("shape", [(2, 3, 5, 16), (3, 20, 20, 16), (7, 48), (2, 4, 4, 80)])
def test_values_against_float64(shape):  # (3, 20, 20, 16): parts of 1024 and 176 rows
    x = rand(shape, 1) * 3.0 + 0.5
    assert bm.supported(x.shape, x.dtype)
    mean, variance = jax.jit(bm.moments)(x)
    want_mean, want_variance = _float64_moments(x)
    close(mean, jnp.asarray(want_mean, jnp.float32), "mean", tol=1e-6)
    close(variance, jnp.asarray(want_variance, jnp.float32), "variance", tol=1e-6)


def test_no_cancellation_where_the_mean_dwarfs_the_spread():
    x = rand((4, 16, 16, 32), 2) * 0.01 + 1000.0
    _, variance = bm.moments(x)
    np.testing.assert_allclose(np.asarray(variance), _float64_moments(x)[1], rtol=1e-3)


def test_threads_do_not_change_a_bit(monkeypatch):
    x = rand((8, 32, 32, 16), 3)  # 2 ** 17 floats, 8 parts
    monkeypatch.setattr(tuning, "BATCH_MOMENTS_THREAD_FLOATS", 1 << 40)
    one = bm.moments(x)
    monkeypatch.setattr(tuning, "BATCH_MOMENTS_THREAD_FLOATS", 1)
    many = bm.moments(x)
    for a, b in zip(one, many):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_nan_reaches_its_channel_only():
    x = np.array(rand((2, 3, 3, 16), 4))
    x[1, 2, 0, 5] = np.nan
    mean, variance = bm.moments(jnp.asarray(x))
    assert np.isnan(mean[5]) and np.isnan(variance[5])
    assert not np.isnan(np.delete(np.asarray(mean), 5)).any()


def test_fallback_where_the_kernel_does_not_apply(monkeypatch):
    for x in (rand((4, 6), 5), rand((4, 16), 5).astype(jnp.bfloat16)):
        assert not bm.supported(x.shape, x.dtype)
        for got, want in zip(bm.moments(x), _two_pass(x)):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    monkeypatch.setattr(tuning, "BATCH_MOMENTS_NATIVE", False)
    assert not bm.supported((4, 16), jnp.float32)


def test_derivatives_against_the_two_pass_formula():
    x, t = rand((3, 4, 4, 16), 6), rand((3, 4, 4, 16), 7)
    cm, cv = rand((16,), 8), rand((16,), 9)

    def loss(moments):
        return lambda x: jnp.sum(moments(x)[0] * cm) + jnp.sum(moments(x)[1] * cv)

    close(jax.grad(loss(bm.moments))(x), jax.grad(loss(_two_pass))(x), "gradient", tol=1e-5)
    hvp = jax.jvp(jax.grad(loss(bm.moments)), (x,), (t,))[1]
    close(hvp, jax.jvp(jax.grad(loss(_two_pass)), (x,), (t,))[1], "Hessian-vector product", tol=1e-5)


@pytest.mark.parametrize("shape", [(2, 3, 5, 16), (3, 20, 20, 16), (2, 4, 4, 80)])
def test_gradient_sums_against_float64(shape):
    g, x, mean = rand(shape, 20), rand(shape, 21) * 2 + 100.0, rand(shape[-1:], 22) + 100.0
    sum_g, sum_gc = jax.jit(bm.gradient_sums)(g, x, mean)
    g64, x64 = np.asarray(g, np.float64), np.asarray(x, np.float64)
    axes = tuple(range(len(shape) - 1))
    close(sum_g, jnp.asarray(g64.sum(axes), jnp.float32), "sum g", tol=1e-5)
    close(sum_gc, jnp.asarray((g64 * (x64 - np.asarray(mean, np.float64))).sum(axes), jnp.float32), "sum g*(x-mean)",
          tol=1e-5)


def test_gradient_sums_threads_do_not_change_a_bit(monkeypatch):
    g, x, mean = rand((8, 32, 32, 16), 23), rand((8, 32, 32, 16), 24), rand((16,), 25)
    monkeypatch.setattr(tuning, "BATCH_MOMENTS_THREAD_FLOATS", 1 << 40)
    one = bm.gradient_sums(g, x, mean)
    monkeypatch.setattr(tuning, "BATCH_MOMENTS_THREAD_FLOATS", 1)
    for a, b in zip(one, bm.gradient_sums(g, x, mean)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_gradient_sums_derivatives_and_fallback():
    g, x, mean = rand((3, 4, 4, 16), 26), rand((3, 4, 4, 16), 27), rand((16,), 28)
    tangents = rand((3, 4, 4, 16), 29), rand((3, 4, 4, 16), 30), rand((16,), 31)
    got = jax.jvp(bm.gradient_sums, (g, x, mean), tangents)
    want = jax.jvp(bm._xla_gradient_sums, (g, x, mean), tangents)
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        close(a, b, "gradient sums jvp", tol=1e-5)
    g6, x6, m6 = rand((4, 6), 32), rand((4, 6), 33), rand((6,), 34)
    for a, b in zip(bm.gradient_sums(g6, x6, m6), bm._xla_gradient_sums(g6, x6, m6)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _reference(x, gamma, beta, epsilon=1e-3):
    mean = jnp.mean(x, axis=(0, 1, 2), keepdims=True)
    centered = x - mean
    variance = jnp.mean(centered * centered, axis=(0, 1, 2), keepdims=True)
    return centered * jax.lax.rsqrt(variance + epsilon) * gamma + beta


def test_batch_norm_op_on_the_kernel_against_jax():  # 2 x 18 x 18 = 648 rows, 32 channels: two parts
    x = np.asarray(rand((2, 18, 18, 32), 10)) * 2 + 1
    gamma = np.random.default_rng(11).uniform(0.5, 1.5, (1, 1, 1, 32)).astype(np.float32)
    beta = np.asarray(rand((1, 1, 1, 32), 12))
    check_grad(lambda x, g, b: batch_norm_training(x, g, b, (0, 1, 2), 1e-3), _reference, x, gamma, beta,
               rtol=2e-4, atol=2e-4)


def test_a_compiled_training_step_takes_the_statistics_once():
    # the forward's and the gradient rule's calls are one in the compiled program
    layer = mk.layers.BatchNormalization()
    x = mk.constant(np.asarray(rand((2, 8, 8, 16), 13)))

    @mk.function
    def step(x):
        with mk.GradientTape() as tape:
            tape.watch(x)
            loss = mk.reduce_sum(mk.sin(layer(x, training=True)))
        return tape.gradient(loss, [x, layer.gamma])

    step(x)
    (program,) = step.programs()
    hlo = jax.jit(program.pure).lower(program.state(), [x.numpy()]).compile().as_text()
    assert hlo.count('custom_call_target="minikeras_batch_moments"') == 1, hlo
    assert hlo.count('custom_call_target="minikeras_batch_norm_gradient_sums"') == 1, hlo
    # the layer's moving statistics are the kernel's, and XLA takes no statistics of its own
    assert "reduce(" not in hlo.replace("reduce-precision(", ""), hlo
    x64 = np.asarray(x.numpy(), np.float64).reshape(-1, 16)
    np.testing.assert_allclose(layer.moving_mean.numpy(), 0.01 * x64.mean(axis=0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(layer.moving_variance.numpy(), 0.99 + 0.01 * x64.var(axis=0), rtol=1e-6)
