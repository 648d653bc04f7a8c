"""Winograd's F(2x2, 3x3) (``xla_cpu.winograd``): its values against ``lax.conv_general_dilated`` at
the highest precision, where ``xla_cpu.conv`` picks it, and the derivatives of the convolutions
that run on it."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from xla_cpu_reference import close, rand

import minikeras as mk
from minikeras.xla_cpu import compiler, conv, tuning, winograd

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
def test_forward_equals_the_direct_convolution(x_shape, c_out, pads):
    x, w = rand(x_shape, 0), rand((3, 3, x_shape[-1], c_out), 1)
    expected = _reference(x, w, pads)
    close(jax.jit(lambda x, w: winograd.forward(x, w, pads))(x, w), expected, "winograd", tol=1e-5)
    # the input gradient's form: the flipped, channel-swapped filter, without a copy of it
    flipped_io = jnp.flip(w, (0, 1)).transpose(0, 1, 3, 2)
    close(jax.jit(lambda x, w: winograd.forward(x, w, pads, transposed=True))(x, flipped_io), expected,
          "winograd transposed", tol=1e-5)


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


def test_formulation_picks_it_from_the_channel_threshold(monkeypatch):
    many = tuning.CONV_WINOGRAD_MIN_CHANNELS
    x_shape, w_shape = (2, 8, 8, many), (3, 3, many, many)
    for kind in ("forward", "input_grad"):
        for eigen in (True, False):
            assert conv.formulation(kind, x_shape, w_shape, padding="SAME", eigen=eigen) == "winograd"
    assert conv.formulation("filter_grad", x_shape, w_shape, padding="SAME", eigen=True) != "winograd"
    assert conv.formulation("forward", x_shape, w_shape, strides=2, padding="SAME", eigen=True) != "winograd"
    assert conv.formulation("forward", x_shape, w_shape, padding="SAME", eigen=True,
                            dtype=jnp.bfloat16) != "winograd"
    fewer = (3, 3, many, many // 2)
    assert conv.formulation("forward", x_shape, fewer, padding="SAME", eigen=True) != "winograd"
    monkeypatch.setattr(tuning, "CONV_WINOGRAD", False)
    assert conv.formulation("forward", x_shape, w_shape, padding="SAME", eigen=True) != "winograd"


def test_method_winograd_names_what_it_takes():
    x, w = jnp.ones((1, 8, 8, 2)), jnp.ones((5, 5, 2, 2))
    with pytest.raises(ValueError, match=r"method 'winograd' takes 3x3 stride-1 .* filter \(5, 5, 2, 2\)"):
        conv.conv2d_forward(x, w, (1, 1), "SAME", method="winograd")


def test_derivatives_through_winograd_equal_the_direct_convolutions():
    """First and second order through conv2d_forward and conv2d_input_grad on 'winograd' (their
    gradients are the other convolutions), in a program compiled as minikeras compiles."""
    x, w = rand((2, 5, 6, 8), 4), rand((3, 3, 8, 8), 5)
    dy = rand((2, 5, 6, 8), 6)

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
        return grads, hvps, input_grads
    (g_ours, g_ref), (h_ours, h_ref), (dx_ours, dx_ref) = compiler.jit(both)(x, w)
    for a, b, what in ((g_ours[0], g_ref[0], "dx"), (g_ours[1], g_ref[1], "dw"), (h_ours, h_ref, "hvp"),
                       (dx_ours, dx_ref, "input grad")):
        close(a, b, what, tol=2e-5)


def test_a_conv2d_layer_with_many_channels_runs_on_it(monkeypatch):
    calls = []
    original = winograd.forward

    def spy(x, w, pads, transposed=False):
        calls.append(transposed)
        return original(x, w, pads, transposed)
    monkeypatch.setattr(winograd, "forward", spy)
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
