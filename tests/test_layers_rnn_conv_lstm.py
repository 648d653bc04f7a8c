"""ConvLSTM1D, ConvLSTM2D, ConvLSTM3D against real Keras 3: outputs, final states and gradients
(of the input, the initial states and every weight) on the same weights, for every rank, both
data formats, strides, dilation, masks, go_backwards and unroll; Keras's files of them load
and give Keras's output, and ours read back; second-order gradients through the tape equal
``jax.grad`` of a plain jax ConvLSTM; configs, shapes, dropout, stateful layers and bad input.
Fixtures: ``tests/fixtures/keras_conv_lstm/make_conv_lstm_fixtures.py``."""
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_close

import minikeras as mk
from minikeras import keras
from minikeras.layers.rnn.conv_lstm_cell import ConvLSTMCell

L = mk.layers
HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_conv_lstm")

CASES = {  # the layers of make_conv_lstm_fixtures.py, in minikeras
    "c2d_same": lambda: L.ConvLSTM2D(2, 3, padding="same", return_sequences=True, return_state=True),
    "c2d_strides": lambda: L.ConvLSTM2D(3, (2, 3), strides=(2, 1), activation="relu",
                                        recurrent_activation="hard_sigmoid", unit_forget_bias=False,
                                        go_backwards=True, return_state=True),
    "c2d_channels_first": lambda: L.ConvLSTM2D(2, 2, dilation_rate=2, padding="same", data_format="channels_first",
                                               return_sequences=True),
    "c1d": lambda: L.ConvLSTM1D(2, 3, padding="same", use_bias=False, return_sequences=True, go_backwards=True),
    "c1d_unroll": lambda: L.ConvLSTM1D(3, 2, unroll=True, return_state=True),
    "c3d": lambda: L.ConvLSTM3D(2, 2, padding="valid", return_sequences=True, return_state=True),
    "bidirectional_c1d": lambda: L.Bidirectional(L.ConvLSTM1D(2, 3, padding="same", return_sequences=True)),
}


def load(name):
    data = np.load(os.path.join(HERE, f"{name}.npz"))
    return {k: data[k] for k in data}


def indexed(data, prefix):
    keys = [k for k in data if k.startswith(prefix) and k[len(prefix):].isdigit()]
    return [data[f"{prefix}{k}"] for k in range(len(keys))]


def as_list(outs):
    return list(outs) if isinstance(outs, (list, tuple)) else [outs]


@pytest.fixture(scope="module")
def results():
    """Every case's outputs and gradients from ONE compiled program (compiling is most of the
    cost of these tiny loops)."""
    cases = sorted(CASES)
    data = {case: load(case) for case in cases}
    layers = {}
    for case in cases:
        layers[case] = CASES[case]()
        layers[case].build(data[case]["x"].shape)
        layers[case].set_weights(indexed(data[case], "w"))

    @mk.function(autograph=False)
    def run(inputs):
        found = {}
        for case in cases:
            x, mask, states, rs = inputs[case]
            kwargs = {} if mask is None else {"mask": mask}
            with mk.GradientTape() as tape:
                tape.watch(x)
                for s in states:
                    tape.watch(s)
                if states:
                    kwargs["initial_state"] = list(states)
                outs = as_list(layers[case](x, **kwargs))
                loss = sum(mk.reduce_sum(o * r) for o, r in zip(outs, rs))
            found[case] = (outs, tape.gradient(loss, [x] + list(states) + layers[case].trainable_weights))
        return found

    inputs = {case: (mk.constant(d["x"]), mk.constant(d["mask"]) if "mask" in d else None,
                     [mk.constant(s) for s in indexed(d, "s")], [mk.constant(r) for r in indexed(d, "r")])
              for case, d in data.items()}
    return data, run(inputs)


@pytest.mark.parametrize("case", sorted(CASES))
def test_outputs_and_gradients_match_keras(case, results):
    data, found = results
    data, (outs, grads) = data[case], found[case]
    expected = indexed(data, "out")
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected):
        assert_close(got.numpy(), want, atol=2e-5, rtol=2e-5)
    wanted = [data["gx"]] + indexed(data, "gs") + indexed(data, "gw")
    assert len(grads) == len(wanted)
    for got, want in zip(grads, wanted):
        assert_close(got.numpy(), want, atol=5e-5, rtol=5e-5)


