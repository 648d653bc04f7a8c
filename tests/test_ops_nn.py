"""mk.nn: activations, softmax, cross-entropies, dropout, moments, conv2d and pooling.

Forward values against NumPy (convolution and pooling against direct loops), first- and
second-order gradients against JAX, numerical stability of the losses at logits of 1e4,
and the errors users get for bad arguments.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special
from conftest import assert_close, check_grad, gradient_of, rand
from jax import lax

import minikeras as mk

SHAPE = (3, 4)


def _sigmoid(xp, x):
    return 1 / (1 + xp.exp(-x))


def _erf(xp, x):
    return scipy.special.erf(x) if xp is np else jax.scipy.special.erf(x)


def _selu(xp, x):
    return 1.0507009873554805 * xp.where(x > 0, x, 1.6732632423543772 * xp.expm1(x))


def _gelu_tanh(xp, x):
    return 0.5 * x * (1 + xp.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


# name, mk op, reference for numpy or jax.numpy, input scale
ACTIVATIONS = [
    ("relu", mk.nn.relu, lambda xp, x: xp.maximum(x, 0), 1.0),
    ("relu6", mk.nn.relu6, lambda xp, x: xp.clip(x, 0, 6), 5.0),
    ("elu", mk.nn.elu, lambda xp, x: xp.where(x > 0, x, xp.expm1(x)), 1.0),
    ("selu", mk.nn.selu, _selu, 1.0),
    ("gelu", mk.nn.gelu, lambda xp, x: 0.5 * x * (1 + _erf(xp, x / np.sqrt(2))), 1.5),
    ("gelu_tanh", lambda t: mk.nn.gelu(t, approximate=True), _gelu_tanh, 1.5),
    ("leaky_relu", mk.nn.leaky_relu, lambda xp, x: xp.where(x > 0, x, 0.2 * x), 1.0),
    ("silu", mk.nn.silu, lambda xp, x: x * _sigmoid(xp, x), 2.0),
    ("swish_beta", lambda t: mk.nn.swish(t, beta=1.5), lambda xp, x: x * _sigmoid(xp, 1.5 * x), 2.0),
    ("softsign", mk.nn.softsign, lambda xp, x: x / (1 + xp.abs(x)), 1.0),
]


@pytest.mark.parametrize("name, op, ref, scale", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation(name, op, ref, scale):
    x = rand(*SHAPE, seed=40) * scale
    out = check_grad(op, lambda a: ref(jnp, a), x)
    assert_close(out, ref(np, x.astype(np.float64)), what=f"{name} vs numpy")


def test_activation_parameters():
    x = rand(*SHAPE, seed=40)
    assert_close(mk.nn.leaky_relu(x, alpha=0.1), np.where(x > 0, x, 0.1 * x))
    (g,) = gradient_of(lambda t: mk.nn.leaky_relu(t, alpha=0.1), x)
    assert_close(g, np.where(x > 0, 1.0, 0.1))


def test_math_functions_are_also_in_nn():
    assert mk.nn.sigmoid is mk.sigmoid and mk.nn.tanh is mk.tanh and mk.nn.softplus is mk.math.softplus
    np.testing.assert_array_equal(mk.nn.relu(mk.constant([-2, 3])), [0, 3])  # integers work, as in TF


@pytest.mark.parametrize("op, axis", [("softmax", 0), ("log_softmax", -1)])
def test_softmax(op, axis):
    x = rand(*SHAPE, seed=41) * 3.0
    mk_op, jax_op = getattr(mk.nn, op), getattr(jax.nn, op)
    check_grad(lambda t: mk_op(t, axis=axis), lambda a: jax_op(a, axis=axis), x)
    for axis in (0, -1):
        log_p = x - scipy.special.logsumexp(x.astype(np.float64), axis=axis, keepdims=True)
        out = mk_op(x, axis=axis)
        assert_close(out, log_p if op == "log_softmax" else np.exp(log_p), what=f"{op} vs numpy")
    assert_close(mk_op(x), mk_op(x, axis=-1), rtol=0, atol=0, what="default axis is -1")


def test_softmax_is_stable_for_large_logits():
    x = np.array([[1e4, -1e4, 0.0], [1e4, 1e4, -1e4]], np.float32)
    np.testing.assert_allclose(mk.nn.softmax(x), [[1, 0, 0], [0.5, 0.5, 0]], atol=1e-6)
    log2 = np.log(2)
    np.testing.assert_allclose(mk.nn.log_softmax(x), [[0, -2e4, -1e4], [-log2, -log2, -2e4 - log2]], rtol=1e-6)


# -- cross-entropies ---------------------------------------------------------------------------------
def _softmax_ce(xp, labels, logits, axis=-1):
    log_p = logits - (jax.nn.logsumexp if xp is jnp else scipy.special.logsumexp)(logits, axis=axis, keepdims=True)
    return -xp.sum(labels * log_p, axis=axis)


@pytest.mark.parametrize("normalized, axis", [(True, -1), (False, 0)], ids=["distribution", "unnormalized-axis0"])
def test_softmax_cross_entropy(normalized, axis):
    logits = rand(*SHAPE, seed=42) * 2.0
    labels = rand(*SHAPE, seed=43, low=0.0, high=1.0)
    if normalized:
        labels = (labels / labels.sum(axis=axis, keepdims=True)).astype(np.float32)
    out = check_grad(lambda z, x: mk.nn.softmax_cross_entropy_with_logits(z, x, axis=axis),
                     lambda z, x: _softmax_ce(jnp, z, x, axis), labels, logits)
    assert_close(out, _softmax_ce(np, labels.astype(np.float64), logits.astype(np.float64), axis))


def test_sparse_softmax_cross_entropy():
    shape = (2, 3, 4)
    logits = rand(*shape, seed=44) * 2.0
    labels = np.random.default_rng(45).integers(0, shape[-1], shape[:-1]).astype(np.int32)
    out = check_grad(mk.nn.sparse_softmax_cross_entropy_with_logits,
                     lambda z, x: -jnp.take_along_axis(jax.nn.log_softmax(x), z[..., None], -1)[..., 0],
                     labels, logits)
    one_hot = np.eye(shape[-1])[labels]
    assert_close(out, _softmax_ce(np, one_hot, logits.astype(np.float64)))
    grads = gradient_of(mk.nn.sparse_softmax_cross_entropy_with_logits, labels, logits)
    assert grads[0] is None  # integer labels carry no gradient


def _sigmoid_ce(xp, labels, logits):
    return xp.maximum(logits, 0) - logits * labels + xp.log1p(xp.exp(-xp.abs(logits)))


def test_sigmoid_cross_entropy():
    logits = rand(*SHAPE, seed=46) * 3.0
    labels = rand(*SHAPE, seed=47, low=0.0, high=1.0)
    out = check_grad(mk.nn.sigmoid_cross_entropy_with_logits, lambda z, x: _sigmoid_ce(jnp, z, x), labels, logits)
    naive = -(labels * np.log(1 / (1 + np.exp(-logits.astype(np.float64))))
              + (1 - labels) * np.log(1 - 1 / (1 + np.exp(-logits.astype(np.float64)))))
    assert_close(out, naive)


LARGE = np.array([[1e4, -1e4, 0.0, 0.0], [-1e4, -1e4, 1e4, 0.0], [1e4, 1e4, -1e4, -1e4]], np.float32)
ONE_HOT = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]], np.float32)


def _value_and_grads(fn, *inputs):
    tensors = [mk.constant(a) for a in inputs]
    with mk.GradientTape(persistent=True) as outer:
        outer.watch(tensors[-1])
        with mk.GradientTape() as tape:
            tape.watch(tensors[-1])
            loss = fn(*tensors)
        g = tape.gradient(loss, tensors[-1])
        g_sum = mk.reduce_sum(g * g)
    return loss.numpy(), g.numpy(), outer.gradient(g_sum, tensors[-1]).numpy()


def test_cross_entropies_are_stable_at_logits_1e4():
    expected_loss = [2e4, 0.0, np.log(2)]
    softmax_minus_labels = [[1, -1, 0, 0], [0, 0, 0, 0], [-0.5, 0.5, 0, 0]]
    loss, g, h = _value_and_grads(mk.nn.softmax_cross_entropy_with_logits, ONE_HOT, LARGE)
    np.testing.assert_allclose(loss, expected_loss, rtol=1e-6)
    np.testing.assert_allclose(g, softmax_minus_labels, atol=1e-6)
    assert np.isfinite(h).all()

    loss, g, h = _value_and_grads(mk.nn.sparse_softmax_cross_entropy_with_logits, np.array([1, 2, 0], np.int32), LARGE)
    np.testing.assert_allclose(loss, expected_loss, rtol=1e-6)
    np.testing.assert_allclose(g, softmax_minus_labels, atol=1e-6)
    assert np.isfinite(h).all()

    loss, g, h = _value_and_grads(mk.nn.sigmoid_cross_entropy_with_logits, ONE_HOT, LARGE)
    log2 = np.log(2)
    np.testing.assert_allclose(loss, [[1e4, 1e4, log2, log2], [0, 0, 0, log2], [0, 1e4, 0, 0]], rtol=1e-6)
    np.testing.assert_allclose(g, [[1, -1, 0.5, 0.5], [0, 0, 0, 0.5], [0, 1, 0, 0]], atol=1e-6)  # sigmoid - labels
    assert np.isfinite(h).all()


# -- small ops: bias_add, l2_loss, moments, normalisation ---------------------------------------------------
def test_bias_add():
    value, bias = rand(2, 3, 4, seed=48), rand(4, seed=49)
    out = check_grad(lambda v, b: mk.sin(mk.nn.bias_add(v, b)), lambda v, b: jnp.sin(v + b), value, bias)
    assert_close(out, np.sin(value + bias))
    nchw = np.transpose(value, (0, 2, 1))
    assert_close(mk.nn.bias_add(nchw, bias, data_format="NCHW"), nchw + bias[:, None])
    grads = gradient_of(lambda v, b: mk.nn.bias_add(v, b, data_format="NCHW"), nchw, bias)
    assert_close(grads[1], np.full(4, 6.0))


def test_l2_loss_and_l2_normalize():
    x = rand(*SHAPE, seed=50)
    out = check_grad(mk.nn.l2_loss, lambda a: jnp.sum(a * a) / 2, x)
    assert_close(out, np.sum(x.astype(np.float64) ** 2) / 2)
    out = check_grad(lambda t: mk.nn.l2_normalize(t, axis=-1),
                     lambda a: a / jnp.linalg.norm(a, axis=-1, keepdims=True), x)
    assert_close(out, x / np.linalg.norm(x, axis=-1, keepdims=True))


def test_moments():
    x = rand(2, 3, 4, seed=51)

    def mk_fn(t):
        mean, variance = mk.nn.moments(t, axes=[0, 1])
        return mk.concat([mean, variance], 0)

    out = check_grad(mk_fn, lambda a: jnp.concatenate([a.mean((0, 1)), a.var((0, 1))]), x)
    assert_close(out, np.concatenate([x.mean((0, 1)), x.var((0, 1))]))
    mean, variance = mk.nn.moments(x, axes=[1], keepdims=True)
    assert mean.shape == variance.shape == (2, 1, 4)


def test_batch_normalization():
    x, mean, offset, scale = rand(*SHAPE, seed=52), rand(4, seed=53), rand(4, seed=54), rand(4, seed=55)
    variance = rand(4, seed=56, low=0.5, high=2.0)

    def ref(xp, x, m, v, o, s):
        return (x - m) / xp.sqrt(v + 1e-3) * s + o

    out = check_grad(lambda *t: mk.nn.batch_normalization(*t, variance_epsilon=1e-3),
                     lambda *a: ref(jnp, *a), x, mean, variance, offset, scale)
    assert_close(out, ref(np, x, mean, variance, offset, scale))


def test_embedding_lookup():
    params = rand(5, 3, seed=57)
    np.testing.assert_array_equal(mk.nn.embedding_lookup(params, [[4, 0], [1, 1]]), params[[[4, 0], [1, 1]]])


# -- dropout ------------------------------------------------------------------------------------------------
def test_dropout_scales_kept_values_and_drops_the_rest():
    x = np.ones((50, 40), np.float32)
    y = mk.nn.dropout(x, rate=0.25).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.05
    assert float(mk.nn.dropout(x, 0.0).numpy().min()) == 1.0


def test_dropout_gradient_is_the_mask():
    x = mk.constant(rand(*SHAPE, seed=58))
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = mk.nn.dropout(x, 0.5)
    g = tape.gradient(y, x).numpy()
    np.testing.assert_allclose(g * x.numpy(), y.numpy(), rtol=1e-6)
    assert set(np.unique(g)) <= {0.0, 2.0}


def test_dropout_second_order_with_a_fixed_seed():
    x = rand(*SHAPE, seed=59)

    def mk_fn(t):
        mk.random.set_seed(7)
        return mk.nn.dropout(mk.sin(t), 0.5, seed=3)

    mask = mk_fn(mk.ones(SHAPE) * (np.pi / 2)).numpy()  # sin(pi/2) = 1: the mask itself
    check_grad(mk_fn, lambda a: jnp.sin(a) * mask, x)


def test_dropout_noise_shape_and_seed():
    x = np.ones((4, 6), np.float32)
    y = mk.nn.dropout(x, 0.5, noise_shape=[4, 1]).numpy()
    assert (y == y[:, :1]).all()  # whole rows kept or dropped
    mk.random.set_seed(11)
    a = mk.nn.dropout(x, 0.5).numpy()
    mk.random.set_seed(11)
    np.testing.assert_array_equal(mk.nn.dropout(x, 0.5), a)

    @mk.function
    def step(v):
        return mk.nn.dropout(v, 0.5)

    draws = [step(mk.constant(np.ones((8, 8), np.float32))).numpy() for _ in range(2)]
    assert not np.array_equal(*draws)  # compiled calls draw fresh masks


# -- conv2d -----------------------------------------------------------------------------------------------
def _same_pads(size, k, stride, dilation):
    effective = (k - 1) * dilation + 1
    total = max((-(-size // stride) - 1) * stride + effective - size, 0)
    return total // 2, total - total // 2


def _pads(padding, x_hw, k_hw, strides, dilations):
    if padding == "SAME":
        return tuple(_same_pads(n, k, s, d) for n, k, s, d in zip(x_hw, k_hw, strides, dilations))
    if padding == "VALID":
        return (0, 0), (0, 0)
    return tuple(tuple(p) for p in padding[1:3])


def np_conv2d(x, w, strides, padding, dilations):
    """Direct loops over output positions; ``x`` NHWC, ``w`` HWIO."""
    (sh, sw), (dh, dw) = strides, dilations
    pads = _pads(padding, x.shape[1:3], w.shape[:2], strides, dilations)
    x = np.pad(x.astype(np.float64), ((0, 0), pads[0], pads[1], (0, 0)))
    eh, ew = (w.shape[0] - 1) * dh + 1, (w.shape[1] - 1) * dw + 1
    oh, ow = (x.shape[1] - eh) // sh + 1, (x.shape[2] - ew) // sw + 1
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * sh:i * sh + eh:dh, j * sw:j * sw + ew:dw, :]
            out[:, i, j, :] = np.einsum("nhwc,hwco->no", patch, w)
    return out


def np_pool(x, ksize, strides, padding, kind):
    """Direct loops; padded positions never win a max and are left out of a mean (as TensorFlow)."""
    pads = _pads(padding, x.shape[1:3], ksize, strides, (1, 1))
    x = np.pad(x.astype(np.float64), ((0, 0), pads[0], pads[1], (0, 0)), constant_values=np.nan)
    oh, ow = (x.shape[1] - ksize[0]) // strides[0] + 1, (x.shape[2] - ksize[1]) // strides[1] + 1
    reduce = np.nanmax if kind == "max" else np.nanmean
    out = np.zeros((x.shape[0], oh, ow, x.shape[3]))
    for i in range(oh):
        for j in range(ow):
            window = x[:, i * strides[0]:i * strides[0] + ksize[0], j * strides[1]:j * strides[1] + ksize[1], :]
            out[:, i, j, :] = reduce(window, axis=(1, 2))
    return out


X_IMG = rand(2, 5, 6, 3, seed=60)
W_IMG = rand(3, 2, 3, 4, seed=61)
EXPLICIT = [[0, 0], [1, 2], [0, 1], [0, 0]]


def jax_conv(x, w, strides, padding, dilations):
    pads = padding if isinstance(padding, str) else [tuple(p) for p in padding[1:3]]
    return lax.conv_general_dilated(x, w, strides, pads, rhs_dilation=dilations,
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))


CONV_FORWARD = [(p, s, d) for p in ("SAME", "VALID", "EXPLICIT") for s, d in (((1, 1), (1, 1)), ((2, 2), (1, 1)),
                                                                              ((2, 1), (2, 2)))]


@pytest.mark.parametrize("padding, strides, dilations", CONV_FORWARD, ids=str)
def test_conv2d_forward_matches_loops(padding, strides, dilations):
    padding = EXPLICIT if padding == "EXPLICIT" else padding
    out = mk.nn.conv2d(X_IMG, W_IMG, strides=list(strides), padding=padding, dilations=list(dilations))
    assert_close(out, np_conv2d(X_IMG, W_IMG, strides, padding, dilations), what="conv2d vs loops")


# padding, strides, dilations: SAME with stride 2 pads unevenly; VALID with stride 2 leaves rows unused
CONV_GRADS = [("SAME", 1, 1), ("SAME", 2, 1), ("VALID", 2, 1), ("VALID", 1, 2), ("EXPLICIT", 1, 1)]


@pytest.mark.parametrize("padding, stride, dilation", CONV_GRADS, ids=str)
def test_conv2d_gradients(padding, stride, dilation):
    padding = EXPLICIT if padding == "EXPLICIT" else padding
    s, d = (stride, stride), (dilation, dilation)
    check_grad(lambda x, w: mk.nn.conv2d(x, w, strides=stride, padding=padding, dilations=dilation),
               lambda x, w: jax_conv(x, w, s, padding, d), X_IMG, W_IMG, rtol=5e-4, atol=5e-4)


def test_conv2d_nchw_and_four_element_strides():
    x_nchw = np.transpose(X_IMG, (0, 3, 1, 2))
    out = check_grad(lambda x, w: mk.nn.conv2d(x, w, strides=[1, 1, 2, 2], padding="SAME", data_format="NCHW"),
                     lambda x, w: jnp.transpose(jax_conv(jnp.transpose(x, (0, 2, 3, 1)), w, (2, 2), "SAME", (1, 1)),
                                                (0, 3, 1, 2)),
                     x_nchw, W_IMG, order=1, rtol=5e-4, atol=5e-4)
    assert_close(out, np.transpose(np_conv2d(X_IMG, W_IMG, (2, 2), "SAME", (1, 1)), (0, 3, 1, 2)))


def np_conv2d_transpose(x, w, output_shape, strides, padding):
    """Scatters each input pixel times the filter into the output (``w`` is [h, w, out, in])."""
    pads = _pads(padding, output_shape[1:3], w.shape[:2], strides, (1, 1))
    kh, kw = w.shape[:2]
    size = [max((x.shape[1 + a] - 1) * strides[a] + w.shape[a], output_shape[1 + a] + sum(pads[a])) for a in (0, 1)]
    out = np.zeros((x.shape[0], size[0], size[1], w.shape[2]))
    for i in range(x.shape[1]):
        for j in range(x.shape[2]):
            out[:, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw, :] += np.einsum(
                "nc,hwoc->nhwo", x[:, i, j, :], w)
    return out[:, pads[0][0]:pads[0][0] + output_shape[1], pads[1][0]:pads[1][0] + output_shape[2], :]


def test_conv2d_transpose():
    w = rand(3, 2, 3, 4, seed=62)  # [height, width, output_channels, in_channels]
    dy = rand(2, 3, 3, 4, seed=63)
    shape = (2, 5, 6, 3)

    def ref(y, f):
        return jax.vjp(lambda x: jax_conv(x, f, (2, 2), "SAME", (1, 1)), jnp.zeros(shape, y.dtype))[1](y)[0]

    out = check_grad(lambda y, f: mk.nn.conv2d_transpose(y, f, shape, strides=2, padding="SAME"), ref, dy, w)
    assert_close(out, np_conv2d_transpose(dy, w, shape, (2, 2), "SAME"), what="conv2d_transpose vs loops")


# -- pooling ------------------------------------------------------------------------------------------------
POOL_FORWARD = [(kind, p, k, s) for kind in ("max", "avg") for p in ("SAME", "VALID") for k, s in ((2, 2), (3, 1))]


@pytest.mark.parametrize("kind, padding, ksize, stride", POOL_FORWARD, ids=str)
def test_pool_forward_matches_loops(kind, padding, ksize, stride):
    op = mk.nn.max_pool2d if kind == "max" else mk.nn.avg_pool2d
    out = op(X_IMG, ksize=ksize, strides=stride, padding=padding)
    assert_close(out, np_pool(X_IMG, (ksize, ksize), (stride, stride), padding, kind), what=f"{kind} pool vs loops")


def test_max_pool_explicit_padding_and_nchw():
    pads = [[0, 0], [1, 0], [0, 1], [0, 0]]
    out = mk.nn.max_pool2d(X_IMG, ksize=[2, 3], strides=[1, 2], padding=pads)
    assert_close(out, np_pool(X_IMG, (2, 3), (1, 2), pads, "max"))
    nchw = mk.nn.avg_pool2d(np.transpose(X_IMG, (0, 3, 1, 2)), 2, 2, "SAME", data_format="NCHW")
    assert_close(nchw, np.transpose(np_pool(X_IMG, (2, 2), (2, 2), "SAME", "avg"), (0, 3, 1, 2)))


def jax_pool(x, kind, ksize, stride, padding):
    window, steps = (1, ksize, ksize, 1), (1, stride, stride, 1)
    if kind == "max":
        return lax.reduce_window(x, -jnp.inf, lax.max, window, steps, padding)
    sums = lax.reduce_window(x, 0.0, lax.add, window, steps, padding)
    counts = lax.reduce_window(jnp.ones_like(x), 0.0, lax.add, window, steps, padding)
    return sums / counts


@pytest.mark.parametrize("kind, padding, ksize, stride", [("max", "SAME", 3, 2), ("max", "VALID", 2, 1),
                                                          ("avg", "SAME", 3, 2), ("avg", "VALID", 2, 2)], ids=str)
def test_pool_gradients(kind, padding, ksize, stride):
    op = mk.nn.max_pool2d if kind == "max" else mk.nn.avg_pool2d
    check_grad(lambda x: mk.sin(op(x, ksize, stride, padding)),
               lambda x: jnp.sin(jax_pool(x, kind, ksize, stride, padding)), X_IMG)


def test_max_pool_gradient_goes_to_the_max():
    x = np.array([1.0, 5.0, 2.0, 3.0, 0.0, 4.0, 7.0, 6.0, 8.0], np.float32).reshape(1, 3, 3, 1)
    (g,) = gradient_of(lambda t: mk.nn.max_pool2d(t, 2, 1, "VALID"), x)
    np.testing.assert_array_equal(g.numpy().reshape(3, 3), [[0, 2, 0], [0, 0, 0], [1, 0, 1]])  # 5 wins twice
    tie = np.array([[1, 1], [1, 0]], np.float32)[None, ..., None]
    (g,) = gradient_of(lambda t: mk.nn.max_pool2d(t, 2, 2, "VALID"), tie)
    np.testing.assert_array_equal(g.numpy().reshape(2, 2), [[1, 0], [0, 0]])  # a tie: the first maximum, as TF


# -- errors -------------------------------------------------------------------------------------------------
def test_conv_and_pool_errors():
    x, w = mk.constant(X_IMG), mk.constant(W_IMG)
    with pytest.raises(ValueError, match="conv2d: padding must be 'SAME', 'VALID' or a list .* received 'FULL'"):
        mk.nn.conv2d(x, w, 1, "FULL")
    with pytest.raises(ValueError, match="input depth 4 must equal the filters' in_channels 3"):
        mk.nn.conv2d(mk.zeros([1, 5, 5, 4]), w, 1, "SAME")
    with pytest.raises(ValueError, match=r"conv2d: input must be 4-dimensional, received shape \(5, 6, 3\)"):
        mk.nn.conv2d(X_IMG[0], w, 1, "SAME")
    with pytest.raises(ValueError, match="strides must be an int or a list of 1, 2 or 4 ints"):
        mk.nn.conv2d(x, w, [1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="must be 1 in the batch and depth dimensions"):
        mk.nn.conv2d(x, w, [2, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="computed output size would be"):
        mk.nn.conv2d(mk.zeros([1, 2, 2, 3]), w, 1, "VALID")
    with pytest.raises(TypeError, match="expected to be a float32 tensor but is a float16"):
        mk.nn.conv2d(x, mk.cast(w, mk.float16), 1, "SAME")
    with pytest.raises(ValueError, match="data_format must be 'NHWC' or 'NCHW'"):
        mk.nn.conv2d(x, w, 1, "SAME", data_format="NWHC")
    with pytest.raises(ValueError, match="max_pool2d: padding must be"):
        mk.nn.max_pool2d(x, 2, 2, "same-ish")
    with pytest.raises(ValueError, match="avg_pool2d: padding must be 'SAME' or 'VALID'"):
        mk.nn.avg_pool2d(x, 2, 2, EXPLICIT)
    with pytest.raises(ValueError, match="ksize must be positive"):
        mk.nn.max_pool2d(x, 0, 1, "VALID")
    with pytest.raises(ValueError, match="conv2d_transpose: conv2d of output_shape"):
        mk.nn.conv2d_transpose(mk.zeros([2, 3, 3, 4]), mk.zeros([3, 2, 3, 4]), [2, 9, 9, 3], 2)


def test_loss_and_activation_errors():
    logits = mk.constant(rand(*SHAPE))
    with pytest.raises(ValueError, match=r"logits and labels must have the same shape.*\(3, 4\).*\(3, 3\)"):
        mk.nn.softmax_cross_entropy_with_logits(np.zeros((3, 3), np.float32), logits)
    with pytest.raises(TypeError, match="labels have dtype float16 but logits have dtype float32"):
        mk.nn.sigmoid_cross_entropy_with_logits(mk.zeros(SHAPE, mk.float16), logits)
    with pytest.raises(ValueError, match="Rank mismatch: rank of labels \\(received 2\\)"):
        mk.nn.sparse_softmax_cross_entropy_with_logits(np.zeros(SHAPE, np.int32), logits)
    with pytest.raises(ValueError, match=r"Received a label value of 4 which is outside the valid range of \[0, 4\)"):
        mk.nn.sparse_softmax_cross_entropy_with_logits(np.array([0, 4, 1], np.int32), logits)
    with pytest.raises(TypeError, match="labels must be integer class indices"):
        mk.nn.sparse_softmax_cross_entropy_with_logits(np.zeros(3, np.float32), logits)
    with pytest.raises(TypeError, match="softmax expects a floating-point logits tensor"):
        mk.nn.softmax(mk.constant([1, 2]))
    with pytest.raises(ValueError, match="softmax: axis 2 is out of range"):
        mk.nn.softmax(logits, axis=2)
    with pytest.raises(ValueError, match="Must provide as many biases as the channel dimension"):
        mk.nn.bias_add(logits, mk.zeros([3]))
    with pytest.raises(ValueError, match=r"dropout: rate must be .* in the range \[0, 1\), received 1.0"):
        mk.nn.dropout(logits, 1.0)
    with pytest.raises(ValueError, match="noise_shape"):
        mk.nn.dropout(logits, 0.5, noise_shape=[2, 4])


def test_sparse_labels_out_of_range_inside_function_give_nan():
    @mk.function
    def loss(labels, logits):
        return mk.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)

    out = loss(mk.constant([0, 7, 1]), mk.constant(rand(*SHAPE))).numpy()
    assert np.isfinite(out[[0, 2]]).all() and np.isnan(out[1])
