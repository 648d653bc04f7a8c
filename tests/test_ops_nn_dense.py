"""ops.nn_dense.dense_bias (x @ kernel + bias as one op, the kernel and bias gradients from one
native pass over g) and the Dense layer that calls it, against jax.grad of the plain formula."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk
from minikeras.ops import nn_dense
from minikeras.xla_cpu import matmul_native, tuning

X = np.random.default_rng(0).standard_normal((24, 8)).astype(np.float32)
KERNEL = np.random.default_rng(1).standard_normal((8, 32)).astype(np.float32) * 0.3
BIAS = np.random.default_rng(2).standard_normal(32).astype(np.float32)


@pytest.fixture(params=["native", "xla", "wide"])
def kernel_on(request, monkeypatch):
    """Whether the native kernel takes every size here ("native"), none ("xla"), or none since
    32 columns count as wide ("wide": XLA's dot with a column of ones); its calls are counted."""
    if request.param == "native" and not matmul_native.available():
        pytest.skip("matmul_native.cc could not be built here")
    monkeypatch.setattr(tuning, "MATMUL_NATIVE_FLOPS", 0 if request.param != "xla" else 10 ** 15)
    if request.param == "wide":
        monkeypatch.setattr(matmul_native, "MAX_COLUMNS", 32)
    calls = []
    monkeypatch.setattr(matmul_native, "_native_sums", _counting(matmul_native._native_sums, calls))
    return request.param == "native", calls


def _loss(x, kernel, bias):
    return jnp.sum(jnp.tanh(x @ kernel + bias) ** 2)


def _loss_mk(x, kernel, bias):
    return mk.reduce_sum(mk.tanh(nn_dense.dense_bias(x, kernel, bias)) ** 2)


def _close(ours, theirs, what, tol=2e-5):
    scale = max(1.0, float(np.abs(theirs).max()))
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=tol, atol=tol * scale, err_msg=what)


def test_value_is_the_product_plus_the_bias(kernel_on):
    _close(nn_dense.dense_bias(X, KERNEL, BIAS).numpy(), X @ KERNEL + BIAS, "x @ kernel + bias")


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "mk.function"])
def test_first_order_gradients(kernel_on, compiled):
    variables = [mk.Variable(KERNEL), mk.Variable(BIAS)]
    x = mk.constant(X)

    def grads(x):
        with mk.GradientTape() as tape:
            tape.watch(x)
            loss = _loss_mk(x, *variables)
        return tape.gradient(loss, [x, *variables])

    ours = (mk.function(grads) if compiled else grads)(x)
    native, calls = kernel_on
    assert bool(calls) == native, "the kernel and bias gradients from one native call"
    theirs = jax.grad(_loss, argnums=(0, 1, 2))(X, KERNEL, BIAS)
    for name, a, b in zip(["dx", "dkernel", "dbias"], ours, theirs):
        _close(a.numpy(), b, name)


def test_second_order_gradients(kernel_on):
    x, kernel, bias = mk.constant(X), mk.Variable(KERNEL), mk.Variable(BIAS)
    with mk.GradientTape() as outer:
        outer.watch(x)
        with mk.GradientTape() as tape:
            tape.watch(x)
            loss = _loss_mk(x, kernel, bias)
        grads = tape.gradient(loss, [x, kernel, bias])
        norm = sum(mk.reduce_sum(g * g) for g in grads)
    ours = outer.gradient(norm, [x, kernel, bias])

    def norm_jax(x, kernel, bias):
        return sum(jnp.sum(g * g) for g in jax.grad(_loss, argnums=(0, 1, 2))(x, kernel, bias))

    theirs = jax.grad(norm_jax, argnums=(0, 1, 2))(X, KERNEL, BIAS)
    for name, a, b in zip(["d2x", "d2kernel", "d2bias"], ours, theirs):
        _close(a.numpy(), b, name, tol=1e-4)


def test_applies_to_float32_matrices_only():
    assert nn_dense.applies(mk.constant(X), mk.constant(KERNEL), mk.constant(BIAS))
    assert not nn_dense.applies(mk.constant(X[None]), mk.constant(KERNEL), mk.constant(BIAS))
    assert not nn_dense.applies(mk.cast(X, "bfloat16"), mk.constant(KERNEL), mk.constant(BIAS))
    assert not nn_dense.applies(mk.constant(X), mk.constant(KERNEL), mk.constant(BIAS[:16]))


def _counting(forward, calls):
    def counted(*args, **kwargs):
        calls.append(1)
        return forward(*args, **kwargs)
    return counted


@pytest.mark.parametrize("shape", [(24, 8), (3, 8, 8)], ids=["2-D", "3-D"])
def test_dense_layer_runs_as_one_op_with_the_plain_gradients(kernel_on, shape, monkeypatch):
    calls = []
    monkeypatch.setattr(nn_dense._dense_bias, "forward", _counting(nn_dense._dense_bias.forward, calls))
    layer = mk.layers.Dense(32, activation="tanh")
    x = mk.constant(X.reshape(shape))
    layer(x)
    layer.set_weights([KERNEL, BIAS])

    @mk.function
    def grads(x):
        with mk.GradientTape() as tape:
            tape.watch(x)
            loss = mk.reduce_sum(mk.square(layer(x)))
        return tape.gradient(loss, [x, layer.kernel, layer.bias])

    ours = grads(x)
    assert calls, "Dense ran dense_bias"
    theirs = jax.grad(lambda x, k, b: jnp.sum(jnp.tanh(x @ k + b) ** 2), argnums=(0, 1, 2))(
        X.reshape(shape), KERNEL, BIAS)
    for name, a, b in zip(["dx", "dkernel", "dbias"], ours, theirs):
        _close(a.numpy(), b, name)


def test_dense_without_bias_or_in_bfloat16_keeps_the_separate_ops(monkeypatch):
    calls = []
    monkeypatch.setattr(nn_dense._dense_bias, "forward", _counting(nn_dense._dense_bias.forward, calls))
    no_bias = mk.layers.Dense(32, use_bias=False)
    _close(no_bias(X).numpy(), X @ no_bias.kernel.numpy(), "no bias")
    low = mk.layers.Dense(32, dtype="mixed_bfloat16")
    out = low(X)
    assert out.dtype == jnp.bfloat16 and out.shape == (24, 32)
    assert not calls