def test_keras_test_values():
    # the numbers of Keras 3's own conv_lstm_test.py and conv_lstm2d_test.py
    const = keras.initializers.Constant
    x = np.arange(150).reshape((2, 5, 5, 3)).astype("float32") / 10
    s = np.arange(200).reshape((2, 5, 5, 4)).astype("float32") / 10
    cell = ConvLSTMCell(2, 4, 3, padding="same", kernel_initializer=const(0.01),
                          recurrent_initializer=const(0.02))
    out, (h, c) = cell(x, [s, s])
    assert_close(np.sum(out.numpy()), 188.89502, rtol=1e-5)
    assert_close(np.sum(h.numpy()), 188.89502, rtol=1e-5)
    assert_close(np.sum(c.numpy()), 2170.444, rtol=1e-5)

    seq = np.arange(450).reshape((2, 3, 5, 5, 3)).astype("float32") / 100
    s = np.arange(200).reshape((2, 5, 5, 4)).astype("float32") / 100
    layer = L.ConvLSTM2D(4, 3, padding="same", kernel_initializer=const(0.01), recurrent_initializer=const(0.02))
    assert_close(np.sum(layer(seq, initial_state=[s, s]).numpy()), 119.812454, rtol=1e-5)

    seq = np.arange(480).reshape((2, 3, 4, 4, 5)).astype("float32") / 100
    layer = L.ConvLSTM2D(2, 3, kernel_initializer=const(0.01), recurrent_initializer=const(0.02),
                         bias_initializer=const(0.03))
    expected = [[[[0.48694518, 0.48694518], [0.50237733, 0.50237733]],
                 [[0.5461202, 0.5461202], [0.5598283, 0.5598283]]],
                [[[0.8661607, 0.8661607], [0.86909103, 0.86909103]],
                 [[0.8774414, 0.8774414], [0.8800861, 0.8800861]]]]
    assert_close(layer(seq).numpy(), np.array(expected), atol=1e-6)

    seq = np.arange(120).reshape((2, 3, 4, 5)).astype("float32") / 10  # conv_lstm1d_test.py, channels first
    layer = L.ConvLSTM1D(2, 3, data_format="channels_first", kernel_initializer=const(0.01),
                         recurrent_initializer=const(0.02), bias_initializer=const(0.03))
    expected = [[[0.40807986, 0.40807986], [0.46421072, 0.46421072]],
                [[0.80933154, 0.80933154], [0.8233646, 0.8233646]]]
    assert_close(layer(seq.transpose((0, 1, 3, 2))).numpy(), np.array(expected).transpose((0, 2, 1)), atol=1e-6)


