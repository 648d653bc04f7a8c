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


def _built(case, data):
    layer = CASES[case]()
    layer.build(data["x"].shape)
    layer.set_weights(indexed(data, "w"))
    return layer


@pytest.fixture(scope="module")
def results():
    """Every case's outputs and gradients from ONE compiled program: compiling is most of the
    cost of these tiny loops, and one program for all cases compiles about as fast as one."""
    cases = sorted(CASES)
    data = {case: load(case) for case in cases}
    layers = {case: _built(case, data[case]) for case in cases}

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
                outs = flatten(layers[case](x, **kwargs))
                loss = sum(mk.reduce_sum(o * r) for o, r in zip(outs, rs))
            grads = tape.gradient(loss, [x] + list(states) + layers[case].trainable_weights)
            found[case] = (outs, grads)
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


def test_keras_weights_file_of_every_recurrent_layer():
    data = load("stack")
    model = mk.Sequential([
        mk.Input((5, 4)), L.LSTM(3, return_sequences=True), L.GRU(3, return_sequences=True),
        L.GRU(3, return_sequences=True, reset_after=False), L.SimpleRNN(3, return_sequences=True),
        L.Bidirectional(L.LSTM(2, return_sequences=True)), L.TimeDistributed(L.Dense(2)),
        L.RNN([L.LSTMCell(3), L.GRUCell(2)])])
    model.load_weights(os.path.join(HERE, "stack.weights.h5"))
    assert_close(mk.function(model)(mk.constant(data["x"])).numpy(), data["y"], atol=2e-5, rtol=2e-5)


def test_keras_model_file_of_every_recurrent_layer(tmp_path):
    data = load("stack")
    model = mk.models.load_model(os.path.join(HERE, "stack.keras"))
    assert_close(mk.function(model)(mk.constant(data["x"])).numpy(), data["y"], atol=2e-5, rtol=2e-5)
    model.save(tmp_path / "again.keras")  # and what minikeras writes reads back the same
    again = mk.models.load_model(tmp_path / "again.keras")
    assert [type(a) for a in again.layers] == [type(b) for b in model.layers]
    assert all(np.array_equal(a, b) for a, b in zip(again.get_weights(), model.get_weights()))
