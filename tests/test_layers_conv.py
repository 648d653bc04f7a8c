"""Conv2D and the pooling layers against direct NumPy loops over output positions."""
import math

import numpy as np
import pytest

import minikeras as mk

layers = mk.layers


def _pad_amounts(length, kernel, stride, padding):
    if padding == "valid":
        return (length - kernel) // stride + 1, 0, 0
    out = math.ceil(length / stride)
    total = max((out - 1) * stride + kernel - length, 0)
    return out, total // 2, total - total // 2  # TF/Keras put the extra row at the end


def numpy_conv2d(x, kernel, bias, strides, padding, dilation):
    kh, kw, _, filters = kernel.shape
    dh, dw = dilation
    span_h, span_w = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    out_h, top, bottom = _pad_amounts(x.shape[1], span_h, strides[0], padding)
    out_w, left, right = _pad_amounts(x.shape[2], span_w, strides[1], padding)
    x = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)))
    out = np.zeros((x.shape[0], out_h, out_w, filters))
    for i in range(out_h):
        for j in range(out_w):
            r, c = i * strides[0], j * strides[1]
            patch = x[:, r:r + span_h:dh, c:c + span_w:dw, :]
            out[:, i, j, :] = np.tensordot(patch, kernel, axes=([1, 2, 3], [0, 1, 2]))
    return out + (0 if bias is None else bias)


def numpy_pool2d(x, pool, strides, padding, kind):
    out_h, top, bottom = _pad_amounts(x.shape[1], pool[0], strides[0], padding)
    out_w, left, right = _pad_amounts(x.shape[2], pool[1], strides[1], padding)
    x = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=np.nan)
    out = np.zeros((x.shape[0], out_h, out_w, x.shape[3]))
    for i in range(out_h):
        for j in range(out_w):
            r, c = i * strides[0], j * strides[1]
            window = x[:, r:r + pool[0], c:c + pool[1], :]
            # padding never wins a max and is not counted in a mean (TF's rule)
            out[:, i, j, :] = (np.nanmax if kind == "max" else np.nanmean)(window, axis=(1, 2))
    return out


X = np.random.default_rng(0).standard_normal((2, 7, 6, 3)).astype(np.float32)

CONV_CASES = [
    dict(kernel_size=3),
    dict(kernel_size=(3, 2), strides=(2, 1), padding="same"),
    dict(kernel_size=3, strides=2, padding="valid", use_bias=False),
    dict(kernel_size=(2, 3), padding="same", dilation_rate=2, activation="relu"),
    dict(kernel_size=1, strides=(1, 3), padding="same", activation="tanh"),
]


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_conv2d_matches_a_direct_numpy_convolution(case):
    conv = layers.Conv2D(4, kernel_initializer="zeros", **case)
    conv(X)  # builds
    rng = np.random.default_rng(1)
    weights = [rng.standard_normal(w.shape).astype(np.float32) for w in conv.weights]
    conv.set_weights(weights)
    out = conv(X).numpy()
    expected = numpy_conv2d(X.astype(np.float64), weights[0].astype(np.float64),
                            weights[1] if len(weights) == 2 else None,
                            conv.strides, conv.padding, conv.dilation_rate)
    if case.get("activation") == "relu":
        expected = np.maximum(expected, 0)
    elif case.get("activation") == "tanh":
        expected = np.tanh(expected)
    assert out.shape == expected.shape
    assert out.shape[1:] == conv.compute_output_shape((None,) + X.shape[1:])[1:]
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    assert len(conv.weights) == (1 if case.get("use_bias") is False else 2)


def test_conv2d_kernel_shape_and_channel_check():
    conv = layers.Conv2D(4, 3, kernel_initializer="zeros", name="conv_channels")
    conv(X)
    assert conv.kernel.shape == (3, 3, 3, 4) and conv.bias.shape == (4,)
    assert conv.kernel.path == "conv_channels/kernel"
    with pytest.raises(ValueError, match=r"Conv2D 'conv_channels' expects inputs with 3 channels.*\(2, 7, 6, 1\)"):
        conv(X[..., :1])


