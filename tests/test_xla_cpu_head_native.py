"""A classifier's head on native kernels (minikeras/xla_cpu/head_native.cc): the softmax and its
gradient against XLA's jax.nn.softmax, the sparse categorical cross-entropy's gradient against
the one-hot formula in ops, bit for bit, and first and second derivatives against jax."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk
from minikeras.xla_cpu import compiler, head_native, native_build, tuning

# Skipped where the kernels are off or cannot be built here (no compiler, another platform);
# a build that fails is a failure (as in test_xla_cpu_conv_native.py).
_UNAVAILABLE = "" if head_native.available() else native_build.why_unavailable("head_native.cc")
pytestmark = pytest.mark.skipif(bool(_UNAVAILABLE) and not _UNAVAILABLE.startswith("building"), reason=_UNAVAILABLE)


def test_the_kernels_build_where_a_compiler_is():
    assert head_native.available()


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
    native = jax.jit(lambda a: head_native.softmax(a, -1))
    assert "minikeras_softmax_forward" in native.lower(x).as_text()
    expected = np.asarray(_xla(lambda a: jax.nn.softmax(a, axis=-1))(x))
    np.testing.assert_array_equal(np.asarray(native(x)).view(np.uint32), expected.view(np.uint32))
    expected_grad = _xla(lambda y, h: y * (h - jnp.sum(h * y, axis=-1, keepdims=True)))(expected, g)
    got_grad = jax.jit(lambda y, h: head_native.softmax_gradient(y, h, -1))(expected, g)
    np.testing.assert_array_equal(np.asarray(got_grad).view(np.uint32), np.asarray(expected_grad).view(np.uint32))


def test_nan_and_infinite_logits_give_what_jax_gives():
    x = np.array([[0.0, np.nan, 1.0], [np.inf, 0.0, 1.0], [-np.inf, 0.0, 1.0], [-1e30, 1e30, 0.0]], np.float32)
    expected = np.asarray(_xla(lambda a: jax.nn.softmax(a, axis=-1))(x))
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: head_native.softmax(a, -1))(x)), expected)


def test_long_rows_big_arrays_other_axes_and_dtypes_keep_jax_code():
    for shape, axis, dtype in [((4, tuning.HEAD_NATIVE_MAX_CLASSES), -1, jnp.float32), ((10, 4), 0, jnp.float32),
                               ((4, 10), -1, jnp.bfloat16),
                               ((tuning.HEAD_NATIVE_MAX_ELEMENTS // 8, 8), -1, jnp.float32)]:
        x = jnp.ones(shape, dtype)
        text = jax.jit(lambda a: head_native.softmax(a, axis)).lower(x).as_text()
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


def _probabilities_and_labels(shape, seed=0, scale=4.0):
    rng = np.random.default_rng(seed)
    logits = (rng.standard_normal(shape) * scale).astype(np.float32)
    return np.asarray(jax.nn.softmax(logits, -1)), rng.integers(0, shape[-1], shape[:-1]).astype(np.int32)


def _loss_and_gradient(loss_of):
    @mk.function
    def run(p):
        with mk.GradientTape() as tape:
            tape.watch(p)
            loss = mk.reduce_mean(loss_of(p))
        return loss, tape.gradient(loss, p)
    return run


@pytest.mark.parametrize("shape", [(128, 10), (7, 3), (3, 5, 17), (409, 10)], ids=str)
def test_crossentropy_gradient_is_the_one_hot_formulas_to_the_bit(shape):
    """What a training step computes from the sparse loss (native) and from the categorical loss on
    one-hot labels (the same formula in ops, compiled by XLA): the same gradient bits, the same
    loss to the last bit or two (the native log is the C library's)."""
    p, labels = _probabilities_and_labels(shape)
    one_hot = np.eye(shape[-1], dtype=np.float32)[labels]
    sparse = _loss_and_gradient(lambda q: mk.losses.sparse_categorical_crossentropy(labels, q))
    dense = _loss_and_gradient(lambda q: mk.losses.categorical_crossentropy(one_hot, q))
    (loss, grad), (expected_loss, expected_grad) = sparse(mk.constant(p)), dense(mk.constant(p))
    (program,) = sparse.programs()
    assert "minikeras_sparse_crossentropy_gradient" in str(program.jaxpr)
    np.testing.assert_array_equal(grad.numpy().view(np.uint32), expected_grad.numpy().view(np.uint32))
    np.testing.assert_allclose(loss.numpy(), expected_loss.numpy(), rtol=3e-7)


def test_crossentropy_clips_and_ignores_labels_as_keras():
    p = np.array([[1.0, 0.0, 0.0], [0.2, 0.3, 0.5], [0.0, 1.0, 0.0]], np.float32)
    labels = np.array([1, 2, 1], np.int32)  # a probability of 0 (clipped to 1e-7), one of 1
    expected = -np.log(np.clip(p[np.arange(3), labels], 1e-7, 1 - 1e-7))
    compiled = mk.function(lambda q: mk.losses.sparse_categorical_crossentropy(labels, q))
    np.testing.assert_allclose(compiled(mk.constant(p)).numpy(), expected, rtol=1e-6)
    loss = mk.losses.SparseCategoricalCrossentropy(ignore_class=2)
    np.testing.assert_allclose(mk.function(lambda q: loss(labels, q))(mk.constant(p)).numpy(),
                               (expected[0] + expected[2]) / 2, rtol=1e-6)


def test_crossentropy_second_derivatives_match_jax():
    p0, labels = _probabilities_and_labels((5, 4), seed=3, scale=0.5)  # no tiny p: 1/q^2 terms stay tame
    v = np.random.default_rng(4).standard_normal((5, 4)).astype(np.float32)

    def jax_loss(p):
        q = jnp.clip(p / jnp.sum(p, -1, keepdims=True), 1e-7, 1 - 1e-7)
        return -jnp.mean(jnp.log(q[jnp.arange(5), labels]))

    @mk.function
    def hvp(p):
        with mk.GradientTape() as outer:
            outer.watch(p)
            with mk.GradientTape() as inner:
                inner.watch(p)
                loss = mk.reduce_mean(mk.losses.sparse_categorical_crossentropy(labels, p))
            directional = mk.reduce_sum(inner.gradient(loss, p) * v)
        return outer.gradient(directional, p)

    expected = jax.grad(lambda p: jnp.sum(jax.grad(jax_loss)(p) * v))(p0)
    np.testing.assert_allclose(hvp(mk.constant(p0)).numpy(), expected, rtol=1e-4, atol=1e-5)


def test_crossentropy_off_the_kernels_is_the_same_formula():
    p, labels = _probabilities_and_labels((6, 5), seed=5)
    g = np.linspace(0.5, 2.0, 6).astype(np.float32)
    native = (jax.jit(head_native.sparse_crossentropy)(p, labels),
              jax.jit(head_native.sparse_crossentropy_gradient)(p, labels, g))
    original = tuning.NATIVE_KERNELS
    tuning.NATIVE_KERNELS = False
    try:
        loss = jax.jit(lambda a, b: head_native.sparse_crossentropy(a, b))
        assert "minikeras_sparse" not in loss.lower(p, labels).as_text()
        gradient = jax.jit(lambda a, b, c: head_native.sparse_crossentropy_gradient(a, b, c))
        fallback = (loss(p, labels), gradient(p, labels, g))
    finally:
        tuning.NATIVE_KERNELS = original
    np.testing.assert_allclose(np.asarray(native[0]), np.asarray(fallback[0]), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(native[1]), np.asarray(fallback[1]), rtol=1e-6, atol=1e-9)
