"""Recurrent layers against real Keras 3: outputs, final states and gradients (of the input,
the initial states and every weight) on the same weights, masks included; a Keras weights file
of every recurrent layer loads and gives Keras's output. Fixtures:
``tests/fixtures/keras_rnn/make_rnn_fixtures.py``."""
import os

import numpy as np
import pytest
from conftest import assert_close

import minikeras as mk

L = mk.layers
HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_rnn")

CASES = {
    "lstm": lambda: L.LSTM(3, return_sequences=True, return_state=True),
    "lstm_acts": lambda: L.LSTM(3, activation="relu", recurrent_activation="hard_sigmoid", unit_forget_bias=False,
                                return_state=True, go_backwards=True),
    "lstm_unroll": lambda: L.LSTM(3, return_sequences=True, unroll=True, use_bias=False),
    "gru": lambda: L.GRU(3, return_sequences=True, return_state=True),
    "gru_backwards": lambda: L.GRU(3, return_sequences=True, go_backwards=True),
    "gru_before": lambda: L.GRU(3, reset_after=False, return_state=True),
    "simple_rnn": lambda: L.SimpleRNN(3, activation="relu", return_sequences=True),
    "stacked": lambda: L.RNN([L.LSTMCell(3), L.GRUCell(2)], return_state=True, return_sequences=True),
    "bi_concat": lambda: L.Bidirectional(L.LSTM(3, return_sequences=True)),
    "bi_sum": lambda: L.Bidirectional(L.GRU(2, return_sequences=True), merge_mode="sum"),
    "bi_ave": lambda: L.Bidirectional(L.SimpleRNN(2), merge_mode="ave"),
    "bi_mul": lambda: L.Bidirectional(L.GRU(2), merge_mode="mul"),
    "bi_none": lambda: L.Bidirectional(L.LSTM(2, return_sequences=True, return_state=True), merge_mode=None),
    "bi_backward_layer": lambda: L.Bidirectional(L.LSTM(3, return_sequences=True),
                                                 backward_layer=L.GRU(2, return_sequences=True, go_backwards=True)),
    "time_distributed": lambda: L.TimeDistributed(L.Dense(2, activation="tanh")),
}


def load(case):
    data = np.load(os.path.join(HERE, f"{case}.npz"))
    return {k: data[k] for k in data}


def indexed(data, prefix):
    return [data[f"{prefix}{k}"] for k in range(sum(1 for key in data if key[len(prefix):].isdigit()
                                                    and key.startswith(prefix)))]


def flatten(outs):
    if isinstance(outs, (list, tuple)):
        return [leaf for o in outs for leaf in flatten(o)]
    return [outs]


# Compiling a scan's backward pass takes seconds: these cases check outputs only (the same
# layers' gradients are checked in the other cases).
OUTPUTS_ONLY = {"bi_concat", "bi_sum", "bi_ave", "bi_mul", "bi_none", "gru_backwards"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_outputs_and_gradients_match_keras(case):
    data = load(case)
    layer = CASES[case]()
    kwargs = {"mask": mk.constant(data["mask"])} if "mask" in data else {}
    x = mk.Variable(data["x"])
    states = [mk.Variable(s) for s in indexed(data, "s")]
    layer(x, **kwargs)
    layer.set_weights(indexed(data, "w"))
    if states:
        kwargs["initial_state"] = list(states)
    with mk.GradientTape(watch_accessed_variables=case not in OUTPUTS_ONLY) as tape:
        outs = flatten(layer(x, **kwargs))
        loss = sum(mk.reduce_sum(o * r) for o, r in zip(outs, indexed(data, "r")))
    expected = indexed(data, "out")
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected):
        assert_close(got.numpy(), want, atol=2e-5, rtol=2e-5)
    if case in OUTPUTS_ONLY:
        return
    grads = tape.gradient(loss, [x] + states + layer.trainable_weights)
    for got, want in zip(grads, [data["gx"]] + indexed(data, "gs") + indexed(data, "gw")):
        assert_close(got.numpy(), want, atol=5e-5, rtol=5e-5)


def test_keras_weights_file_of_every_recurrent_layer():
    data = load("stack")
    model = mk.Sequential([
        L.LSTM(3, return_sequences=True), L.GRU(3, return_sequences=True),
        L.GRU(3, return_sequences=True, reset_after=False), L.SimpleRNN(3, return_sequences=True),
        L.Bidirectional(L.LSTM(2, return_sequences=True)), L.TimeDistributed(L.Dense(2)),
        L.RNN([L.LSTMCell(3), L.GRUCell(2)])])
    model(data["x"])
    model.load_weights(os.path.join(HERE, "stack.weights.h5"))
    assert_close(model(data["x"]).numpy(), data["y"], atol=2e-5, rtol=2e-5)
