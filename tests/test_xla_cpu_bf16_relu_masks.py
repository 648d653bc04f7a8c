"""The ReLU masks of a bfloat16 CNN's backward pass applied by the kernels that write the masked
arrays: the max-pool gradient (``conv_bf16_native.max_pool_grad``, ``tuning.BF16_MAX_POOL_GRAD_NATIVE``)
and the convolution input gradient's epilogue (``input_grad(..., relu_mask=)``,
``tuning.BF16_CONV_INPUT_GRAD_RELU_MASK``). Each gives the bits of the XLA formulation it replaces
(jax's own max-pool gradient; ``keep_where(out > 0, dx)``), in isolation, under ``jax.vjp`` and
in a mixed_bfloat16 model's tape gradients."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk
from minikeras.xla_cpu import conv, conv_bf16_native, pool, tuning
from minikeras.xla_cpu.low_precision import keep_where

RNG = np.random.default_rng(7)

pytestmark = pytest.mark.skipif(not conv_bf16_native.available(),
                                reason="bfloat16 kernels unavailable (a CPU without AVX512_BF16)")


def bits(a):
    return np.asarray(jax.lax.bitcast_convert_type(a, jnp.int16))


def pool_input(shape, nan=False):
    """bfloat16 values with ties, whole windows of zeros and negative windows (some channels
    through a ReLU); a NaN where asked."""
    x = RNG.standard_normal(shape).astype(np.float32)
    x[0, :2, :2, :] = 0.0  # a window of tied zeros
    x[0, 2:4, :2, :] = 1.5  # a window of tied maxima
    x[..., ::3] = np.maximum(x[..., ::3], 0)
    if nan:
        x[-1, 1, 0, 0] = np.nan
    return jnp.asarray(x, jnp.bfloat16)


@pytest.mark.parametrize("shape, ksize", [
    ((4, 24, 24, 64), (2, 2)),   # the MNIST CNN's pooling
    ((3, 7, 9, 5), (2, 2)),      # a cropped last row and column, channels past the last 16
    ((2, 6, 8, 48), (2, 2)),
    ((2, 9, 10, 3), (3, 3)),     # other windows: the kernel's general loop
    ((2, 6, 6, 16), (2, 3)),
])
def test_max_pool_grad_kernel_is_jax_exactly(shape, ksize):
    x = pool_input(shape)
    dy = jnp.asarray(RNG.standard_normal((shape[0], shape[1] // ksize[0], shape[2] // ksize[1], shape[3])),
                     jnp.bfloat16)
    window = (1, *ksize, 1)
    _, vjp = jax.vjp(lambda x: jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, window, window, "VALID"), x)
    want = vjp(dy)[0]
    got = jax.jit(lambda x, dy: conv_bf16_native.max_pool_grad(x, dy, ksize))(x, dy)
    np.testing.assert_array_equal(bits(got), bits(want))
    masked = jax.jit(lambda x, dy: conv_bf16_native.max_pool_grad(x, dy, ksize, positive=True))(x, dy)
    np.testing.assert_array_equal(bits(masked), bits(keep_where(x > 0, want)))


@pytest.mark.parametrize("positive", [False, True])
def test_max_pool_grad_kernel_keeps_the_xla_paths_bits_with_a_nan(positive, monkeypatch):
    x = pool_input((3, 8, 10, 32), nan=True)
    dy = jnp.asarray(RNG.standard_normal((3, 4, 5, 32)), jnp.bfloat16)
    monkeypatch.setattr(tuning, "BF16_MAX_POOL_GRAD_NATIVE", False)
    want = jax.jit(lambda x, dy: pool.max_pool2d_grad(x, dy, 2, 2, "VALID"))(x, dy)
    want = keep_where(x > 0, want) if positive else want
    got = jax.jit(lambda x, dy: conv_bf16_native.max_pool_grad(x, dy, (2, 2), positive))(x, dy)
    np.testing.assert_array_equal(bits(got), bits(want))


def test_max_pool_grad_through_the_kernel_differentiates_as_jax():
    """jax.vjp of the kernel's pool gradient in dy (its custom rule: the cotangent gathered at
    each window's first maximum) against jax.vjp of jax's own max-pool gradient."""
    x = pool_input((2, 8, 8, 32))
    dy = jnp.asarray(RNG.standard_normal((2, 4, 4, 32)), jnp.bfloat16)
    g = jnp.asarray(RNG.standard_normal(x.shape), jnp.bfloat16)
    window = (1, 2, 2, 1)

    def jax_pool_grad(dy):
        return jax.vjp(lambda x: jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, window, window, "VALID"), x)[1](dy)[0]

    want_out, want_vjp = jax.vjp(jax_pool_grad, dy)
    for positive in (False, True):
        out, vjp = jax.vjp(lambda dy: pool._native_grad(x, dy, (2, 2), positive), dy)
        mask = x > 0 if positive else jnp.ones(x.shape, bool)
        np.testing.assert_array_equal(bits(out), bits(keep_where(mask, want_out)))
        np.testing.assert_array_equal(bits(vjp(g)[0]), bits(want_vjp(keep_where(mask, g))[0]))


@pytest.mark.parametrize("dy_shape, w_shape, x_shape, pads", [
    ((4, 24, 24, 64), (3, 3, 32, 64), (4, 26, 26, 32), ((0, 0), (0, 0))),  # the MNIST CNN's
    ((2, 9, 9, 32), (3, 3, 16, 32), (2, 9, 9, 16), ((1, 1), (1, 1))),      # SAME
    ((2, 5, 7, 16), (3, 3, 48, 16), (2, 7, 9, 48), ((0, 0), (0, 0))),       # 1 and 2 vectors of channels
])
def test_input_grad_with_the_relu_mask_in_its_epilogue(dy_shape, w_shape, x_shape, pads):
    dy = jnp.asarray(RNG.standard_normal(dy_shape), jnp.bfloat16)
    w = jnp.asarray(RNG.standard_normal(w_shape) * 0.2, jnp.bfloat16)
    out = jnp.asarray(np.maximum(RNG.standard_normal(x_shape), 0), jnp.bfloat16).at[0, 0, 0, :3].set(jnp.nan)
    plain = jax.jit(lambda dy, w: conv_bf16_native.input_grad(dy, w, x_shape, pads))(dy, w)
    got = jax.jit(lambda dy, w, out: conv_bf16_native.input_grad(dy, w, x_shape, pads, relu_mask=out))(dy, w, out)
    np.testing.assert_array_equal(bits(got), bits(keep_where(out > 0, plain)))
    # and the emulated reference: the float32 convolution's transpose of the same values, rounded
    _, vjp = jax.vjp(lambda x: jax.lax.conv_general_dilated(x, w.astype(jnp.float32), (1, 1), pads,
                                                           dimension_numbers=("NHWC", "HWIO", "NHWC")),
                     jnp.zeros(x_shape, jnp.float32))
    want = keep_where(out > 0, vjp(dy.astype(jnp.float32))[0].astype(jnp.bfloat16))
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32), rtol=2 ** -7, atol=1e-6)


def test_masked_input_grad_differentiates_as_the_mask_after_it():
    """jax.vjp of the masked kernel in (dy, w) against float32 autodiff of the emulated reference
    (the same bfloat16 values, float32 sums): within a bfloat16 rounding of the largest entry."""
    dy = jnp.asarray(RNG.standard_normal((2, 6, 6, 32)), jnp.bfloat16)
    w = jnp.asarray(RNG.standard_normal((3, 3, 16, 32)) * 0.2, jnp.bfloat16)
    out = jnp.asarray(np.maximum(RNG.standard_normal((2, 8, 8, 16)), 0), jnp.bfloat16)
    g = jnp.asarray(RNG.standard_normal(out.shape), jnp.bfloat16)
    pads = ((0, 0), (0, 0))

    def reference(dy, w):
        def conv_of(x):
            return jax.lax.conv_general_dilated(x, w, (1, 1), pads, dimension_numbers=("NHWC", "HWIO", "NHWC"))
        dx = jax.vjp(conv_of, jnp.zeros(out.shape, jnp.float32))[1](dy)[0]
        return jnp.where(out > 0, dx, 0.0)

    _, fused = jax.vjp(lambda dy, w: conv._bf16_input_grad_relu_masked(dy, w, out, out.shape, pads), dy, w)
    _, want = jax.vjp(reference, dy.astype(jnp.float32), w.astype(jnp.float32))
    for got, expected in zip(fused(g), want(g.astype(jnp.float32))):
        expected = np.asarray(expected)
        np.testing.assert_allclose(np.asarray(got, np.float32), expected, rtol=2 ** -7,
                                   atol=2 ** -8 * float(np.abs(expected).max()))


def test_a_mixed_bfloat16_cnns_gradients_keep_their_bits_with_the_masks_in_the_kernels(monkeypatch):
    """Conv2D(relu) -> Conv2D(relu) -> MaxPooling2D -> Dense under mixed_bfloat16, tape gradients in
    mk.function, both switches off against on: the same bits, and the masked kernels called."""
    x = mk.constant(np.asarray(RNG.random((8, 12, 12, 1)), np.float32))
    labels = mk.constant(RNG.integers(0, 10, 8).astype(np.int32))
    calls = []
    pool_kernel, input_grad = conv_bf16_native.max_pool_grad, conv_bf16_native.input_grad
    monkeypatch.setattr(conv_bf16_native, "max_pool_grad",
                        lambda *a, **k: calls.append(("pool", bool(a[3:] and a[3]) or k.get("positive", False)))
                        or pool_kernel(*a, **k))
    monkeypatch.setattr(conv_bf16_native, "input_grad",
                        lambda *a, **k: calls.append(("input_grad", k.get("relu_mask") is not None))
                        or input_grad(*a, **k))
    results = {}
    for on in (False, True):
        monkeypatch.setattr(tuning, "BF16_MAX_POOL_GRAD_NATIVE", on)
        monkeypatch.setattr(tuning, "BF16_CONV_INPUT_GRAD_RELU_MASK", on)
        mk.random.set_seed(0)
        model = mk.Sequential([mk.Input((12, 12, 1)),
                               mk.layers.Conv2D(32, 3, activation="relu", dtype="mixed_bfloat16"),
                               mk.layers.Conv2D(64, 3, activation="relu", dtype="mixed_bfloat16"),
                               mk.layers.MaxPooling2D(2, dtype="mixed_bfloat16"),
                               mk.layers.Flatten(dtype="mixed_bfloat16"),
                               mk.layers.Dense(10, dtype="float32")])

        @mk.function
        def gradients(x, labels):
            with mk.GradientTape() as tape:
                logits = model(x)
                loss = mk.reduce_mean(mk.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
            return tape.gradient(loss, model.trainable_variables)

        calls.clear()
        results[on] = [g.numpy() for g in gradients(x, labels)]
        assert (("pool", True) in calls) == on and (("input_grad", True) in calls) == on
    for a, b in zip(results[False], results[True]):
        np.testing.assert_array_equal(a, b)
