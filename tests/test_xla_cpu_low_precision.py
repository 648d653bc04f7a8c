"""bfloat16 matmuls and convolutions (xla_cpu.low_precision, xla_cpu.conv_bf16_native) against an
emulated reference: inputs rounded to bfloat16, products accumulated in float32, the result
rounded to bfloat16. Every path runs here: XLA's bfloat16 dot and the float32 kernels on widened
inputs; for convolutions, the bfloat16 kernels (on a CPU with AVX512_BF16) and the widened ones."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk
from minikeras.xla_cpu import conv, conv_bf16_native, low_precision, matmul_bf16_native, tuning

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
    jax.clear_caches()  # eager ops keep their compiled forward per shape: else the other param's path ran again
    return request.param


@pytest.fixture(params=["bf16_native", "widened"])
def conv_path(request, monkeypatch):
    if request.param == "bf16_native" and not conv_bf16_native.available():
        pytest.skip(f"bfloat16 convolution kernels unavailable: {conv_bf16_native.unavailable_reason()}")
    monkeypatch.setattr(tuning, "BF16_CONV_NATIVE", request.param == "bf16_native")
    monkeypatch.setattr(tuning, "BF16_CONV_NATIVE_VENDORS", (low_precision.cpu_vendor(),))  # whatever the speed here
    monkeypatch.setattr(low_precision, "_warned", [True])
    jax.clear_caches()  # eager ops keep their compiled forward per shape: else the other param's path ran again
    return request.param


@pytest.fixture
def bf16_kernels(monkeypatch):
    """The bfloat16 convolution kernels chosen wherever they can run (skipped where they cannot)."""
    if not conv_bf16_native.available():
        pytest.skip(f"bfloat16 convolution kernels unavailable: {conv_bf16_native.unavailable_reason()}")
    monkeypatch.setattr(tuning, "BF16_CONV_NATIVE_VENDORS", (low_precision.cpu_vendor(),))


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


def test_conv2d_and_its_gradients(conv_path):
    x, w = bf16_array(4, 12, 12, 16), bf16_array(3, 3, 16, 32, scale=0.2)
    assert conv.bf16_native("forward", x.shape, w.shape, 1, "SAME") == (conv_path == "bf16_native")
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


def test_conv2d_layer_under_mixed_bfloat16_inside_a_function(conv_path):
    layer = mk.layers.Conv2D(32, 3, activation="relu", dtype="mixed_bfloat16")
    x = np.asarray(RNG.standard_normal((2, 10, 10, 16)), np.float32)
    y = mk.function(lambda x: layer(x))(x)
    kernel, bias = layer.kernel.numpy(), layer.bias.numpy()
    conv = jax.lax.conv_general_dilated(jnp.asarray(x, jnp.bfloat16).astype(jnp.float32),
                                        jnp.asarray(kernel, jnp.bfloat16).astype(jnp.float32), (1, 1), "VALID",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC")).astype(jnp.bfloat16)
    close(y.numpy(), jnp.maximum(conv + jnp.asarray(bias, jnp.bfloat16), 0))


def test_conv2d_relu_layer_gradients_under_mixed_bfloat16(conv_path):
    """Conv2D(activation='relu')'s three gradients (on the bfloat16 kernels the masked g is a
    buffer of its own) and second-order ones through the mask's own rule (the weights z of the
    loss reach the input gradient only through it), against the emulated reference. Biases of
    +-20 keep every sum far from zero, so that the mask is the same whatever the rounding, and
    half the channels are masked."""
    layer = mk.layers.Conv2D(32, 3, activation="relu", dtype="mixed_bfloat16")
    x = mk.Variable(np.asarray(RNG.standard_normal((2, 8, 8, 16)), np.float32))
    z = mk.Variable(np.asarray(RNG.standard_normal((2, 6, 6, 32)), np.float32))
    layer(x)
    layer.bias.assign(np.where(np.arange(32) % 2, 20.0, -20.0).astype(np.float32))
    kernel, bias = layer.kernel.numpy(), layer.bias.numpy()

    def loss(x, k, b, z):
        y = jax.lax.conv_general_dilated(x.astype(jnp.bfloat16).astype(jnp.float32),
                                         k.astype(jnp.bfloat16).astype(jnp.float32), (1, 1), "VALID",
                                         dimension_numbers=DN).astype(jnp.bfloat16)
        return jnp.sum(jnp.maximum(y + b.astype(jnp.bfloat16), 0).astype(jnp.float32) * z)

    @mk.function
    def gradients(x, z):
        with mk.GradientTape(persistent=True) as outer:
            with mk.GradientTape() as inner:
                value = mk.reduce_sum(mk.cast(layer(x), "float32") * z)
            dx, dk, db = inner.gradient(value, [x, layer.kernel, layer.bias])
            curvature = mk.reduce_sum(dx ** 2)
        return dx, dk, db, *outer.gradient(curvature, [z, layer.kernel])

    got = gradients(x, z)
    args = (x.numpy(), kernel, bias, z.numpy())
    curvature = jax.grad(lambda z, k: jnp.sum(jax.grad(loss)(x.numpy(), k, bias, z) ** 2), (0, 1))(z.numpy(), kernel)
    for g, expected in zip(got, (*jax.grad(loss, (0, 1, 2))(*args), *curvature)):
        assert g.dtype == mk.float32
        # a few bfloat16 roundings (of g, the sums, the bias gradient) of the largest values
        np.testing.assert_allclose(g.numpy(), expected, rtol=2 ** -5, atol=2 ** -5 * float(np.abs(expected).max()))


@pytest.mark.parametrize("x_shape, w_shape, pads", [
    ((3, 10, 9, 32), (3, 3, 32, 64), ((0, 0), (0, 0))),   # the MNIST CNN's second layer, odd width
    ((9, 8, 8, 1), (3, 3, 1, 32), ((1, 1), (1, 1))),      # one input channel, more images than parts
])
def test_bf16_filter_grad_kernel_sums_the_bias_gradient(x_shape, w_shape, pads):
    """filter_grad_and_bias: the filter gradient of filter_grad bit for bit, and dy summed over all
    but its last axis within one bfloat16 rounding of the float32 sum."""
    if not conv_bf16_native.available():
        pytest.skip(f"bfloat16 convolution kernels unavailable: {conv_bf16_native.unavailable_reason()}")
    (top, bottom), (left, right) = pads
    out_hw = (x_shape[1] + top + bottom - w_shape[0] + 1, x_shape[2] + left + right - w_shape[1] + 1)
    x, dy = bf16_array(*x_shape), bf16_array(x_shape[0], *out_hw, w_shape[3])
    dw, db = jax.jit(conv_bf16_native.filter_grad_and_bias, static_argnums=(2, 3))(x, dy, w_shape, pads)
    alone = jax.jit(conv_bf16_native.filter_grad, static_argnums=(2, 3))(x, dy, w_shape, pads)
    np.testing.assert_array_equal(as_f32(dw), as_f32(alone))
    assert db.dtype == jnp.bfloat16 and db.shape == (w_shape[3],)
    assert_within_bf16_rounding(db, jnp.sum(dy.astype(jnp.float32), axis=(0, 1, 2)).astype(jnp.bfloat16))
    # its jax vjp (the rules of conv.conv2d_filter_and_bias_grad) against the two ops'
    padding = "VALID" if pads == ((0, 0), (0, 0)) else "SAME"
    g_w, g_b = bf16_array(*w_shape), bf16_array(w_shape[3])
    fused = jax.vjp(lambda x, dy: conv.conv2d_filter_and_bias_grad(x, dy, w_shape, (1, 1), padding), x, dy)[1]
    separate = jax.vjp(lambda x, dy: (conv.conv2d_filter_grad(x, dy, w_shape, (1, 1), padding),
                                      jnp.sum(dy, axis=(0, 1, 2))), x, dy)[1]
    for got, want in zip(fused((g_w, g_b)), separate((g_w, g_b))):
        assert_within_bf16_rounding(got, want)


def test_conv2d_relu_first_order_gradients_with_the_bias_summed_in_the_kernel(monkeypatch):
    """A mixed_bfloat16 Conv2D(relu)'s gradients in mk.function (the backward pass on arrays) with
    the bias gradient summed by the filter-gradient kernel (tuning.BF16_CONV_BIAS_SUMS_IN_KERNEL)
    against the separate sum: input and kernel gradients bit for bit, the bias gradient within a
    bfloat16 rounding; and the kernel's call in the compiled step."""
    if not conv_bf16_native.available():
        pytest.skip(f"bfloat16 convolution kernels unavailable: {conv_bf16_native.unavailable_reason()}")
    x = mk.Variable(np.asarray(RNG.standard_normal((4, 10, 10, 16)), np.float32))
    z = np.asarray(RNG.standard_normal((4, 8, 8, 32)), np.float32)
    original = conv_bf16_native.filter_grad_and_bias
    calls = []
    monkeypatch.setattr(conv_bf16_native, "filter_grad_and_bias", lambda *a: calls.append(1) or original(*a))
    results = {}
    for in_kernel in (False, True):
        monkeypatch.setattr(tuning, "BF16_CONV_BIAS_SUMS_IN_KERNEL", in_kernel)
        mk.random.set_seed(0)
        layer = mk.layers.Conv2D(32, 3, activation="relu", dtype="mixed_bfloat16")

        @mk.function
        def gradients(x):
            with mk.GradientTape() as tape:
                value = mk.reduce_sum(mk.cast(layer(x), "float32") * z)
            return tape.gradient(value, [x, layer.kernel, layer.bias])

        calls.clear()
        results[in_kernel] = [g.numpy() for g in gradients(x)]
        assert bool(calls) == in_kernel
    (dx0, dk0, db0), (dx1, dk1, db1) = results[False], results[True]
    np.testing.assert_array_equal(dx1, dx0)
    np.testing.assert_array_equal(dk1, dk0)
    np.testing.assert_allclose(db1, db0, rtol=2 ** -7, atol=2 ** -8 * float(np.abs(db0).max()))


