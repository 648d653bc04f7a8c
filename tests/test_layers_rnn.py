"""Recurrent layers in minikeras's own terms: the loop is one op on the tape and one
``lax.scan`` in a compiled step, gradients of every order equal ``jax.vjp`` of the same scan,
``recompute_grad`` and gradient clipping go through it, configs round-trip, stateful layers
carry their states, and bad input is refused as Keras 3 refuses it."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_close

import minikeras as mk

L = mk.layers
RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 4, 3)).astype("float32")


def reference_lstm(x, kernel, recurrent, bias):
    """Keras 3's LSTM written directly in jax (gates i, f, c, o)."""
    def step(carry, x_t):
        h, c = carry
        z = x_t @ kernel + h @ recurrent + bias
        i, f, g, o = jnp.split(z, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h
    zeros = jnp.zeros((x.shape[0], recurrent.shape[0]), x.dtype)
    (h, _), _ = jax.lax.scan(step, (zeros, zeros), jnp.swapaxes(x, 0, 1))
    return h


@pytest.fixture(scope="module")
def lstm():
    layer = L.LSTM(2)
    layer(X)
    return layer


def test_one_record_on_the_tape(lstm):
    with mk.GradientTape() as tape:
        y = lstm(X)
    # the tape's records (a test may look inside): the 4 steps are one op, not 4 x gates ops
    names = [r.op.name for r in tape._recording.records]
    assert names.count(lstm.name) == 1 and len(names) <= 4  # the scan and the reads of its 3 weights
    assert y.shape == (2, 2)


def test_first_and_second_order_gradients_match_jax():
    layer = L.SimpleRNN(2, return_sequences=True)
    layer(X)
    kernel, recurrent, bias = [v.numpy() for v in layer.trainable_weights]
    x = mk.Variable(X)
    with mk.GradientTape() as outer:
        with mk.GradientTape() as inner:
            loss = mk.reduce_sum(layer(x) ** 2)
        gx, gk = inner.gradient(loss, [x, layer.cell.kernel])
        second = mk.reduce_sum(gx ** 2) + mk.reduce_sum(gk ** 2)
    gxx = outer.gradient(second, x)

    def f(x, k):
        def step(h, x_t):
            h = jnp.tanh(x_t @ k + bias + h @ recurrent)
            return h, h
        _, hs = jax.lax.scan(step, jnp.zeros((2, 2)), jnp.swapaxes(x, 0, 1))
        return jnp.sum(hs ** 2)
    want_x, want_k = jax.grad(f, argnums=(0, 1))(X, kernel)
    assert_close(gx.numpy(), want_x, atol=1e-5)
    assert_close(gk.numpy(), want_k, atol=1e-5)

    def g(x):
        gx, gk = jax.grad(f, argnums=(0, 1))(x, kernel)
        return jnp.sum(gx ** 2) + jnp.sum(gk ** 2)
    assert_close(gxx.numpy(), jax.grad(g)(X), atol=1e-4, rtol=1e-4)


def test_compiled_step_is_one_scan_and_matches_eager(lstm):
    opt = mk.optimizers.SGD(0.1, clipnorm=1.0)

    @mk.function
    def grads(x):
        with mk.GradientTape() as tape:
            loss = mk.reduce_sum(mk.recompute_grad(lambda t: lstm(t))(x) ** 2)
        return tape.gradient(loss, lstm.trainable_weights)

    compiled = grads(mk.constant(X))
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(lstm(X) ** 2)
    eager = tape.gradient(loss, lstm.trainable_weights)
    for a, b in zip(compiled, eager):
        assert_close(a.numpy(), b.numpy(), atol=1e-5)
    jaxpr = str(grads.get_concrete_function(mk.constant(X)).jaxpr)
    assert 2 <= jaxpr.count("scan[") <= 3  # forward, backward (and the recomputation), never one per step
    opt.apply_gradients(zip(compiled, lstm.trainable_weights))


def test_fit_trains_a_sequence_classifier():
    model = mk.Sequential([L.GRU(4), L.Dense(2, activation="softmax")])
    model.compile(optimizer=mk.optimizers.Adam(0.05), loss="sparse_categorical_crossentropy")
    x = RNG.normal(size=(32, 6, 3)).astype("float32")
    y = (x[:, :, 0].sum(axis=1) > 0).astype("int32")
    history = model.fit(x, y, epochs=4, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_stateful_carries_and_resets_states():
    layer = L.SimpleRNN(2, stateful=True, return_state=True)
    _, h1 = layer(X)
    _, h2 = layer(X)
    layer.reset_states()
    _, h3 = layer(X)
    assert_close(h3.numpy(), h1.numpy())
    assert not np.allclose(h2.numpy(), h1.numpy())
    plain = L.SimpleRNN(2, return_state=True)
    plain(X)
    plain.set_weights(layer.get_weights())
    _, expected = plain(X, initial_state=[h1])  # the second batch started from the first's state
    assert_close(h2.numpy(), expected.numpy())
    assert layer.states[0].shape == (2, 2) and len(layer.weights) == 3  # the states are not weights, as Keras
    fresh = L.SimpleRNN(2, stateful=True)  # first called inside mk.function
    step = mk.function(lambda x: fresh(x))
    first, second = step(mk.constant(X)), step(mk.constant(X))
    assert_close(fresh.states[0].numpy(), second.numpy())
    assert not np.allclose(first.numpy(), second.numpy())


def test_user_cell_in_one_scan():
    class MinimalCell(L.Layer):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units = self.state_size = units

        def build(self, input_shape):
            self.kernel = self.add_weight("kernel", (input_shape[-1], self.units))
            self.recurrent_kernel = self.add_weight("recurrent_kernel", (self.units, self.units))

        def call(self, inputs, states):
            h = mk.matmul(inputs, self.kernel) + mk.matmul(states[0], self.recurrent_kernel)
            return h, [h]

    cell = MinimalCell(2)
    layer = L.RNN(cell, return_sequences=True)
    with mk.GradientTape() as tape:
        y = layer(X)
        loss = mk.reduce_sum(y ** 2)
    grads = tape.gradient(loss, cell.trainable_weights)
    k, r = [v.numpy() for v in cell.trainable_weights]

    def f(k, r):
        def step(h, x_t):
            h = x_t @ k + h @ r
            return h, h
        _, hs = jax.lax.scan(step, jnp.zeros((2, 2)), jnp.swapaxes(X, 0, 1))
        return jnp.sum(hs ** 2)
    for got, want in zip(grads, jax.grad(f, argnums=(0, 1))(k, r)):
        assert_close(got.numpy(), want, atol=1e-5)


def test_dropout_changes_training_output_only():
    layer = L.LSTM(3, dropout=0.5, recurrent_dropout=0.5)
    a = layer(X)
    assert_close(layer(X).numpy(), a.numpy())
    assert not np.allclose(layer(X, training=True).numpy(), a.numpy())


@pytest.mark.parametrize("make", [
    lambda: L.LSTM(3, return_sequences=True, go_backwards=True, dropout=0.1),
    lambda: L.GRU(2, reset_after=False, stateful=False, unroll=True),
    lambda: L.Bidirectional(L.SimpleRNN(2), merge_mode="sum"),
    lambda: L.TimeDistributed(L.Dense(2)),
    lambda: L.RNN([L.LSTMCell(2), L.GRUCell(3)], return_state=True)])
def test_config_round_trip(make):
    layer = make()
    clone = type(layer).from_config(layer.get_config())
    assert clone.get_config() == {**layer.get_config(), "name": clone.name}


def test_compute_mask():
    mask = mk.constant(np.array([[True, True, False, False]] * 2))
    assert L.LSTM(2, return_sequences=True).compute_mask(X, mask) is mask
    assert L.LSTM(2).compute_mask(X, mask) is None
    assert L.GRU(2, return_sequences=True, return_state=True).compute_mask(X, mask) == [mask, None]


def test_bad_input():
    with pytest.raises(ValueError, match="expected ndim=3, found ndim=2"):
        L.LSTM(2)(np.ones((2, 3), "float32"))
    with pytest.raises(ValueError, match="batch size must be static"):
        L.LSTM(2, stateful=True).build((None, 4, 3))
    with pytest.raises(ValueError, match=r"initial state should have shape \(batch, units\) = \(2, 2\)"):
        L.LSTM(2)(X, initial_state=[np.ones((2, 5), "float32"), np.ones((2, 2), "float32")])
    with pytest.raises(ValueError, match="expects 2 initial states"):
        L.LSTM(2)(X, initial_state=[np.ones((2, 2), "float32")])
    with pytest.raises(ValueError, match=r"mask of shape \(batch, time\)"):
        L.GRU(2)(X, mask=np.ones((2, 5), bool))
    with pytest.raises(TypeError, match="go_backwards"):
        L.Bidirectional(L.Dense(2))
    with pytest.raises(ValueError, match="Invalid merge mode"):
        L.Bidirectional(L.LSTM(2), merge_mode="max")


def test_global_max_pooling_1d():
    assert_close(L.GlobalMaxPooling1D()(X).numpy(), X.max(axis=1))
    assert L.GlobalMaxPooling1D(keepdims=True)(X).shape == (2, 1, 3)
    assert L.GlobalMaxPooling1D.from_config(L.GlobalMaxPooling1D(keepdims=True).get_config()).keepdims


def test_a_cell_called_on_one_step_is_the_layer_on_one_step():
    cell = L.GRUCell(2)
    out, h = L.RNN(cell, return_state=True)(X[:, :1])
    step_out, [step_h] = cell(X[:, 0], [np.zeros((2, 2), "float32")])
    assert_close(step_out.numpy(), out.numpy())
    assert_close(step_h.numpy(), h.numpy())