POOL_CASES = [
    (layers.MaxPooling2D, dict()),
    (layers.MaxPooling2D, dict(pool_size=3, strides=2, padding="same")),
    (layers.MaxPooling2D, dict(pool_size=(2, 3), strides=1)),
    (layers.AveragePooling2D, dict()),
    (layers.AveragePooling2D, dict(pool_size=3, strides=2, padding="same")),
    (layers.AveragePooling2D, dict(pool_size=(3, 2), strides=(1, 2), padding="same")),
]


@pytest.mark.parametrize("cls,case", POOL_CASES, ids=lambda v: v.__name__ if isinstance(v, type) else str(v))
def test_pooling_matches_numpy(cls, case):
    pool = cls(**case)
    out = pool(X).numpy()
    kind = "max" if cls is layers.MaxPooling2D else "avg"
    expected = numpy_pool2d(X.astype(np.float64), pool.pool_size, pool.strides, pool.padding, kind)
    assert out.shape[1:] == pool.compute_output_shape((None,) + X.shape[1:])[1:]
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_max_pooling_of_16_channels_matches_numpy_and_its_gradient_goes_to_the_maxima():
    # 16 channels in 2x2 windows that tile all but the last row: the gradient goes to each
    # window's first maximum
    x = np.random.default_rng(5).standard_normal((2, 9, 8, 16)).astype(np.float32)
    pool = layers.MaxPooling2D(pool_size=(2, 2))
    xs = mk.constant(x)
    with mk.GradientTape() as tape:
        tape.watch(xs)
        out = pool(xs)
        loss = mk.reduce_sum(out * mk.constant(np.arange(out.shape[-1], dtype=np.float32)))
    np.testing.assert_array_equal(out.numpy(), numpy_pool2d(x, (2, 2), (2, 2), "valid", "max").astype(np.float32))
    grad = tape.gradient(loss, xs).numpy()
    windows = x[:, :8, :8].reshape(2, 4, 2, 4, 2, 16).transpose(0, 1, 3, 5, 2, 4).reshape(2, 4, 4, 16, 4)
    expected = np.zeros_like(x)
    first = windows.argmax(-1)
    for b, i, j, c in np.ndindex(2, 4, 4, 16):
        expected[b, 2 * i + first[b, i, j, c] // 2, 2 * j + first[b, i, j, c] % 2, c] = c
    np.testing.assert_array_equal(grad, expected)


def test_pooling_strides_default_to_the_pool_size():
    assert layers.MaxPooling2D(pool_size=3).strides == (3, 3)
    assert layers.MaxPool2D is layers.MaxPooling2D and layers.AvgPool2D is layers.AveragePooling2D


def test_global_pooling():
    np.testing.assert_allclose(layers.GlobalAveragePooling2D()(X).numpy(), X.mean(axis=(1, 2)), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(layers.GlobalAveragePooling2D(keepdims=True)(X).numpy(),
                               X.mean(axis=(1, 2), keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(layers.GlobalMaxPooling2D()(X).numpy(), X.max(axis=(1, 2)))


def test_conv_gradients_flow_to_the_kernel():
    conv = layers.Conv2D(4, 3, kernel_initializer="zeros")
    conv(X)
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(conv(X))
    kernel_grad, bias_grad = tape.gradient(loss, conv.trainable_variables)
    # d/dK sum(conv) = sum of each input patch: a valid 3x3 window sum per channel
    expected = np.zeros((3, 3, 3))
    for a in range(3):
        for b in range(3):
            expected[a, b] = X[:, a:a + 5, b:b + 4, :].sum(axis=(0, 1, 2))
    np.testing.assert_allclose(kernel_grad.numpy(), np.repeat(expected[..., None], 4, axis=-1), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(bias_grad.numpy(), np.full(4, 2 * 5 * 4.0))


def test_rank_3_images_report_the_real_shape_and_the_channel_axis():
    conv = mk.layers.Conv2D(2, 3, name="conv_rank3")
    with pytest.raises(ValueError, match=r"'conv_rank3'.*expected ndim=4, found ndim=3\. Full shape received: "
                                         r"\(5, 28, 28\).*x\.reshape\(-1, 28, 28, 1\)"):
        conv(np.zeros((5, 28, 28), np.float32))
    wrong = mk.Sequential([mk.layers.Conv2D(2, 3), mk.layers.Flatten(), mk.layers.Dense(1)])
    wrong.compile("sgd", "mse")
    with pytest.raises(ValueError, match=r"Full shape received: \(None, 6, 6\).*input_shape=\(6, 6, 1\)"):
        wrong.fit(np.zeros((64, 6, 6), np.float32), np.zeros((64, 1), np.float32), verbose=0)


def _tape_grads_of_a_relu_conv(fused, native, second_order, monkeypatch):
    """Gradients (and the gradient of a gradient norm) of a Conv2D(relu) layer in a compiled tape
    step, with the layer's fused conv + bias + ReLU op or the three ops it replaces."""
    from minikeras.ops import nn_conv
    from minikeras.xla_cpu import tuning
    monkeypatch.setattr(tuning, "NATIVE_KERNELS", native)
    conv = layers.Conv2D(32, 3, padding="same", activation="relu")
    if not fused:
        monkeypatch.setattr(conv, "call", lambda x: mk.nn.relu(
            mk.nn.conv2d(x, conv.kernel, 1, "SAME") + conv.bias))
    x = mk.constant(np.random.default_rng(3).standard_normal((2, 10, 12, 16)).astype(np.float32))
    conv(x)
    rng = np.random.default_rng(4)
    conv.set_weights([rng.standard_normal(w.shape).astype(np.float32) * 0.2 for w in conv.weights])
    calls = []
    monkeypatch.setattr(nn_conv._conv2d_bias_relu, "forward", _counting(nn_conv._conv2d_bias_relu.forward, calls))

    @mk.function
    def step(x):
        with mk.GradientTape() as outer:
            outer.watch(x)
            with mk.GradientTape() as tape:
                tape.watch(x)
                loss = mk.reduce_sum(mk.sin(conv(x)))
            grads = tape.gradient(loss, [x, *conv.trainable_variables])
            norm = sum(mk.reduce_sum(g * g) for g in grads)
        return grads + (outer.gradient(norm, [x, *conv.trainable_variables]) if second_order else [])

    out = [g.numpy() for g in step(x)]
    assert bool(calls) == fused
    return out


@pytest.mark.parametrize("native", [True, False], ids=["native", "xla"])
def test_conv2d_relu_layer_runs_as_one_op_with_the_same_gradients(native, monkeypatch):
    fused = _tape_grads_of_a_relu_conv(True, native, True, monkeypatch)
    plain = _tape_grads_of_a_relu_conv(False, native, True, monkeypatch)
    for name, a, b in zip(["dx", "dkernel", "dbias", "d2x", "d2kernel", "d2bias"], fused, plain):
        scale = max(1.0, float(np.abs(b).max()))
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5 * scale, err_msg=name)


def _counting(forward, calls):
    def counted(*args, **kwargs):
        calls.append(1)
        return forward(*args, **kwargs)
    return counted


def test_fused_conv_bias_relu_names_a_bias_of_the_wrong_shape():
    from minikeras.ops.nn_conv import conv2d_bias_relu
    with pytest.raises(ValueError, match=r"conv2d: bias must have shape \(4,\).*received shape \(3,\)"):
        conv2d_bias_relu(X, np.zeros((3, 3, 3, 4), np.float32), np.zeros(3, np.float32), 1, "SAME")