def reference_conv_lstm(x, kernel, recurrent, bias, dp=None, rdp=None):
    """Keras 3's ConvLSTM2D ('same' padding, channels last) written directly in jax; with dropout
    masks ``dp``, ``rdp`` (4 each, one per gate i, f, c, o) as Keras's cell applies them.
    Returns the (time, batch, ...) outputs."""
    dn = ("NHWC", "HWIO", "NHWC")

    def conv(a, w):
        return jax.lax.conv_general_dilated(a, w, (1, 1), "SAME", dimension_numbers=dn)

    def gates(a, w, masks):
        if masks is None:
            return conv(a, w)
        return jnp.concatenate([conv(a * m, k) for m, k in zip(masks, jnp.split(w, 4, axis=-1))], axis=-1)

    def step(carry, x_t):
        h, c = carry
        i, f, g, o = jnp.split(gates(x_t, kernel, dp) + bias + gates(h, recurrent, rdp), 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h
    zeros = jnp.zeros(x.shape[:1] + x.shape[2:4] + (recurrent.shape[2],), x.dtype)
    _, hs = jax.lax.scan(step, (zeros, zeros), jnp.swapaxes(x, 0, 1))
    return hs


def test_first_and_second_order_gradients_match_jax():
    X = np.random.default_rng(1).normal(size=(1, 3, 3, 3, 2)).astype("float32")
    layer = L.ConvLSTM2D(2, 2, padding="same", return_sequences=True, bias_initializer="random_normal")
    layer(X)
    kernel, recurrent, bias = [v.numpy() for v in layer.trainable_weights]
    x = mk.Variable(X)

    @mk.function(autograph=False)  # one program: compiling each order's op apart costs more
    def tape_gradients():
        with mk.GradientTape() as outer:
            with mk.GradientTape() as inner:
                loss = mk.reduce_sum(layer(x) ** 2)
            gx, gk = inner.gradient(loss, [x, layer.cell.kernel])
            second = mk.reduce_sum(gx ** 2) + mk.reduce_sum(gk ** 2)
        return gx, gk, outer.gradient(second, [x, layer.cell.kernel])

    def f(x, k):
        return jnp.sum(reference_conv_lstm(x, k, recurrent, bias) ** 2)

    def g(x, k):
        gx, gk = jax.grad(f, argnums=(0, 1))(x, k)
        return jnp.sum(gx ** 2) + jnp.sum(gk ** 2), (gx, gk)

    gx, gk, (gxx, gxk) = tape_gradients()
    (want_xx, want_xk), (want_x, want_k) = jax.jit(jax.grad(g, argnums=(0, 1), has_aux=True))(X, kernel)
    assert_close(gx.numpy(), want_x, atol=1e-5)
    assert_close(gk.numpy(), want_k, atol=1e-5)
    assert_close(gxx.numpy(), want_xx, atol=1e-4, rtol=1e-4)
    assert_close(gxk.numpy(), want_xk, atol=1e-4, rtol=1e-4)


def test_keras_files_load_and_ours_read_back(tmp_path):
    data = load("model")
    model = mk.models.load_model(os.path.join(HERE, "model.keras"))
    assert [type(layer).__name__ for layer in model.layers] == ["ConvLSTM2D", "TimeDistributed", "ConvLSTM1D"]
    assert_close(model(mk.constant(data["x"])).numpy(), data["y"], atol=2e-5, rtol=2e-5)
    model.save(tmp_path / "again.keras")
    again = mk.models.load_model(tmp_path / "again.keras")
    assert again.layers[2].get_config() == model.layers[2].get_config()
    assert_close(again(mk.constant(data["x"])).numpy(), data["y"], atol=2e-5, rtol=2e-5)

    built = mk.Sequential([mk.Input((3, 4, 4, 2)), L.ConvLSTM2D(2, 3, padding="same", return_sequences=True),
                           L.TimeDistributed(L.Reshape((4, 8))),
                           L.ConvLSTM1D(2, 3, data_format="channels_first", recurrent_dropout=0.2)])
    built.load_weights(os.path.join(HERE, "model.weights.h5"))
    assert_close(built(mk.constant(data["x"])).numpy(), data["y"], atol=2e-5, rtol=2e-5)
    assert [w.name for w in built.layers[0].weights] == ["kernel", "recurrent_kernel", "bias"]


def test_config_round_trip_and_keras_names():
    layer = L.ConvLSTM3D(3, (1, 2, 3), strides=(1, 2, 1), padding="same", data_format="channels_first",
                         activation="relu", recurrent_activation="hard_sigmoid", unit_forget_bias=False,
                         kernel_regularizer="l2", dropout=0.25, recurrent_dropout=0.5, seed=7, go_backwards=True,
                         return_state=True, stateful=False, unroll=True)
    config = layer.get_config()
    assert "cell" not in config and "rank" not in config
    for key, value in dict(filters=3, kernel_size=(1, 2, 3), strides=(1, 2, 1), padding="same",
                           data_format="channels_first", dilation_rate=(1, 1, 1), activation="relu",
                           recurrent_activation="hard_sigmoid", unit_forget_bias=False, dropout=0.25,
                           recurrent_dropout=0.5, seed=7, go_backwards=True, return_state=True, unroll=True,
                           activity_regularizer=None, zero_output_for_mask=False).items():
        assert config[key] == value, key
    again = L.ConvLSTM3D.from_config(config)
    assert again.get_config() == config
    assert (again.filters, again.kernel_size, again.dropout) == (3, (1, 2, 3), 0.25)  # read through the cell
    assert keras.layers.ConvLSTM1D is L.ConvLSTM1D and keras.layers.ConvLSTM3D is L.ConvLSTM3D
    layer.build((2, 3, 2, 4, 4, 4))  # the kernel's l2 penalty, as Keras's 0.01 * sum(w ** 2)
    assert_close(float(sum(layer.losses)), 0.01 * np.sum(layer.cell.kernel.numpy() ** 2), rtol=1e-5)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_symbolic_shapes_in_functional_models(data_format):
    shape = (3, 6, 5, 2) if data_format == "channels_last" else (3, 2, 6, 5)
    inputs = mk.Input(shape)
    out, h, c = L.ConvLSTM2D(4, 3, strides=2, data_format=data_format, return_sequences=True,
                             return_state=True)(inputs)
    state = (None, 2, 2, 4) if data_format == "channels_last" else (None, 4, 2, 2)
    assert tuple(out.shape) == (None, 3) + state[1:] and tuple(h.shape) == state and tuple(c.shape) == state
    model = mk.Model(inputs, [out, h])
    y, hy = model(np.ones((2,) + shape, "float32"))
    assert y.shape == (2, 3) + state[1:] and hy.shape == (2,) + state[1:]
    assert_close(y.numpy()[:, -1], hy.numpy())
    layer = L.ConvLSTM1D(2, 3)
    assert layer.compute_output_shape((None, 4, 7, 3)) == (None, 5, 2)


def test_masked_steps_keep_the_states():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 4, 5, 2)).astype("float32")
    layer = L.ConvLSTM1D(2, 3, padding="same", return_sequences=True, return_state=True)
    mask = np.array([[1, 1, 0, 0], [1, 1, 1, 1]], bool)
    seq, h, c = layer(x, mask=mask)
    _, h2, c2 = layer(x[:, :2])
    assert_close(h.numpy()[0], h2.numpy()[0])
    assert_close(c.numpy()[0], c2.numpy()[0])
    assert_close(seq.numpy()[0, 3], seq.numpy()[0, 1])  # a masked step repeats the last output


