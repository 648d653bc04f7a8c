"""The sum over leading axes of wide rows as a product with ones (``xla_cpu.wide_sum``), used for
gradients of broadcasts (a Dense bias over many units): values against NumPy's float64 sums,
a Dense bias gradient and its second derivative against jax, and where it applies."""
import jax
import jax.numpy as jnp
import numpy as np

import minikeras as mk
from minikeras.xla_cpu import wide_sum


def test_leading_sum_is_the_sum_over_the_leading_axes():
    rng = np.random.default_rng(0)
    for shape, n_leading in [((300, 4096), 1), ((4, 75, 5000), 2), ((6, 2, 64, 64), 2)]:
        x = rng.standard_normal(shape).astype(np.float32)
        assert wide_sum.supported(shape, n_leading, np.float32)
        got = np.asarray(jax.jit(wide_sum.leading_sum, static_argnums=1)(x, n_leading))
        np.testing.assert_allclose(got, x.astype(np.float64).sum(axis=tuple(range(n_leading))), rtol=1e-5, atol=2e-5)


def test_where_it_applies():
    assert not wide_sum.supported((300, 4095), 1, np.float32)  # narrow rows: YNNPACK's reduction
    assert not wide_sum.supported((300, 4096), 1, np.float16)
    assert not wide_sum.supported((1, 8192), 1, np.float32)  # nothing to sum
    assert not wide_sum.supported((300, 4096), 0, np.float32)


def test_a_wide_dense_bias_gradient_and_its_derivative_match_jax():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 50, 8)).astype(np.float32)
    w = rng.standard_normal((8, 4096)).astype(np.float32)
    b = rng.standard_normal((4096,)).astype(np.float32)
    weights = (rng.standard_normal((3, 50, 4096)) / 50).astype(np.float32)

    def reference(b):
        return jnp.sum(jnp.tanh(x @ w + b) * weights)

    bias = mk.Variable(b)

    def gradients():
        with mk.GradientTape() as outer:
            with mk.GradientTape() as inner:
                loss = mk.reduce_sum(mk.tanh(mk.matmul(x, w) + bias) * weights)
            grad = inner.gradient(loss, bias)
            second = mk.reduce_sum(grad * grad)
        return grad, outer.gradient(second, bias)

    wide = mk.function(gradients)
    grad, second = wide()
    np.testing.assert_allclose(grad.numpy(), jax.grad(reference)(b), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(second.numpy(), jax.grad(lambda b: jnp.sum(jax.grad(reference)(b) ** 2))(b),
                               rtol=1e-4, atol=1e-5)
    # the bias gradient is the product, and so is the sum in the second derivative (broadcast_to's
    # gradient): two dot_generals where the reduction has none (x @ w is folded: both constants)
    saved, wide_sum.MIN_COLUMNS = wide_sum.MIN_COLUMNS, 1 << 30
    try:
        reduced = str(mk.function(gradients).get_concrete_function().jaxpr)
    finally:
        wide_sum.MIN_COLUMNS = saved
    assert str(wide.get_concrete_function().jaxpr).count("dot_general") == reduced.count("dot_general") + 2