@pytest.mark.parametrize("x_shape, w_shape, pads", [
    ((2, 5, 24, 64), (3, 3, 64, 32), ((2, 2), (2, 2))),   # the MNIST CNN's input gradient (2 vectors)
    ((2, 4, 13, 32), (5, 5, 32, 16), ((4, 4), (4, 4))),   # more padding columns than a tile leaves out
    ((1, 3, 9, 16), (3, 3, 16, 64), ((1, 1), (0, 2))),    # uneven pads, 4 vectors
    ((1, 3, 3, 16), (3, 3, 16, 32), ((0, 0), (2, 2))),    # a tile narrower than the padding
])
def test_bf16_forward_kernel_leaves_out_padding_columns_with_the_same_bits(x_shape, w_shape, pads):
    """The kernel skips the products of taps whose columns fall on the zero padding: its result
    equals, bit for bit, the same kernel on x zero-padded beforehand (no padding left to skip)."""
    if not conv_bf16_native.available():
        pytest.skip(f"bfloat16 convolution kernels unavailable: {conv_bf16_native.unavailable_reason()}")
    x, w = bf16_array(*x_shape), bf16_array(*w_shape)
    got = jax.jit(conv_bf16_native.forward, static_argnums=2)(x, w, pads)
    padded = jnp.pad(x, ((0, 0), *pads, (0, 0)))
    want = jax.jit(conv_bf16_native.forward, static_argnums=2)(padded, w, ((0, 0), (0, 0)))
    np.testing.assert_array_equal(as_f32(got), as_f32(want))
    assert_within_bf16_rounding(got, jax.lax.conv_general_dilated(
        x.astype(jnp.float32), w.astype(jnp.float32), (1, 1), pads,
        dimension_numbers=("NHWC", "HWIO", "NHWC")).astype(jnp.bfloat16))


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


