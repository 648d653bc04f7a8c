"""The native softmax and its gradient (minikeras/xla_cpu/softmax_native.cc) against XLA's
jax.nn.softmax, bit for bit, and mk.nn.softmax's first and second derivatives against jax."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk
from minikeras.xla_cpu import compiler, native_build, softmax_native, tuning

# Skipped where the kernels are off or cannot be built here (no compiler, another platform);
# a build that fails is a failure (as in test_conv_native.py).
_UNAVAILABLE = "" if softmax_native.available() else native_build.why_unavailable("softmax_native.cc")
pytestmark = pytest.mark.skipif(bool(_UNAVAILABLE) and not _UNAVAILABLE.startswith("building"), reason=_UNAVAILABLE)


def test_the_kernels_build_where_a_compiler_is():
    assert softmax_native.available()


def _xla(function):
    return jax.jit(function, compiler_options=compiler.cpu_options())


# the MNIST head, a single class, odd row lengths, the largest arrays the kernels take, more than
# two axes, and huge logits (exp's clamps)
@pytest.mark.parametrize("shape, scale", [((128, 10), 5.0), ((7, 1), 1.0), ((3, 5, 17), 50.0), ((409, 10), 3.0),
                                          ((129, 31), 3.0), ((4, 31), 1e4)], ids=str)
def test_forward_and_gradient_are_xla_bits(shape, scale):
    rng = np.random.default_rng(shape[-1])
    x = (rng.standard_normal(shape) * scale).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    native = jax.jit(lambda a: softmax_native.softmax(a, -1))
    assert "minikeras_softmax_forward" in native.lower(x).as_text()
    expected = np.asarray(_xla(lambda a: jax.nn.softmax(a, axis=-1))(x))
    np.testing.assert_array_equal(np.asarray(native(x)).view(np.uint32), expected.view(np.uint32))
    expected_grad = _xla(lambda y, h: y * (h - jnp.sum(h * y, axis=-1, keepdims=True)))(expected, g)
    got_grad = jax.jit(lambda y, h: softmax_native.softmax_gradient(y, h, -1))(expected, g)
    np.testing.assert_array_equal(np.asarray(got_grad).view(np.uint32), np.asarray(expected_grad).view(np.uint32))


def test_nan_and_infinite_logits_give_what_jax_gives():
    x = np.array([[0.0, np.nan, 1.0], [np.inf, 0.0, 1.0], [-np.inf, 0.0, 1.0], [-1e30, 1e30, 0.0]], np.float32)
    expected = np.asarray(_xla(lambda a: jax.nn.softmax(a, axis=-1))(x))
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: softmax_native.softmax(a, -1))(x)), expected)


def test_long_rows_big_arrays_other_axes_and_dtypes_keep_jax_code():
    for shape, axis, dtype in [((4, tuning.SOFTMAX_NATIVE_MAX_ROW), -1, jnp.float32), ((10, 4), 0, jnp.float32),
                               ((4, 10), -1, jnp.bfloat16), ((tuning.SOFTMAX_NATIVE_MAX_ELEMENTS // 8, 8), -1, jnp.float32)]:
        x = jnp.ones(shape, dtype)
        text = jax.jit(lambda a: softmax_native.softmax(a, axis)).lower(x).as_text()
        assert "minikeras_softmax" not in text, (shape, axis, dtype)


def _jax_softmax_loss(x, w):
    # squared, so that the cotangent reaching softmax depends on x: the second derivative then
    # goes through the gradient op's rule in both its inputs
    return jnp.sum(jax.nn.softmax(x, axis=-1) ** 2 * w)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "mk.function"])
def test_first_and_second_derivatives_match_jax(compiled):
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((6, 10)).astype(np.float32)
    w = rng.standard_normal((6, 10)).astype(np.float32)
    v = rng.standard_normal((6, 10)).astype(np.float32)

    def derivatives(x):
        with mk.GradientTape() as outer:
            outer.watch(x)
            with mk.GradientTape() as inner:
                inner.watch(x)
                loss = mk.reduce_sum(mk.square(mk.nn.softmax(x)) * w)
            grad = inner.gradient(loss, x)
            directional = mk.reduce_sum(grad * v)
        return grad, outer.gradient(directional, x)

    run = mk.function(derivatives) if compiled else derivatives
    grad, hvp = run(mk.constant(x0))
    expected_grad = jax.grad(_jax_softmax_loss)(x0, w)
    expected_hvp = jax.grad(lambda x: jnp.sum(jax.grad(_jax_softmax_loss)(x, w) * v))(x0)
    np.testing.assert_allclose(grad.numpy(), expected_grad, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hvp.numpy(), expected_hvp, rtol=1e-4, atol=1e-5)
