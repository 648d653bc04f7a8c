"""minikeras.xla_cpu.matmul_native: a.T @ b on the native kernel, against jnp."""
import jax
import jax.numpy as jnp
import pytest
from xla_cpu_reference import close, rand

from minikeras.xla_cpu import matmul_native, tuning
from minikeras.xla_cpu.matmul_native import matmul_nn, matmul_tn, matmul_tn_and_column_sums

needs_build = pytest.mark.skipif(not matmul_native.available(), reason="matmul_native.cc could not be built here")


@pytest.fixture
def every_size(monkeypatch):
    monkeypatch.setattr(tuning, "MATMUL_NATIVE_FLOPS", 0)
    monkeypatch.setattr(matmul_native, "MAX_COLUMNS", 1 << 30)


@needs_build
@pytest.mark.parametrize("k,m,n", [(128, 200, 128), (7, 13, 16), (1, 5, 48), (33, 97, 112), (300, 6, 64),
                                   (600, 100, 528)])  # several blocks of C and slices of the batch
def test_matches_jnp(every_size, k, m, n):
    a, b = rand((k, m), k), rand((k, n), m)
    assert matmul_native.supported(a.shape, b.shape, a.dtype)
    close(jax.jit(matmul_tn)(a, b), a.T @ b, "a.T @ b", tol=1e-5)


def test_shapes_it_does_not_take_go_to_xla(every_size, monkeypatch):
    a, b = rand((9, 5), 1), rand((9, 10), 2)  # 10 columns: not a multiple of 16
    assert not matmul_native.supported(a.shape, b.shape, a.dtype)
    monkeypatch.setattr(matmul_native, "MAX_COLUMNS", 32)
    assert matmul_native.supported((9, 5), (9, 16), jnp.float32)
    assert not matmul_native.supported((9, 5), (9, 32), jnp.float32)  # MAX_COLUMNS: XLA's dot
    assert not matmul_native.supported((9, 5), (9, 16), jnp.bfloat16)
    close(matmul_tn(a, b), a.T @ b, "fallback")


@needs_build
def test_derivatives_first_and_second_order(every_size):
    a, b = rand((20, 7), 3), rand((20, 32), 4)
    ta, tb = rand(a.shape, 5), rand(b.shape, 6)

    def loss(f):
        return lambda a, b: jnp.sum(jnp.tanh(f(a, b)) ** 2)

    def hvp(f):
        g = jax.grad(loss(f), argnums=(0, 1))
        return jax.grad(lambda a, b: jnp.vdot(g(a, b)[0], ta) + jnp.vdot(g(a, b)[1], tb), argnums=(0, 1))(a, b)

    ref = lambda a, b: a.T @ b  # noqa: E731
    for ours, theirs in zip(jax.grad(loss(matmul_tn), argnums=(0, 1))(a, b), jax.grad(loss(ref), argnums=(0, 1))(a, b)):
        close(ours, theirs, "gradient")
    for ours, theirs in zip(hvp(matmul_tn), hvp(ref)):
        close(ours, theirs, "Hessian-vector product", tol=1e-4)


@needs_build
def test_under_vmap(every_size):
    a, b = rand((3, 10, 4), 7), rand((3, 10, 16), 8)
    close(jax.vmap(matmul_tn)(a, b), jnp.einsum("bkm,bkn->bmn", a, b), "vmap")


# -- (a.T @ b, b.sum(0)) (a Dense layer's kernel and bias gradients in one pass) ---------------------
@needs_build
@pytest.mark.parametrize("k,m,n", [(128, 200, 128), (7, 13, 16), (1, 5, 48), (600, 100, 528), (300, 97, 1040)])
def test_column_sums_beside_the_product(every_size, k, m, n):  # several row and column blocks, batch slices
    a, b = rand((k, m), k), rand((k, n), m)
    product, sums = jax.jit(matmul_tn_and_column_sums)(a, b)
    assert (product == jax.jit(matmul_tn)(a, b)).all(), "the product's bits are matmul_tn's"
    close(sums, jnp.sum(b, axis=0), "b.sum(0)", tol=1e-5)


@needs_build
def test_column_sums_of_empty_operands(every_size):
    product, sums = matmul_tn_and_column_sums(jnp.zeros((0, 3)), jnp.zeros((0, 16)))  # no rows: zeros
    assert product.shape == (3, 16) and not product.any() and sums.shape == (16,) and not sums.any()
    b = rand((5, 32), 1)
    product, sums = jax.jit(matmul_native._native_sums)(jnp.zeros((5, 0)), b)  # a product with no rows
    assert product.shape == (0, 32)
    close(sums, jnp.sum(b, axis=0), "b.sum(0) beside an empty product")