DN = ("NHWC", "HWIO", "NHWC")


def emulated_conv_and_grads(x, w, g, pads):
    """conv(x, w) and its two transposes applied to g, in float32 on bfloat16 values, each rounded."""
    y, vjp = jax.vjp(lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), pads, dimension_numbers=DN),
                     x.astype(jnp.float32), w.astype(jnp.float32))
    return [v.astype(jnp.bfloat16) for v in (y, *vjp(g.astype(jnp.float32)))]


def assert_within_bf16_rounding(got, want):
    assert got.dtype == jnp.bfloat16
    got, want = as_f32(got), as_f32(want)
    # one bfloat16 rounding of a float32 sum taken in another order
    np.testing.assert_allclose(got, want, rtol=2 ** -7, atol=2 ** -8 * float(np.abs(want).max()))


@pytest.mark.parametrize("x_shape, w_shape, padding", [
    ((3, 10, 9, 32), (3, 3, 32, 64), "VALID"),           # the MNIST CNN's second layer, odd output width
    ((2, 7, 8, 16), (3, 3, 16, 32), "SAME"),
    ((2, 6, 7, 32), (3, 2, 32, 16), ((1, 0), (1, 1))),   # uneven pads, a 3x2 filter
    ((2, 5, 6, 16), (1, 1, 16, 48), "VALID"),            # 1x1: 48 output channels (3 vectors)
])
def test_bf16_kernels_match_the_emulated_reference(x_shape, w_shape, padding, bf16_kernels):
    x, w = bf16_array(*x_shape), bf16_array(*w_shape)
    pads = conv.explicit_padding(padding, x_shape[1:3], w_shape[:2])
    for kind in ("forward", "input_grad", "filter_grad"):
        assert conv.bf16_native(kind, x_shape, w_shape, 1, pads)
    g = bf16_array(x_shape[0], *conv.output_hw(x_shape[1:3], w_shape[:2], (1, 1), pads, (1, 1)), w_shape[3])
    y_want, dx_want, dw_want = emulated_conv_and_grads(x, w, g, pads)
    y, dx, dw = jax.jit(lambda x, w, g: (conv.conv2d_forward(x, w, 1, pads),
                                         conv.conv2d_input_grad(g, w, x.shape, 1, pads),
                                         conv.conv2d_filter_grad(x, g, w.shape, 1, pads)))(x, w, g)
    for got, want in ((y, y_want), (dx, dx_want), (dw, dw_want)):
        assert_within_bf16_rounding(got, want)


