"""minikeras.xla_cpu.depthwise ('taps') and the depthwise primitives against the grouped convolution.

The forward pass and both VJPs of the taps formulation against ``lax.conv_general_dilated`` with
``feature_group_count=channels`` and ``jax.vjp`` of it, over MobileNetV2's kinds of layer at small
spatial sizes (3x3 'same' at strides 1 and 2), multipliers, dilations, 'valid' and explicit
padding, 1 to 3 spatial axes, bfloat16; second order through ``jax.jvp`` of the VJPs; and the
minikeras primitives (``depthwise_conv_nd``, layers) on nested tapes against ``jax.hessian``-style
references through ``check_layer``.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import rand
from jax import lax
from layer_reference import check_layer
from xla_cpu_reference import close, rand as jrand

import minikeras as mk
from minikeras.ops.nn_conv_general import depthwise_conv_nd
from minikeras.xla_cpu import depthwise, jit, tuning

SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def grouped(x, w, strides, padding, dilations):
    s = SPATIAL[x.ndim - 2]
    flat = w.reshape(w.shape[:-2] + (1, w.shape[-2] * w.shape[-1]))
    return lax.conv_general_dilated(x, flat, strides, padding, rhs_dilation=dilations,
                                    dimension_numbers=("N" + s + "C", s + "IO", "N" + s + "C"),
                                    feature_group_count=x.shape[-1])


# x shape, kernel shape, strides, padding, dilations
CASES = [
    ((2, 9, 9, 8), (3, 3, 8, 1), (1, 1), "SAME", (1, 1)),        # MobileNetV2's stride-1 blocks
    ((2, 10, 10, 8), (3, 3, 8, 1), (2, 2), "SAME", (1, 1)),      # its stride-2 blocks (even size)
    ((2, 9, 9, 8), (3, 3, 8, 1), (2, 2), "SAME", (1, 1)),        # odd size: the odd pad at the end
    ((1, 7, 7, 16), (3, 3, 16, 1), (1, 1), "VALID", (1, 1)),
    ((2, 8, 7, 3), (3, 3, 3, 2), (2, 2), "SAME", (1, 1)),        # multiplier 2
    ((1, 10, 11, 2), (3, 2, 2, 3), (1, 2), "SAME", (2, 1)),      # dilation with a stride on the other axis
    ((2, 9, 9, 4), (5, 5, 4, 1), (1, 1), "SAME", (2, 2)),        # 5x5, dilated
    ((2, 7, 7, 3), (3, 3, 3, 1), (1, 1), ((2, 0), (1, 3)), (1, 1)),
    ((2, 9, 9, 3), (3, 3, 3, 1), (2, 2), ((1, 1), (0, -1)), (1, 1)),  # a negative pad crops
    ((2, 12, 3), (5, 3, 2), (3,), "SAME", (1,)),                 # 1-D
    ((1, 5, 6, 7, 2), (3, 3, 3, 2, 1), (2, 1, 1), "VALID", (1, 1, 2)),  # 3-D
    ((1, 2, 2, 3), (3, 3, 3, 1), (1, 1), "VALID", (1, 1)),       # an empty output
    ((2, 17, 5, 4), (3, 3, 4, 1), (1, 1), "SAME", (1, 1)),      # 34 rows: the filter gradient sums 17 groups of 2
    ((2, 5, 16, 4), (3, 3, 4, 1), (2, 1), "SAME", (1, 1)),      # wider than 14: the filter gradient sums rows only
    ((2, 11, 11, 4), (2, 2, 4, 1), (3, 3), "VALID", (1, 1)),    # stride 3 > kernel: x's phase 2 gets no tap
]


@pytest.mark.parametrize("x_shape, w_shape, strides, padding, dilations", CASES)
def test_taps_match_the_grouped_convolution_to_second_order(x_shape, w_shape, strides, padding, dilations):
    x, w = jrand(x_shape, 0), jrand(w_shape, 1)
    y_shape = jax.eval_shape(lambda: grouped(x, w, strides, padding, dilations)).shape
    dy, tx, tw, tdy = jrand(y_shape, 2), jrand(x_shape, 3), jrand(w_shape, 4), jrand(y_shape, 5)
    conv = {"strides": strides, "padding": padding, "dilations": dilations}

    def ours(x, w, dy):
        return (depthwise.depthwise_forward(x, w, **conv, method="taps"),
                depthwise.depthwise_input_grad(dy, w, x.shape, **conv, method="taps"),
                depthwise.depthwise_filter_grad(x, dy, w.shape, **conv, method="taps"))

    def reference(x, w, dy):
        y, pullback = jax.vjp(lambda x, w: grouped(x, w, strides, padding, dilations), x, w)
        return (y, *pullback(dy))

    @jit
    def both(x, w, dy):
        # the first outputs and their derivatives along (tx, tw, tdy): second order of the conv
        return jax.jvp(ours, (x, w, dy), (tx, tw, tdy)), jax.jvp(reference, (x, w, dy), (tx, tw, tdy))

    (values, tangents), (expected_values, expected_tangents) = both(x, w, dy)
    for what, a, e in zip(("forward", "input gradient", "filter gradient"), values, expected_values):
        close(a, e, what)
    for what, a, e in zip(("forward", "input gradient", "filter gradient"), tangents, expected_tangents):
        close(a, e, f"{what}'s derivative")


def test_bfloat16_sums_in_float32():
    x, w = jrand((2, 9, 9, 8), 0).astype(jnp.bfloat16), jrand((3, 3, 8, 1), 1).astype(jnp.bfloat16)
    dy = jrand((2, 5, 5, 8), 2).astype(jnp.bfloat16)
    conv = {"strides": (2, 2), "padding": "SAME", "dilations": (1, 1)}
    y = depthwise.depthwise_forward(x, w, **conv, method="taps")
    dx = depthwise.depthwise_input_grad(dy, w, x.shape, **conv, method="taps")
    dw = depthwise.depthwise_filter_grad(x, dy, w.shape, **conv, method="taps")
    assert y.dtype == dx.dtype == dw.dtype == jnp.bfloat16
    f32 = [a.astype(jnp.float32) for a in (x, w, dy)]
    y_ref, pullback = jax.vjp(lambda x, w: grouped(x, w, (2, 2), "SAME", (1, 1)), *f32[:2])
    # one bfloat16 rounding of a float32 sum, at most
    for a, e in zip((y, *[dx, dw]), (y_ref, *pullback(f32[2]))):
        np.testing.assert_allclose(np.asarray(a, np.float32), np.asarray(e), rtol=1e-2, atol=1e-2 * float(
            jnp.max(jnp.abs(e))))


def test_formulation_follows_the_tuning_switch(monkeypatch):
    assert depthwise.formulation() == ("taps" if jax.default_backend() == "cpu" else "xla")
    monkeypatch.setattr(tuning, "DEPTHWISE_TAPS", False)
    assert depthwise.formulation() == "xla"
    with pytest.raises(ValueError, match="`method` must be one of"):
        depthwise.depthwise_forward(jrand((1, 4, 4, 2), 0), jrand((3, 3, 2, 1), 1), (1, 1), "SAME", (1, 1),
                                    method="winograd")


L = mk.layers


def layer_ref(strides, padding, dilations, channels_first=False):
    def fn(x, k, b=None):
        if channels_first:
            x = jnp.moveaxis(x, 1, -1)
        y = grouped(x, k, strides, padding, dilations)
        y = y if b is None else y + b
        return jnp.moveaxis(y, -1, 1) if channels_first else y
    return fn


@pytest.mark.parametrize("make, fn, shape", [
    (lambda: L.DepthwiseConv2D(3, padding="same", use_bias=False), layer_ref((1, 1), "SAME", (1, 1)), (2, 6, 6, 8)),
    (lambda: L.DepthwiseConv2D(3, strides=2, padding="same"), layer_ref((2, 2), "SAME", (1, 1)), (2, 7, 7, 8)),
    (lambda: L.DepthwiseConv2D(3, depth_multiplier=2, dilation_rate=2),
     layer_ref((1, 1), "VALID", (2, 2)), (1, 7, 7, 3)),
    (lambda: L.DepthwiseConv2D(3, strides=2, padding="same", data_format="channels_first"),
     layer_ref((2, 2), "SAME", (1, 1), channels_first=True), (2, 4, 6, 6)),
    (lambda: L.DepthwiseConv1D(3, strides=2, padding="same", depth_multiplier=3),
     layer_ref((2,), "SAME", (1,)), (2, 9, 4)),
], ids=["s1_same", "s2_same_bias", "multiplier_dilated", "s2_channels_first", "conv1d_multiplier"])
def test_depthwise_layers_on_nested_tapes_match_the_grouped_convolution(make, fn, shape):
    check_layer(make(), fn, rand(*shape, seed=1))


def test_depthwise_conv_nd_third_order_matches_jax():
    """A third derivative goes through each primitive's rule twice more (forward -> input and
    filter gradients -> forward and the other gradient)."""
    x, w = rand(1, 5, 5, 2, seed=0), rand(3, 3, 2, 1, seed=1)
    conv = {"strides": (2, 2), "padding": "SAME", "dilations": (1, 1)}

    def ref(x, w):
        return jnp.sum(jnp.sin(grouped(x, w, **conv)))

    expected = jax.grad(lambda x: jnp.sum(jax.grad(lambda x: jnp.sum(jax.grad(ref)(x, w) ** 2))(x) * x))(x)
    xt, wt = mk.constant(x), mk.constant(w)
    with mk.GradientTape() as t3:
        t3.watch(xt)
        with mk.GradientTape() as t2:
            t2.watch(xt)
            with mk.GradientTape() as t1:
                t1.watch(xt)
                y = mk.reduce_sum(mk.sin(depthwise_conv_nd(xt, wt, **conv)))
            g1 = t1.gradient(y, xt)
            s2 = mk.reduce_sum(g1 ** 2)
        g2 = t2.gradient(s2, xt)
        s3 = mk.reduce_sum(g2 * xt)
    close(t3.gradient(s3, xt).numpy(), np.asarray(expected), "third derivative", tol=1e-4)


@pytest.mark.parametrize("strides, padding", [((1, 1), "SAME"), ((2, 2), "SAME"), ((2, 1), "VALID")])
def test_jax_differentiates_the_taps_forward(strides, padding):
    """keras.ops.depthwise_conv and the image ops differentiate the taps forward with jax itself."""
    x, w = jrand((2, 7, 8, 4), 0), jrand((3, 3, 4, 2), 1)

    def loss(f):
        return lambda x, w: jnp.sum(jnp.sin(f(x, w)))

    ours = loss(lambda x, w: depthwise.depthwise_forward(x, w, strides, padding, (1, 1), method="taps"))
    ref = loss(lambda x, w: grouped(x, w, strides, padding, (1, 1)))
    grads = jit(lambda x, w: (jax.grad(ours, (0, 1))(x, w), jax.grad(ref, (0, 1))(x, w)))(x, w)
    for what, a, e in zip(("input", "kernel"), *grads):
        close(a, e, f"jax.grad for the {what}")
