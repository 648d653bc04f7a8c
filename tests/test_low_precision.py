"""bfloat16 matmuls and convolutions (xla_cpu.low_precision) against an emulated reference:
inputs rounded to bfloat16, products accumulated in float32, the result rounded to bfloat16.
Both paths run here: XLA's bfloat16 dot and the float32 kernels on widened inputs."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk
from minikeras.xla_cpu import low_precision, tuning

RNG = np.random.default_rng(0)


def bf16_array(*shape, scale=1.0):
    return jnp.asarray(RNG.standard_normal(shape) * scale, jnp.bfloat16)


def as_f32(x):
    return np.asarray(x, np.float32)


def emulated_matmul(a, b):
    return jnp.matmul(a.astype(jnp.float32), b.astype(jnp.float32)).astype(jnp.bfloat16)


def emulated_conv(x, w):
    return jax.lax.conv_general_dilated(x.astype(jnp.float32), w.astype(jnp.float32), (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC")).astype(jnp.bfloat16)


def close(got, want):
    # one bfloat16 rounding apart at most: the float32 sums may run in another order
    np.testing.assert_allclose(as_f32(got), as_f32(want), rtol=2 ** -7, atol=1e-6)


@pytest.fixture(params=["xla", "float32"])
def path(request, monkeypatch):
    if request.param == "xla" and not low_precision.bf16_hardware():
        monkeypatch.setattr(low_precision, "bf16_hardware", lambda: True)  # XLA still computes it, slowly
    monkeypatch.setattr(tuning, "BF16_DOT_ON_XLA", request.param == "xla")
    monkeypatch.setattr(low_precision, "_warned", [True])
    return request.param


def test_matmul_and_its_gradients(path):
    a, b = bf16_array(33, 70), bf16_array(70, 17)
    assert low_precision.dot_path(jnp.bfloat16) == path
    ta, tb = mk.Variable(a), mk.Variable(b)
    with mk.GradientTape() as tape:
        y = mk.matmul(ta, tb)
        loss = mk.reduce_sum(mk.cast(y, "float32") ** 2)
    assert y.dtype == mk.bfloat16
    close(y.numpy(), emulated_matmul(a, b))
    want = jax.grad(lambda a, b: jnp.sum(emulated_matmul(a, b).astype(jnp.float32) ** 2), (0, 1))(a, b)
    for got, expected in zip(tape.gradient(loss, [ta, tb]), want):
        assert got.dtype == mk.bfloat16
        close(got.numpy(), expected)
    close(mk.matmul(mk.Tensor(a), mk.Tensor(a), transpose_a=True).numpy(), emulated_matmul(a.T, a))
    close(mk.matmul(mk.Tensor(a), mk.Tensor(a), transpose_b=True).numpy(), emulated_matmul(a, a.T))


def test_conv2d_and_its_gradients(path):
    x, w = bf16_array(4, 12, 12, 16), bf16_array(3, 3, 16, 32, scale=0.2)
    tx, tw = mk.Variable(x), mk.Variable(w)
    with mk.GradientTape() as tape:
        y = mk.nn.conv2d(tx, tw, 1, "SAME")
        loss = mk.reduce_sum(mk.cast(y, "float32") ** 2)
    assert y.dtype == mk.bfloat16
    close(y.numpy(), emulated_conv(x, w))
    want = jax.grad(lambda x, w: jnp.sum(emulated_conv(x, w).astype(jnp.float32) ** 2), (0, 1))(x, w)
    for got, expected in zip(tape.gradient(loss, [tx, tw]), want):
        assert got.dtype == mk.bfloat16
        np.testing.assert_allclose(as_f32(got.numpy()), as_f32(expected), rtol=2 ** -6,
                                   atol=2 ** -7 * float(np.abs(as_f32(expected)).max()))


def test_conv2d_layer_under_mixed_bfloat16_inside_a_function(path):
    layer = mk.layers.Conv2D(32, 3, activation="relu", dtype="mixed_bfloat16")
    x = np.asarray(RNG.standard_normal((2, 10, 10, 16)), np.float32)
    y = mk.function(lambda x: layer(x))(x)
    kernel, bias = layer.kernel.numpy(), layer.bias.numpy()
    conv = jax.lax.conv_general_dilated(jnp.asarray(x, jnp.bfloat16).astype(jnp.float32),
                                        jnp.asarray(kernel, jnp.bfloat16).astype(jnp.float32), (1, 1), "VALID",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC")).astype(jnp.bfloat16)
    close(y.numpy(), jnp.maximum(conv + jnp.asarray(bias, jnp.bfloat16), 0))


def test_a_cpu_without_bf16_instructions_warns_once_naming_the_feature(monkeypatch):
    monkeypatch.setattr(low_precision, "bf16_hardware", lambda: False)
    monkeypatch.setattr(low_precision, "_warned", [])
    a = bf16_array(4, 4)
    with pytest.warns(UserWarning, match="lacks AVX512_BF16 and AMX"):
        close(mk.matmul(mk.Tensor(a), mk.Tensor(a)).numpy(), emulated_matmul(a, a))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mk.matmul(mk.Tensor(a), mk.Tensor(a))


def test_einsum_and_its_gradients(path):
    a, b = bf16_array(2, 7, 9), bf16_array(9, 3, 4)
    ta, tb = mk.Variable(a), mk.Variable(b)

    def emulated(a, b):
        return jnp.einsum("abc,cde->abde", a.astype(jnp.float32), b.astype(jnp.float32)).astype(jnp.bfloat16)
    with mk.GradientTape() as tape:
        y = mk.einsum("abc,cde->abde", ta, tb)
        loss = mk.reduce_sum(mk.cast(y, "float32") ** 2)
    assert y.dtype == mk.bfloat16
    close(y.numpy(), emulated(a, b))
    want = jax.grad(lambda a, b: jnp.sum(emulated(a, b).astype(jnp.float32) ** 2), (0, 1))(a, b)
    for got, expected in zip(tape.gradient(loss, [ta, tb]), want):
        assert got.dtype == mk.bfloat16
        close(got.numpy(), expected)