@pytest.mark.parametrize("channels, padding", [(1, "VALID"), (3, "SAME")])
def test_bf16_forward_takes_an_odd_number_of_input_channels(channels, padding, bf16_kernels):
    """A first layer (1 or 3 input channels): the kernel sums the pairs with one zero channel added."""
    x, w, b = bf16_array(3, 11, 10, channels), bf16_array(3, 3, channels, 32), bf16_array(32)
    pads = conv.explicit_padding(padding, x.shape[1:3], w.shape[:2])
    assert conv.bf16_native("forward", x.shape, w.shape, 1, pads)
    # the filter gradient: one channel on the kernel, three widened (too few to pair)
    assert conv.bf16_native("filter_grad", x.shape, w.shape, 1, pads) == (channels == 1)
    y, fused = jax.jit(lambda x, w, b: (conv.conv2d_forward(x, w, 1, pads),
                                        conv.conv2d_bias_relu_forward(x, w, b, 1, pads)))(x, w, b)
    want = emulated_conv_and_grads(x, w, bf16_array(*y.shape), pads)[0]
    assert_within_bf16_rounding(y, want)
    sums = jax.lax.conv_general_dilated(x.astype(jnp.float32), w.astype(jnp.float32), (1, 1), pads,
                                        dimension_numbers=DN)
    assert_within_bf16_rounding(fused, jnp.maximum(sums + b.astype(jnp.float32), 0).astype(jnp.bfloat16))


@pytest.mark.parametrize("x_shape, w_shape, padding", [
    ((3, 11, 10, 1), (3, 3, 1, 32), "VALID"),             # the MNIST CNN's first layer, even output width
    ((2, 9, 9, 1), (3, 3, 1, 48), "SAME"),                # odd output width; 48 channels: 32 + 16
    ((2, 8, 7, 1), (2, 3, 1, 16), ((1, 0), (1, 1))),      # uneven pads, a 2x3 filter
    ((2, 9, 8, 1), (3, 4, 1, 16), "VALID"),               # 12 taps, the most the kernel holds
])
def test_bf16_filter_grad_of_one_input_channel(x_shape, w_shape, padding, bf16_kernels, monkeypatch):
    """A first layer on grey images: all the filter's taps summed in registers, x not paired."""
    x = bf16_array(*x_shape)
    pads = conv.explicit_padding(padding, x_shape[1:3], w_shape[:2])
    assert conv.bf16_native("filter_grad", x_shape, w_shape, 1, pads)
    g = bf16_array(x_shape[0], *conv.output_hw(x_shape[1:3], w_shape[:2], (1, 1), pads, (1, 1)), w_shape[3])
    dw_want = emulated_conv_and_grads(x, bf16_array(*w_shape), g, pads)[2]

    def filter_grad(x, g):
        return conv.conv2d_filter_grad(x, g, w_shape, 1, pads)
    monkeypatch.setattr(tuning, "CONV_NATIVE_THREAD_FLOPS", 0)  # every CPU this process may use
    dw = jax.jit(filter_grad)(x, g)
    assert_within_bf16_rounding(dw, dw_want)
    monkeypatch.setattr(tuning, "CONV_NATIVE_THREAD_FLOPS", float("inf"))  # one thread: the same sums
    # traced anew: a jit of filter_grad itself would reuse its trace, threads and all
    np.testing.assert_array_equal(as_f32(jax.jit(lambda x, g: filter_grad(x, g))(x, g)), as_f32(dw))
    assert not conv.bf16_native("filter_grad", x_shape, (3, 5, 1, 16), 1, "VALID")  # 15 taps: widened


