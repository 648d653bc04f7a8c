"""Sparse categorical cross-entropy of logits over wide rows on native kernels
(minikeras/xla_cpu/logits_crossentropy_native.cc): the gradient bit for bit against XLA's code for
the jax formula (given the same forward output), the forward's loss and log-sum-exp within
float32 rounding of it (another summation order), and the loss op's value, gradient and
Hessian-vector product against jax through the kernels."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_close, check_grad

import minikeras as mk
from minikeras.ops import nn_losses
from minikeras.xla_cpu import compiler, logits_crossentropy_native, low_precision, native_build, tuning

# Skipped where the kernels are off or cannot be built here, or the CPU lacks AVX-512 (where they
# do not apply); a build that fails is a failure (as in test_xla_cpu_conv_native.py).
_UNAVAILABLE = ("" if logits_crossentropy_native.available()
                else native_build.why_unavailable("logits_crossentropy_native.cc"))
pytestmark = [pytest.mark.skipif(bool(_UNAVAILABLE) and not _UNAVAILABLE.startswith("building"), reason=_UNAVAILABLE),
              pytest.mark.skipif("avx512f" not in low_precision.cpu_flags(), reason="the kernels need AVX-512 here")]

N = tuning.LOGITS_CROSSENTROPY_NATIVE_MIN_CLASSES


def test_the_kernels_build_where_a_compiler_is():
    assert logits_crossentropy_native.available()


def _jax_formulas(function):
    """``function`` compiled as minikeras compiles, with the kernels off: XLA's code for the jax formulas
    (traced anew: a jit of ``function`` itself would reuse its trace with the kernels in it)."""
    compiled = jax.jit(lambda *args: function(*args), compiler_options=compiler.cpu_options())

    def run(*args):
        saved, tuning.NATIVE_KERNELS = tuning.NATIVE_KERNELS, False
        try:
            assert "minikeras_logits_crossentropy" not in compiled.lower(*args).as_text()
            return compiled(*args)
        finally:
            tuning.NATIVE_KERNELS = saved
    return run


def _case(shape, scale, seed):
    rng = np.random.default_rng(seed)
    logits = (rng.standard_normal(shape) * scale).astype(np.float32)
    labels = rng.integers(-2, shape[-1] + 2, shape[:-1]).astype(np.int32)  # some outside [0, n)
    g = rng.standard_normal(shape[:-1] + (3,)).astype(np.float32)
    return logits, labels, g


# rows of the threshold, a tail after the last 16 floats, a vocabulary, three axes, huge logits
@pytest.mark.parametrize("shape, scale", [((5, N), 3.0), ((3, N + 7), 3.0), ((64, 20000), 3.0),
                                          ((2, 3, N + 33), 1.0), ((4, N + 1), 1e4)], ids=str)
def test_gradient_is_xla_bits_and_forward_within_rounding(shape, scale):
    logits, labels, g = _case(shape, scale, shape[-1])
    native = jax.jit(nn_losses._sparse_ce_logits_forward)
    assert "minikeras_logits_crossentropy" in native.lower(labels, logits).as_text()
    out = np.asarray(native(labels, logits))
    expected = np.asarray(_jax_formulas(nn_losses._sparse_ce_logits_forward)(labels, logits))
    np.testing.assert_array_equal(out[..., 1], expected[..., 1])  # the row maximum: exact
    np.testing.assert_allclose(out[..., 2], expected[..., 2], rtol=3e-6, atol=1e-7)  # log-sum-exp
    np.testing.assert_allclose(out[..., 0], expected[..., 0], rtol=3e-6, atol=1e-6)  # the loss
    assert np.all(out[..., 0][(labels < 0) | (labels >= shape[-1])] == 0)
    grad = jax.jit(nn_losses._sparse_ce_logits_gradient_forward)(labels, logits, out, g)
    expected_grad = _jax_formulas(nn_losses._sparse_ce_logits_gradient_forward)(labels, logits, out, g)
    np.testing.assert_array_equal(np.asarray(grad).view(np.uint32), np.asarray(expected_grad).view(np.uint32))


def test_log_sum_exp_is_nearer_the_exact_value_than_float32_lane_sums():
    logits, labels, _ = _case((256, 20000), 3.0, 0)
    out = np.asarray(jax.jit(nn_losses._sparse_ce_logits_forward)(labels, logits))
    x = logits.astype(np.float64)
    top = x.max(axis=-1, keepdims=True)
    exact = np.log(np.exp(x - top).sum(axis=-1))
    assert np.abs(out[:, 2] - exact).max() < 5e-7


def test_nan_and_infinite_logits_give_what_jax_gives():
    logits = np.zeros((4, N + 3), np.float32)
    logits[0, 5] = np.nan
    logits[1, 7] = np.inf
    logits[2, 9] = -np.inf
    logits[3, N] = 1e30
    labels = np.array([5, 1, 9, N], np.int32)
    g = np.ones((4, 3), np.float32)
    out = np.asarray(jax.jit(nn_losses._sparse_ce_logits_forward)(labels, logits))
    expected = np.asarray(_jax_formulas(nn_losses._sparse_ce_logits_forward)(labels, logits))
    np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    grad = jax.jit(nn_losses._sparse_ce_logits_gradient_forward)(labels, logits, out, g)
    expected_grad = _jax_formulas(nn_losses._sparse_ce_logits_gradient_forward)(labels, logits, out, g)
    np.testing.assert_array_equal(np.asarray(grad), np.asarray(expected_grad))


def test_narrow_rows_other_dtypes_and_vmapped_rows():
    for shape, dtype in [((4, N - 16), jnp.float32), ((4, N), jnp.bfloat16)]:
        text = jax.jit(nn_losses._sparse_ce_logits_forward).lower(
            jnp.zeros(shape[:-1], jnp.int32), jnp.zeros(shape, dtype)).as_text()
        assert "minikeras_logits_crossentropy" not in text, (shape, dtype)
    logits, labels, _ = _case((3, 2, N), 2.0, 1)  # vmapped over the first axis: the same rows
    batched = jax.vmap(jax.jit(nn_losses._sparse_ce_logits_forward))(labels, logits)
    np.testing.assert_array_equal(np.asarray(batched),
                                  np.asarray(jax.jit(nn_losses._sparse_ce_logits_forward)(labels, logits)))


def _keras_formula(labels):
    return lambda logits: -jnp.sum(jax.nn.one_hot(labels, logits.shape[-1]) * jax.nn.log_softmax(logits), -1)


def test_the_loss_op_through_the_kernels_matches_jax_to_second_order():
    logits, _, _ = _case((2, 3, N + 5), 3.0, 2)
    labels = np.random.default_rng(2).integers(0, N + 5, (2, 3)).astype(np.int32)
    check_grad(lambda x, t: nn_losses.sparse_categorical_crossentropy_from_logits(t, x),
               lambda x, t: _keras_formula(t)(x), logits, labels, wrt=[0], order=2, rtol=2e-5, atol=1e-6)


def test_a_compiled_training_step_of_a_vocabulary_head():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    labels = rng.integers(0, N + 16, 8).astype(np.int32)
    kernel = mk.Variable((rng.standard_normal((16, N + 16)) * 0.1).astype(np.float32))
    loss_fn = mk.losses.SparseCategoricalCrossentropy(from_logits=True)

    @mk.function
    def step(x, labels):
        with mk.GradientTape() as tape:
            loss = loss_fn(labels, mk.matmul(x, kernel))
        return loss, tape.gradient(loss, kernel)

    loss, grad = step(x, labels)
    expected, expected_grad = jax.value_and_grad(
        lambda w: _keras_formula(labels)(jnp.asarray(x) @ w).mean())(jnp.asarray(kernel.numpy()))
    assert_close(loss, expected, rtol=1e-5)
    assert_close(grad, expected_grad, rtol=1e-4, atol=1e-7)
