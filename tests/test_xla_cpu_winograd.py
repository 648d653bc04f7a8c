"""Winograd's F(2x2, 3x3) (``xla_cpu.winograd`` in jax ops, ``xla_cpu.winograd_native``'s kernel):
their values against ``lax.conv_general_dilated`` at the highest precision, where ``xla_cpu.conv``
picks them, and the derivatives of the convolutions that run on them."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from xla_cpu_reference import close, rand

import minikeras as mk
from minikeras.xla_cpu import compiler, conv, tuning, winograd, winograd_native

DN = ("NHWC", "HWIO", "NHWC")


def _reference(x, w, pads):
    return lax.conv_general_dilated(x, w, (1, 1), pads, dimension_numbers=DN, precision=lax.Precision.HIGHEST)


# odd and even sizes (a last tile half outside the output), SAME, VALID, uneven pads, pads of 2
# (an input gradient's), one output row
PADDED_CASES = [
    ((2, 5, 7, 3), 4, ((1, 1), (1, 1))),
    ((2, 6, 6, 5), 3, ((0, 0), (0, 0))),
    ((1, 4, 9, 2), 2, ((1, 0), (0, 1))),
    ((3, 3, 3, 4), 4, ((0, 1), (1, 0))),
    ((1, 4, 5, 3), 2, ((2, 2), (2, 1))),
    ((2, 3, 8, 4), 5, ((0, 0), (1, 2))),
]


@pytest.mark.parametrize("x_shape,c_out,pads", PADDED_CASES, ids=lambda v: str(v).replace(" ", ""))
def test_forward_in_jax_equals_the_direct_convolution(x_shape, c_out, pads):
    x, w = rand(x_shape, 0), rand((3, 3, x_shape[-1], c_out), 1)
    expected = _reference(x, w, pads)
    close(jax.jit(lambda x, w: winograd.jax_forward(x, w, pads))(x, w), expected, "winograd", tol=1e-5)
    # the input gradient's form: the flipped, channel-swapped filter, without a copy of it
    flipped_io = jnp.flip(w, (0, 1)).transpose(0, 1, 3, 2)
    close(jax.jit(lambda x, w: winograd.jax_forward(x, w, pads, transposed=True))(x, flipped_io), expected,
          "winograd transposed", tol=1e-5)


def _native_or_skip():
    if not (winograd_native.supported((1, 4, 4, 16), 16, jnp.float32) and winograd_native.available()):
        pytest.skip(f"the native Winograd kernel is unavailable: {winograd_native.unavailable_reason()}")


# channels in multiples of 16 (the kernel's vectors): 64-, 32- and 16-wide column blocks together,
# tiles past a block's end, the same geometries as above
NATIVE_CASES = [
    ((2, 5, 7, 16), 112, ((1, 1), (1, 1))),
    ((2, 6, 6, 32), 16, ((0, 0), (0, 0))),
    ((1, 4, 9, 16), 48, ((1, 0), (0, 1))),
    ((3, 3, 3, 64), 64, ((0, 1), (1, 0))),
    ((1, 4, 5, 16), 32, ((2, 2), (2, 1))),
    ((5, 9, 9, 48), 80, ((1, 1), (1, 1))),
]


@pytest.mark.parametrize("x_shape,c_out,pads", NATIVE_CASES, ids=lambda v: str(v).replace(" ", ""))
def test_native_kernel_equals_the_direct_convolution(x_shape, c_out, pads):
    _native_or_skip()
    x, w = rand(x_shape, 0), rand((3, 3, x_shape[-1], c_out), 1)
    expected = _reference(x, w, pads)
    out_hw = winograd.output_hw(x.shape, pads)
    native = jax.jit(lambda x, w: winograd_native.forward(x, winograd.filter_transform(w), pads, out_hw))(x, w)
    close(native, expected, "native", tol=1e-5)
    flipped_io = jnp.flip(w, (0, 1)).transpose(0, 1, 3, 2)
    close(jax.jit(lambda x, w: winograd.forward(x, w, pads, transposed=True))(x, flipped_io), expected,
          "forward, transposed", tol=1e-5)
    # the filter gradient's kernel: the transposed form, summed over the tiles
    dy = rand(expected.shape, 2)
    expected_grad = jax.vjp(lambda w: _reference(x, w, pads), w)[1](dy)[0]
    grad = jax.jit(lambda x, dy: winograd.filter_transform_transposed(winograd_native.filter_grad(x, dy, pads)))(x, dy)
    close(grad, expected_grad, "native filter gradient", tol=1e-5)


def test_native_results_do_not_depend_on_threads_or_blocks(monkeypatch):
    """The forward kernel computes each tile alone; the filter gradient sums its tiles in parts of a
    fixed size, added in order: the same bits on one thread or two, in blocks of any size."""
    _native_or_skip()
    x, w = rand((8, 30, 34, 32), 7), rand((3, 3, 32, 48), 8)  # 2,040 tiles: the filter gradient's 4 parts
    pads = ((1, 1), (1, 1))

    def run():
        u = winograd.filter_transform(w)
        return np.asarray(jax.jit(lambda x, u: winograd_native.forward(x, u, pads, (30, 34)))(x, u))
    dy = rand((8, 30, 34, 48), 9)

    def run_filter_grad():
        return np.asarray(jax.jit(lambda x, dy: winograd_native.filter_grad(x, dy, pads))(x, dy))
    first, first_grad = run(), run_filter_grad()
    monkeypatch.setattr(winograd_native, "usable_cpus", lambda: 1)
    monkeypatch.setattr(tuning, "WINOGRAD_BLOCK_BYTES", 16 * 4 * 32 * 12)  # 12 tiles per block
    assert winograd_native.block_tiles(32) == 12
    np.testing.assert_array_equal(run(), first)
    np.testing.assert_array_equal(run_filter_grad(), first_grad)


def test_forward_takes_the_native_kernel_where_it_applies(monkeypatch):
    _native_or_skip()
    calls = []
    original = winograd_native.forward
    monkeypatch.setattr(winograd_native, "forward", lambda *a: calls.append(a[0].shape) or original(*a))
    x, w = rand((1, 4, 4, 16), 9), rand((3, 3, 16, 16), 10)
    winograd.forward(x, w, ((1, 1), (1, 1)))
    assert calls == [(1, 4, 4, 16)]
    winograd.forward(rand((1, 4, 4, 8), 9), rand((3, 3, 8, 16), 10), ((1, 1), (1, 1)))  # 8 channels: jax ops
    monkeypatch.setattr(tuning, "WINOGRAD_NATIVE", False)
    winograd.forward(x, w, ((1, 1), (1, 1)))
    assert calls == [(1, 4, 4, 16)]


def test_transforms_take_a_tile_to_its_outputs():
    # one 4x4 tile and one filter through the three maps: the 2x2 outputs of the direct correlation
    d = rand((1, 4, 4, 1), 2)
    g = rand((3, 3, 1, 1), 3)
    m = winograd.input_transform(d, ((0, 0), (0, 0)), (1, 1))[:, 0, 0] * winograd.filter_transform(g)[:, 0, 0]
    y = winograd.output_transform(m.reshape(16, 1, 1), 1, (1, 1), (2, 2))
    close(y, _reference(d, g, ((0, 0), (0, 0))), "one tile", tol=1e-6)


def test_applies_to_3x3_stride_1_undilated_pads_up_to_2():
    x_shape, w_shape, same = (2, 8, 8, 4), (3, 3, 4, 4), ((1, 1), (1, 1))
    assert winograd.applies(x_shape, w_shape, (1, 1), same, (1, 1))
    assert winograd.applies(x_shape, w_shape, (1, 1), ((2, 2), (0, 1)), (1, 1))
    assert not winograd.applies(x_shape, (5, 5, 4, 4), (1, 1), same, (1, 1))
    assert not winograd.applies(x_shape, w_shape, (2, 2), same, (1, 1))
    assert not winograd.applies(x_shape, w_shape, (1, 1), same, (2, 2))
    assert not winograd.applies(x_shape, w_shape, (1, 1), ((3, 0), (0, 0)), (1, 1))
    assert not winograd.applies(x_shape, w_shape, (1, 1), ((-1, 0), (0, 0)), (1, 1))
    assert not winograd.applies((2, 2, 8, 4), w_shape, (1, 1), ((0, 0), (0, 0)), (1, 1))  # no output row


def test_formulation_picks_it_from_the_channel_thresholds(monkeypatch):
    def picked(kind, channels, c_out=None, **kwargs):
        c_out = channels if c_out is None else c_out
        return conv.formulation(kind, (2, 8, 8, channels), (3, 3, channels, c_out), **{"padding": "SAME",
                                                                                         "eigen": True, **kwargs})
    in_jax = tuning.CONV_WINOGRAD_MIN_CHANNELS
    for kind in ("forward", "input_grad"):
        assert picked(kind, in_jax) == "winograd"
        assert picked(kind, in_jax, eigen=False) == "winograd"
        assert picked(kind, in_jax, strides=2) != "winograd"
        assert picked(kind, in_jax, dtype=jnp.bfloat16) != "winograd"
    # the filter gradient where the native gradient kernel does not take the filter
    big = next(c for c in (128, 256, 512) if 4 * 9 * c * c > tuning.CONV_NATIVE_GRAD_MAX_FILTER_BYTES)
    assert picked("filter_grad", big) == "winograd"
    native = tuning.CONV_WINOGRAD_NATIVE_MIN_CHANNELS
    if winograd.runs_natively((2, 8, 8, native), native, jnp.float32):
        assert picked("forward", native) == picked("input_grad", native) == picked("filter_grad", native) == "winograd"
        assert picked("forward", native, native // 2) != "winograd"
        assert picked("filter_grad", native, native // 2) != "winograd"
    monkeypatch.setattr(tuning, "WINOGRAD_NATIVE", False)  # jax ops: more channels needed
    assert picked("forward", in_jax // 2) != "winograd"
    monkeypatch.setattr(tuning, "CONV_WINOGRAD", False)
    assert picked("forward", in_jax) != "winograd"
    assert picked("filter_grad", big) != "winograd"


def test_method_winograd_names_what_it_takes():
    x, w = jnp.ones((1, 8, 8, 2)), jnp.ones((5, 5, 2, 2))
    with pytest.raises(ValueError, match=r"method 'winograd' takes 3x3 stride-1 .* filter \(5, 5, 2, 2\)"):
        conv.conv2d_forward(x, w, (1, 1), "SAME", method="winograd")


@pytest.mark.parametrize("channels", [8, 16])  # the jax formulation; the native kernel where it is built
def test_derivatives_through_winograd_equal_the_direct_convolutions(channels):
    """First and second order through conv2d_forward, conv2d_input_grad and conv2d_filter_grad on
    'winograd' (their gradients are the other convolutions), in a program compiled as minikeras
    compiles."""
    x, w = rand((2, 5, 6, channels), 4), rand((3, 3, channels, channels), 5)
    dy = rand((2, 5, 6, channels), 6)

    def loss(forward, x, w):
        return jnp.sum(jnp.tanh(forward(x, w)) * dy)

    def ours(x, w):
        return conv.conv2d_forward(x, w, (1, 1), "SAME", method="winograd")

    def direct(x, w):
        return _reference(x, w, ((1, 1), (1, 1)))

    def both(x, w):
        grads = [jax.grad(loss, argnums=(1, 2))(f, x, w) for f in (ours, direct)]
        hvps = [jax.grad(lambda x, w, f=f: jnp.vdot(jax.grad(loss, argnums=1)(f, x, w), dy))(x, w)
                for f in (ours, direct)]
        input_grads = (conv.conv2d_input_grad(dy, w, x.shape, (1, 1), "SAME", method="winograd"),
                       jax.vjp(lambda x: direct(x, w), x)[1](dy)[0])
        filter_grads = (conv.conv2d_filter_grad(x, dy, w.shape, (1, 1), "SAME", method="winograd"),
                        jax.vjp(lambda w: direct(x, w), w)[1](dy)[0])
        # the filter gradient's own derivatives, in x
        filter_grad_vjps = [jax.grad(lambda x, g=g: jnp.vdot(g(x), w))(x) for g in (
            lambda x: conv.conv2d_filter_grad(x, dy, w.shape, (1, 1), "SAME", method="winograd"),
            lambda x: jax.vjp(lambda w: direct(x, w), w)[1](dy)[0])]
        return grads, hvps, input_grads, filter_grads, filter_grad_vjps
    (g_ours, g_ref), (h_ours, h_ref), (dx_ours, dx_ref), (dw_ours, dw_ref), (fx_ours, fx_ref) = (
        compiler.jit(both)(x, w))
    for a, b, what in ((g_ours[0], g_ref[0], "dx"), (g_ours[1], g_ref[1], "dw"), (h_ours, h_ref, "hvp"),
                       (dx_ours, dx_ref, "input grad"), (dw_ours, dw_ref, "filter grad"),
                       (fx_ours, fx_ref, "filter grad's derivative")):
        close(a, b, what, tol=2e-5)


def test_a_conv2d_layer_with_many_channels_runs_on_it(monkeypatch):
    calls = []
    original = winograd.forward

    def spy(x, w, pads, transposed=False):
        calls.append(transposed)
        return original(x, w, pads, transposed)
    monkeypatch.setattr(winograd, "forward", spy)
    monkeypatch.setattr(tuning, "WINOGRAD_NATIVE", False)  # the jax formulation on any machine
    many = tuning.CONV_WINOGRAD_MIN_CHANNELS
    mk.random.set_seed(0)
    layer = mk.layers.Conv2D(many, 3, padding="same")
    x = mk.constant(np.random.default_rng(0).standard_normal((1, 4, 4, many)).astype("float32"))
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
    tape.gradient(y, x)
    assert calls == [False, True]  # the forward pass, then the input gradient
    expected = _reference(x.numpy(), layer.kernel.numpy(), ((1, 1), (1, 1))) + layer.bias.numpy()
    close(y.numpy(), expected, "Conv2D", tol=1e-5)


def test_a_conv2d_layer_with_32_channels_runs_on_the_native_kernel(monkeypatch):
    _native_or_skip()
    channels = tuning.CONV_WINOGRAD_NATIVE_MIN_CHANNELS
    calls = []
    original = winograd_native.forward
    monkeypatch.setattr(winograd_native, "forward", lambda x, *a: calls.append(x.shape) or original(x, *a))
    mk.random.set_seed(0)
    model = mk.Sequential([mk.Input((6, 6, channels)), mk.layers.Conv2D(channels, 3, padding="same"),
                           mk.layers.GlobalAveragePooling2D(), mk.layers.Dense(2)])
    model.compile(optimizer="sgd", loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = np.random.default_rng(0).standard_normal((4, 6, 6, channels)).astype("float32")
    y = np.array([0, 1, 0, 1])
    model.train_on_batch(x, y)  # a compiled step: the forward pass (x's gradient is not needed)
    assert (4, 6, 6, channels) in calls
    conv_layer = model.layers[0]
    expected = _reference(x, conv_layer.kernel.numpy(), ((1, 1), (1, 1))) + conv_layer.bias.numpy()
    close(mk.Model(model.inputs, conv_layer.output).predict_on_batch(x), expected, "Conv2D", tol=1e-5)