def test_conv2d_bias_relu_and_its_gradients(conv_path):
    """Conv2D's convolution, bias and ReLU: the bfloat16 kernel applies them to the float32 sums
    and rounds once, the widened path rounds the ReLU's output, the reference rounds each step."""
    x, w, b = bf16_array(3, 9, 12, 16), bf16_array(3, 3, 16, 32, scale=0.2), bf16_array(32)

    def emulated(x, w, b):
        y = jax.lax.conv_general_dilated(x.astype(jnp.float32), w.astype(jnp.float32), (1, 1), "VALID",
                                         dimension_numbers=DN).astype(jnp.bfloat16)
        return jnp.maximum(y + b, 0)

    def loss(conv2d):
        return lambda x, w, b: jnp.sum(conv2d(x, w, b).astype(jnp.float32) ** 2)
    fused = jax.jit(lambda x, w, b: conv.conv2d_bias_relu_forward(x, w, b))
    assert_within_bf16_rounding(fused(x, w, b), emulated(x, w, b))
    got = jax.jit(jax.grad(loss(conv.conv2d_bias_relu_forward), (0, 1, 2)))(x, w, b)
    want = jax.grad(loss(emulated), (0, 1, 2))(x, w, b)
    for g, expected in zip(got, want):
        assert g.dtype == jnp.bfloat16
        np.testing.assert_allclose(as_f32(g), as_f32(expected), rtol=2 ** -5,
                                   atol=2 ** -6 * float(np.abs(as_f32(expected)).max()))


def test_bf16_kernels_second_order(bf16_kernels):
    """d/dx of sum(dL/dw ** 2), L = sum(conv(x, w) ** 2) / 2: every rule of the three kernels runs."""
    x, w = bf16_array(2, 8, 8, 16), bf16_array(3, 3, 16, 32, scale=0.2)

    def curvature(conv2d):
        def loss(x, w):
            return 0.5 * jnp.sum(conv2d(x, w).astype(jnp.float32) ** 2)
        return jax.grad(lambda x: jnp.sum(jax.grad(loss, 1)(x, w).astype(jnp.float32) ** 2))
    got = jax.jit(curvature(lambda x, w: conv.conv2d_forward(x, w, 1, "SAME")))(x)
    want = curvature(lambda x, w: jax.lax.conv_general_dilated(
        x.astype(jnp.float32), w.astype(jnp.float32), (1, 1), "SAME", dimension_numbers=DN).astype(jnp.bfloat16))(x)
    assert got.dtype == jnp.bfloat16
    # several bfloat16 roundings deep: a few units of the last place of the largest values
    np.testing.assert_allclose(as_f32(got), as_f32(want), rtol=2 ** -5,
                               atol=2 ** -6 * float(np.abs(as_f32(want)).max()))


def test_bf16_kernels_leave_what_they_do_not_take_to_the_widened_path(monkeypatch):
    monkeypatch.setattr(tuning, "BF16_CONV_NATIVE_VENDORS", (low_precision.cpu_vendor(),))
    x_shape = (2, 8, 8, 16)
    assert not conv.bf16_native("forward", x_shape, (3, 3, 16, 24), 1, "SAME")   # 24 output channels
    assert not conv.bf16_native("forward", x_shape, (3, 3, 16, 32), 2, "SAME")   # strided
    assert not conv.bf16_native("input_grad", (2, 8, 8, 16), (3, 3, 16, 3), 1, "SAME")   # 3 channels summed
    assert not conv.bf16_native("filter_grad", (2, 8, 8, 2), (3, 3, 2, 32), 1, "SAME")  # few input channels
    assert not conv.bf16_native("input_grad", x_shape, (3, 3, 16, 32), 1, "SAME", (2, 2))  # dilated
    assert not conv.bf16_native("forward", x_shape, (3, 3, 16, 32), 1, "SAME", dtype=jnp.float32)


