"""minikeras.xla_cpu.pool against ``lax.reduce_window`` and its ``jax.vjp`` (ties included)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from xla_cpu_reference import close as _close, rand as _rand

from minikeras.xla_cpu import pool

# -- pooling ----------------------------------------------------------------------------------
POOLS = [  # h, w, ksize, strides, padding
    (8, 8, (2, 2), (2, 2), "VALID"), (7, 9, (2, 2), (2, 2), "SAME"), (9, 8, (3, 3), (2, 2), "SAME"),
    (6, 7, (2, 3), (1, 2), "VALID"), (7, 8, (2, 3), (2, 3), "SAME")]


@pytest.mark.parametrize("case", POOLS, ids=lambda c: f"{c[0]}x{c[1]}-k{c[2][0]}{c[2][1]}-s{c[3][0]}{c[3][1]}-{c[4]}")
def test_pooling_matches_reduce_window(case):
    h, w, ksize, strides, padding = case
    window, steps = (1, *ksize, 1), (1, *strides, 1)

    def ref_max(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, window, steps, padding)

    def ref_avg(x):
        ones = jnp.ones((1, h, w, 1), x.dtype)
        return (lax.reduce_window(x, 0.0, lax.add, window, steps, padding)
                / lax.reduce_window(ones, 0.0, lax.add, window, steps, padding))

    @jax.jit
    def run(x, dy, g):
        y, max_vjp = jax.vjp(ref_max, x)
        ya, avg_vjp = jax.vjp(ref_avg, x)
        ref = (y, max_vjp(dy)[0], jax.jvp(ref_max, (x,), (g,))[1], ya, avg_vjp(dy)[0])
        ours = (pool.max_pool2d_forward(x, ksize, strides, padding),
                pool.max_pool2d_grad(x, dy, ksize, strides, padding),
                pool.max_pool2d_grad_grad(x, g, ksize, strides, padding),
                pool.avg_pool2d_forward(x, ksize, strides, padding),
                pool.avg_pool2d_grad(dy, x.shape, ksize, strides, padding))
        return ref, ours

    x = _rand((2, h, w, 3), 30)
    y_shape = jax.eval_shape(ref_max, x).shape
    dy, g = _rand(y_shape, 31), _rand(x.shape, 32)
    for ties in (False, True):
        if ties:  # integer-valued floats: many windows hold their maximum more than once
            x = jnp.round(x * 1.5)
        (y, dx, gg, ya, dxa), (my, mdx, mgg, ay, adx) = run(x, dy, g)
        what = " (ties)" if ties else ""
        _close(my, y, "max pool" + what)
        _close(mdx, dx, "max pool gradient" + what)
        # grad_grad is the transpose of grad: <grad(dy), g> == <dy, grad_grad(g)>
        np.testing.assert_allclose(float(jnp.vdot(mdx, g)), float(jnp.vdot(dy, mgg)), rtol=1e-5, atol=1e-5)
        if not ties:  # with ties, jax's own jvp and vjp of reduce_window pick different elements
            _close(mgg, gg, "max pool gradient's gradient")
        _close(ay, ya, "avg pool" + what)
        _close(adx, dxa, "avg pool gradient" + what)


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
@pytest.mark.parametrize("h, w, ksize, padding", [
    (8, 8, (2, 2), "VALID"), (7, 9, (2, 2), "SAME"), (7, 8, (2, 3), "SAME"), (9, 10, (3, 3), "VALID")])
def test_narrow_float_max_pool_gradient_is_jax_exactly(h, w, ksize, padding, dtype):
    """bfloat16 and float16 windows that tile x: each window's first-maximum index is computed once
    (in bytes); the gradient is jax's select_and_scatter to the bit, ties included."""
    x = jnp.round(_rand((2, h, w, 20), 40) * 1.5).astype(dtype)  # integer values: many ties
    window = (1, *ksize, 1)

    def ref_max(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, window, window, padding)
    y, vjp = jax.vjp(ref_max, x)
    dy = _rand(y.shape, 41).astype(dtype)
    got = jax.jit(lambda x, dy: pool.max_pool2d_grad(x, dy, ksize, ksize, padding))(x, dy)
    assert got.dtype == dtype
    np.testing.assert_array_equal(np.asarray(got, np.float32), np.asarray(vjp(dy)[0], np.float32))