def test_dropout_is_drawn_once_per_call_and_only_in_training():
    x = np.random.default_rng(3).normal(size=(2, 3, 4, 4, 2)).astype("float32")
    layer = L.ConvLSTM2D(3, 2, padding="same", dropout=0.5, recurrent_dropout=0.5, return_sequences=True)
    plain = L.ConvLSTM2D(3, 2, padding="same", return_sequences=True)
    layer(x)
    plain(x)
    plain.set_weights(layer.get_weights())
    assert_close(layer(x).numpy(), plain(x).numpy())  # inference: no dropout
    state = layer.cell.seed_generator.state  # the masks' draws come from the cell's SeedGenerator
    start = state.numpy()
    first = layer(x, training=True).numpy()
    state.assign(start)
    assert_close(layer(x, training=True).numpy(), first)  # the same state: the same draw
    assert not np.allclose(layer(x, training=True).numpy(), first)  # the state advanced: another draw
    assert not np.allclose(first, plain(x).numpy())
    # Keras's formula: four masks (one per gate) on the input, four on h, the same at every step
    state.assign(start)
    dp, rdp = [m.numpy() for m in layer.cell.dropout_masks((2, 4, 4, 2), (2, 4, 4, 3), "float32", True)]
    assert dp.shape == (4, 2, 4, 4, 2) and rdp.shape == (4, 2, 4, 4, 3)
    assert set(np.unique(dp)) <= {0.0, 2.0} and 0 < np.mean(dp == 0) < 1
    kernel, recurrent, bias = [v.numpy() for v in layer.trainable_weights]
    want = reference_conv_lstm(x, kernel, recurrent, bias, dp, rdp)
    assert_close(first, np.swapaxes(want, 0, 1), atol=1e-5)


def test_stateful_layer_carries_its_states():
    x = np.random.default_rng(4).normal(size=(2, 4, 5, 2)).astype("float32")
    stateful = L.ConvLSTM1D(2, 3, padding="same", stateful=True)
    whole = L.ConvLSTM1D(2, 3, padding="same")
    stateful(x[:, :2])
    whole(x)
    whole.set_weights(stateful.get_weights())
    stateful.reset_states()
    stateful(x[:, :2])
    assert_close(stateful(x[:, 2:]).numpy(), whole(x).numpy(), atol=1e-6)
    stateful.reset_states()
    assert_close(stateful(x).numpy(), whole(x).numpy(), atol=1e-6)


def test_bad_input_is_refused_with_the_layer_and_shapes():
    with pytest.raises(ValueError, match="strides > 1.*dilation_rate > 1"):
        L.ConvLSTM2D(2, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="kernel_size"):
        L.ConvLSTM2D(2, (3, 3, 3))
    with pytest.raises(ValueError, match="padding"):
        L.ConvLSTM1D(2, 3, padding="causal")
    layer = L.ConvLSTM2D(2, 3, name="clstm")
    with pytest.raises(ValueError, match="clstm.*expected ndim=5, found ndim=4"):
        layer(np.ones((2, 3, 5, 5), "float32"))
    layer(np.ones((2, 3, 5, 5, 1), "float32"))
    with pytest.raises(ValueError, match=r"clstm.*\(5, 5, 1\).*\(2, 3, 6, 5, 1\)"):
        layer(np.ones((2, 3, 6, 5, 1), "float32"))
    with pytest.raises(ValueError, match=r"clstm.*initial state should have shape \(2, 3, 3, 2\).*\(2, 5, 5, 2\)"):
        layer(np.ones((2, 3, 5, 5, 1), "float32"), initial_state=[np.zeros((2, 5, 5, 2), "float32")] * 2)
    with pytest.raises(ValueError, match="clstm.*expects 2 initial states"):
        layer(np.ones((2, 3, 5, 5, 1), "float32"), initial_state=[np.zeros((2, 3, 3, 2), "float32")])
    with pytest.raises(ValueError, match="clstm.*mask of shape"):
        layer(np.ones((2, 3, 5, 5, 1), "float32"), mask=np.ones((2, 4), bool))
    with pytest.raises(ValueError, match="only support static input shapes for the spatial dimension"):
        L.ConvLSTM2D(2, 3)(mk.Input((3, None, 5, 1)))
    with pytest.raises(ValueError, match="Computed output size would be zero or negative"):
        L.ConvLSTM2D(2, 7)(np.ones((1, 2, 5, 5, 1), "float32"))