@pytest.mark.parametrize("k, m, n", [(9, 50, 48), (16, 7, 16), (33, 130, 80)])  # odd batches, 3-5 vectors
def test_bf16_matmul_tn_kernel_matches_the_emulated_reference(k, m, n, monkeypatch):
    if not matmul_bf16_native.available():
        pytest.skip(f"bfloat16 matmul kernel unavailable: {matmul_bf16_native.unavailable_reason()}")
    monkeypatch.setattr(tuning, "BF16_CONV_NATIVE_VENDORS", (low_precision.cpu_vendor(),))
    monkeypatch.setattr(tuning, "MATMUL_NATIVE_FLOPS", 0)
    a, b, g = bf16_array(k, m), bf16_array(k, n), bf16_array(m, n)
    assert matmul_bf16_native.supported(a.shape, b.shape, a.dtype)
    got = jax.jit(matmul_bf16_native.matmul_tn)(a, b)
    assert got.dtype == jnp.bfloat16
    assert_within_bf16_rounding(got, emulated_matmul(a.T, b))
    ga, gb = jax.jit(jax.vjp(matmul_bf16_native.matmul_tn, a, b)[1])(g)
    assert_within_bf16_rounding(ga, emulated_matmul(b, g.T))
    assert_within_bf16_rounding(gb, emulated_matmul(a, g))


def test_a_bfloat16_dense_weight_gradient_takes_the_kernel_where_it_runs(monkeypatch):
    """mk.matmul(x, g, transpose_a=True) of bfloat16 arrays (a Dense layer's weight gradient) runs
    on the kernel where it is supported, with the emulated reference's values either way; a CPU
    of another vendor, or float32, is not supported."""
    monkeypatch.setattr(tuning, "MATMUL_NATIVE_FLOPS", 0)
    x, g = bf16_array(12, 40), bf16_array(12, 32)
    assert not matmul_bf16_native.supported(x.shape, g.shape, jnp.float32)
    monkeypatch.setattr(tuning, "BF16_CONV_NATIVE_VENDORS", ("NoSuchVendor",))
    assert not matmul_bf16_native.supported(x.shape, g.shape, x.dtype)
    monkeypatch.setattr(tuning, "BF16_CONV_NATIVE_VENDORS", (low_precision.cpu_vendor(),))
    calls = []
    original = matmul_bf16_native.matmul_tn
    monkeypatch.setattr(matmul_bf16_native, "matmul_tn", lambda a, b: calls.append(a.shape) or original(a, b))
    monkeypatch.setattr(low_precision, "_warned", [True])
    got = mk.matmul(mk.constant(x), mk.constant(g), transpose_a=True)
    assert calls == ([x.shape] if matmul_bf16_native.available() else [])
    assert_within_bf16_rounding(got.numpy(), emulated_matmul(x.T, g))


@pytest.mark.parametrize("m, k, n", [(5, 6, 48), (13, 130, 80), (7, 64, 144), (128, 2, 16)])
def test_bf16_matmul_nt_kernel_matches_the_emulated_reference(m, k, n, monkeypatch):
    """a @ b.T on the kernel: odd row counts (partial tiles), 1-5 vectors of columns, B's rows over
    more than one block of 64, the shortest contraction (one pair); and its vjp."""
    if not matmul_bf16_native.available():
        pytest.skip(f"bfloat16 matmul kernel unavailable: {matmul_bf16_native.unavailable_reason()}")
    monkeypatch.setattr(tuning, "BF16_CONV_NATIVE_VENDORS", (low_precision.cpu_vendor(),))
    monkeypatch.setattr(tuning, "MATMUL_NATIVE_FLOPS", 0)
    a, b, g = bf16_array(m, k), bf16_array(n, k), bf16_array(m, n)
    assert matmul_bf16_native.supported_nt(a.shape, b.shape, a.dtype)
    got = jax.jit(matmul_bf16_native.matmul_nt)(a, b)
    assert got.dtype == jnp.bfloat16 and got.shape == (m, n)
    assert_within_bf16_rounding(got, emulated_matmul(a, b.T))
    ga, gb = jax.jit(jax.vjp(matmul_bf16_native.matmul_nt, a, b)[1])(g)
    assert_within_bf16_rounding(ga, emulated_matmul(g, b))
    assert_within_bf16_rounding(gb, emulated_matmul(g.T, a))