@pytest.mark.parametrize("n", [10, 4096])  # not a multiple of 16; wide (XLA's dot, wide_sum's sum)
def test_column_sums_where_the_kernel_does_not_apply(n):
    a, b = rand((9, 5), 1), rand((9, n), 2)
    assert not matmul_native.supported(a.shape, b.shape, a.dtype)
    product, sums = matmul_tn_and_column_sums(a, b)
    close(product, a.T @ b, "fallback product")
    close(sums, jnp.sum(b, axis=0), "fallback sums")


@needs_build
def test_column_sums_derivatives_first_and_second_order(every_size):
    a, b = rand((20, 7), 3), rand((20, 32), 4)
    ta, tb = rand(a.shape, 5), rand(b.shape, 6)

    def loss(f):
        def value(a, b):
            product, sums = f(a, b)
            return jnp.sum(jnp.tanh(product) ** 2) + jnp.sum(jnp.sin(sums))
        return value

    def hvp(f):
        g = jax.grad(loss(f), argnums=(0, 1))
        return jax.grad(lambda a, b: jnp.vdot(g(a, b)[0], ta) + jnp.vdot(g(a, b)[1], tb), argnums=(0, 1))(a, b)

    ref = lambda a, b: (a.T @ b, jnp.sum(b, axis=0))  # noqa: E731
    ours_first = jax.grad(loss(matmul_tn_and_column_sums), argnums=(0, 1))(a, b)
    for ours, theirs in zip(ours_first, jax.grad(loss(ref), argnums=(0, 1))(a, b)):
        close(ours, theirs, "gradient")
    for ours, theirs in zip(hvp(matmul_tn_and_column_sums), hvp(ref)):
        close(ours, theirs, "Hessian-vector product", tol=1e-4)


@needs_build
def test_column_sums_under_vmap(every_size):
    a, b = rand((3, 10, 4), 7), rand((3, 10, 16), 8)
    product, sums = jax.vmap(matmul_tn_and_column_sums)(a, b)
    close(product, jnp.einsum("bkm,bkn->bmn", a, b), "vmap product")
    close(sums, jnp.sum(b, axis=1), "vmap sums")


# -- a @ b (matmul_nn: a recurrent layer's backward step) ---------------------------------------------
@pytest.fixture
def every_nn_size(monkeypatch):  # and every CPU: the kernel's code for AVX2 is tested too
    monkeypatch.setattr(tuning, "MATMUL_NN_NATIVE_FLOPS", 0)
    monkeypatch.setattr(tuning, "MATMUL_NN_NATIVE_NEEDS_AVX512", False)


@needs_build
@pytest.mark.parametrize("m,k,n", [(64, 512, 128), (13, 7, 16), (1, 1, 48), (25, 33, 112), (7, 300, 528)])
def test_nn_matches_xla(every_nn_size, m, k, n):  # row tiles with remainders, every panel width, blocks of columns
    a, b = rand((m, k), k), rand((k, n), m)
    assert matmul_native.supported_nn(a.shape, b.shape, a.dtype)
    close(jax.jit(matmul_nn)(a, b), a @ b, "a @ b", tol=1e-5)


def test_nn_shapes_it_does_not_take_go_to_xla(every_nn_size):
    a, b = rand((5, 9), 1), rand((9, 10), 2)
    assert not matmul_native.supported_nn(a.shape, b.shape, a.dtype)
    assert not matmul_native.supported_nn((5, 9), (9, 16), jnp.bfloat16)
    close(matmul_nn(a, b), a @ b, "fallback")


@needs_build
def test_nn_derivatives_first_and_second_order(every_nn_size):
    a, b = rand((7, 20), 3), rand((20, 32), 4)
    ta, tb = rand(a.shape, 5), rand(b.shape, 6)

    def loss(f):
        return lambda a, b: jnp.sum(jnp.tanh(f(a, b)) ** 2)

    def hvp(f):
        g = jax.grad(loss(f), argnums=(0, 1))
        return jax.grad(lambda a, b: jnp.vdot(g(a, b)[0], ta) + jnp.vdot(g(a, b)[1], tb), argnums=(0, 1))(a, b)

    ref = lambda a, b: a @ b  # noqa: E731
    for ours, theirs in zip(jax.grad(loss(matmul_nn), argnums=(0, 1))(a, b), jax.grad(loss(ref), argnums=(0, 1))(a, b)):
        close(ours, theirs, "gradient")
    for ours, theirs in zip(hvp(matmul_nn), hvp(ref)):
        close(ours, theirs, "Hessian-vector product", tol=1e-4)


@needs_build
def test_nn_under_vmap(every_nn_size):
    a, b = rand((3, 4, 10), 7), rand((3, 10, 16), 8)
    close(jax.vmap(matmul_nn)(a, b), jnp.einsum("bmk,bkn->bmn", a, b), "vmap")