def test_matmul_nt_kernel_sums_each_result_like_the_float32_dot():
    """Sums that are exact in float32 and in bfloat16 (small integers, |sum| <= 128) come out bit for
    bit: only the order of the sums may differ from the reference, never a term."""
    if not matmul_bf16_native.available():
        pytest.skip(f"bfloat16 matmul kernel unavailable: {matmul_bf16_native.unavailable_reason()}")
    a = jnp.asarray(RNG.integers(-2, 3, (9, 32)), jnp.bfloat16)
    b = jnp.asarray(RNG.integers(-2, 3, (32, 32)), jnp.bfloat16)
    np.testing.assert_array_equal(as_f32(jax.jit(matmul_bf16_native.matmul_nt)(a, b)), as_f32(a) @ as_f32(b).T)


def test_a_bfloat16_dense_input_gradient_takes_the_nt_kernel_where_it_runs(monkeypatch):
    """mk.matmul(g, w, transpose_b=True) of bfloat16 arrays (a Dense layer's input gradient) runs on
    the kernel where it is supported, with the emulated reference's values either way; an odd
    contraction, rows of w not a multiple of 16, float32, another vendor or the switch off are not."""
    monkeypatch.setattr(tuning, "MATMUL_NATIVE_FLOPS", 0)
    g, w = bf16_array(12, 40), bf16_array(32, 40)
    assert not matmul_bf16_native.supported_nt(g.shape, w.shape, jnp.float32)
    assert not matmul_bf16_native.supported_nt((12, 41), (32, 41), g.dtype)
    assert not matmul_bf16_native.supported_nt((12, 40), (24, 40), g.dtype)
    monkeypatch.setattr(tuning, "BF16_CONV_NATIVE_VENDORS", ("NoSuchVendor",))
    assert not matmul_bf16_native.supported_nt(g.shape, w.shape, g.dtype)
    monkeypatch.setattr(tuning, "BF16_CONV_NATIVE_VENDORS", (low_precision.cpu_vendor(),))
    monkeypatch.setattr(tuning, "BF16_MATMUL_NT_NATIVE", False)
    assert not matmul_bf16_native.supported_nt(g.shape, w.shape, g.dtype)
    monkeypatch.setattr(tuning, "BF16_MATMUL_NT_NATIVE", True)
    assert matmul_bf16_native.supported_nt(g.shape, w.shape, g.dtype)
    calls = []
    original = matmul_bf16_native.matmul_nt
    monkeypatch.setattr(matmul_bf16_native, "matmul_nt", lambda a, b: calls.append(b.shape) or original(a, b))
    monkeypatch.setattr(low_precision, "_warned", [True])
    got = mk.matmul(mk.constant(g), mk.constant(w), transpose_b=True)
    assert calls == ([w.shape] if matmul_bf16_native.available() else [])
    assert_within_bf16_rounding(got.numpy(), emulated_matmul(g, w.T))


@pytest.mark.parametrize("compiled", [False, True])
def test_a_float32_weight_gradient_through_the_bfloat16_kernel_has_the_same_bits_widened(compiled, monkeypatch):
    """The gradient of a float32 weight read as bfloat16 (a mixed-precision Dense kernel): the
    kernel's widened output (tuning.BF16_WEIGHT_GRADIENT_WIDENED) against the bfloat16 product
    widened by its own pass, bit for bit, eager and in mk.function; and the emulated reference."""
    if not matmul_bf16_native.available():
        pytest.skip(f"bfloat16 matmul kernel unavailable: {matmul_bf16_native.unavailable_reason()}")
    monkeypatch.setattr(tuning, "BF16_CONV_NATIVE_VENDORS", (low_precision.cpu_vendor(),))
    monkeypatch.setattr(tuning, "MATMUL_NATIVE_FLOPS", 0)
    monkeypatch.setattr(low_precision, "_warned", [True])
    x, upstream = bf16_array(12, 40), RNG.standard_normal((12, 32)).astype(np.float32)
    w = mk.Variable(RNG.standard_normal((40, 32)).astype(np.float32))

    def gradient():
        with mk.GradientTape() as tape:
            y = mk.matmul(mk.constant(x), mk.cast(w, "bfloat16"))
            loss = mk.reduce_sum(mk.cast(y, "float32") * upstream)
        return tape.gradient(loss, w)

    results = {}
    for widened in (False, True):
        monkeypatch.setattr(tuning, "BF16_WEIGHT_GRADIENT_WIDENED", widened)
        jax.clear_caches()  # eager ops keep their compiled forward per shape: else the first setting's ran again
        got = (mk.function(gradient) if compiled else gradient)()
        assert got.dtype == np.float32
        results[widened] = np.asarray(got)
    np.testing.assert_array_equal(results[True], results[False])
    g = jnp.asarray(upstream, jnp.bfloat16)
    assert_within_bf16_rounding(jnp.asarray(results[True], jnp.bfloat16), emulated_matmul(x.T, g))


def test_astype_gives_the_remembered_widened_array_only_for_float32():
    wide = jnp.asarray(RNG.standard_normal((4, 16)), jnp.float32).astype(jnp.bfloat16).astype(jnp.float32)
    narrow = low_precision.with_widened(wide.astype(jnp.bfloat16), wide)
    assert low_precision.astype(narrow, jnp.float16).dtype == jnp.float16
    assert low_precision.astype(narrow, jnp.float32) is wide
    assert low_precision.astype(narrow, jnp.float32) is not wide  # given once
    other = wide.astype(jnp.bfloat16)  # equal values, not the remembered array
    assert low_precision.astype(other, jnp.float32) is not wide
    np.testing.assert_array_equal(np.asarray(low_precision.astype(other, jnp.float32)), np.asarray(wide))


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16, jnp.float32])
def test_keep_where_moves_the_same_bits_as_a_select(dtype):
    """keep_where (a select on the 16-bit patterns for bfloat16/float16) against jnp.where, bit for
    bit: signed zeros, infinities, NaN, subnormals, a mask that broadcasts, eager and under jit."""
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 65504.0], np.float32)
    value = jnp.asarray(np.concatenate([special, RNG.standard_normal(24).astype(np.float32)]).reshape(4, 8), dtype)
    mask = jnp.asarray(RNG.random((4, 1)) < 0.5) | jnp.asarray(RNG.random((1, 8)) < 0.5)
    expected = jnp.where(mask, value, jnp.zeros((), dtype))
    for got in (low_precision.keep_where(mask, value), jax.jit(low_precision.keep_where)(mask, value)):
        assert got.dtype == dtype and got.shape == value.shape
        np.testing.assert_array_equal(np.asarray(got).view(np.uint8), np.asarray(expected).view(np.uint8))


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16, jnp.float32])
def test_keep_where_differentiates_as_a_select(dtype):
    """keep_where's derivatives under jax's own transforms (jax.vjp, jax.jvp, second order) are
    jnp.where's: the 16-bit bitcasts would otherwise give zero cotangents."""
    value = jnp.asarray(RNG.standard_normal((3, 5)), dtype)
    mask = jnp.asarray(RNG.random((3, 1)) < 0.5) | jnp.asarray(RNG.random((1, 5)) < 0.5)
    weights = jnp.asarray(RNG.standard_normal((3, 5)), dtype)

    def loss(select, v):
        return (select(mask, v) * v * weights).astype(jnp.float32).sum()

    reference = lambda m, v: jnp.where(m, v, jnp.zeros((), dtype))  # noqa: E731
    for transform in (jax.grad, lambda f: jax.grad(lambda v: jax.grad(f)(v).astype(jnp.float32).sum())):
        got = transform(lambda v: loss(low_precision.keep_where, v))(value)
        expected = transform(lambda v: loss(reference, v))(value)
        assert got.dtype == dtype
        np.testing.assert_array_equal(np.asarray(got, np.float32), np.asarray(expected, np.float32))
    tangent = jnp.ones_like(value)
    _, got = jax.jvp(lambda v: low_precision.keep_where(mask, v), (value,), (tangent,))
    np.testing.assert_array_equal(np.asarray(got, np.float32), np.asarray(reference(mask, tangent), np.float32))
