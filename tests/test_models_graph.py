"""map_graph: the nodes of a functional model and its layers' order, as Keras 3 orders them."""
import numpy as np
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.module import clear_session

X = np.random.default_rng(0).normal(size=(5, 4)).astype("float32")


def test_branching_graph_orders_layers_like_keras():
    i = mk.Input((4,), name="i")
    a = layers.Dense(3, name="a")(i)
    b = layers.Dense(3, name="b")(i)
    e = layers.Dense(2, name="e")(layers.Add(name="d")([layers.Dense(3, name="c")(a), b]))
    model = mk.Model(i, [e, b])
    assert [layer.name for layer in model.layers] == ["i", "a", "c", "b", "d", "e"]  # Keras 3's order
    wa, ba = model.get_layer("a").get_weights()
    wb, bb = model.get_layer("b").get_weights()
    wc, bc = model.get_layer("c").get_weights()
    we, be = model.get_layer("e").get_weights()
    expected = (((X @ wa + ba) @ wc + bc) + (X @ wb + bb)) @ we + be
    np.testing.assert_allclose(model(X)[0].numpy(), expected, rtol=1e-5, atol=1e-6)


# Keras 3's summary of the model below (a layer applied twice: its second call is s[1][0])
KERAS_SHARED_ROWS = """\
│ j (InputLayer)      │ (None, 3)         │          0 │ -                 │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ s (Dense)           │ (None, 3)         │         12 │ j[0][0], s[0][0]  │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ cat (Concatenate)   │ (None, 6)         │          0 │ s[0][0], s[1][0]  │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ z (Dense)           │ (None, 1)         │          7 │ cat[0][0]         │
└─────────────────────┴───────────────────┴────────────┴───────────────────┘"""


def test_layer_called_twice_in_a_chain():
    clear_session()
    s = layers.Dense(3, name="s")
    j = mk.Input((3,), name="j")
    x = s(j)
    y = s(x)
    model = mk.Model(j, layers.Dense(1, name="z")(layers.concatenate([x, y], name="cat")))
    assert [layer.name for layer in model.layers] == ["j", "s", "cat", "z"]
    lines = []
    model.summary(print_fn=lines.append)
    assert KERAS_SHARED_ROWS in lines[0]
    cat = next(spec for spec in model.get_config()["layers"] if spec["name"] == "cat")
    assert [t["config"]["keras_history"] for t in cat["inbound_nodes"][0]["args"][0]] == [["s", 0, 0], ["s", 1, 0]]


def test_a_model_may_start_from_an_intermediate_tensor():
    i = mk.Input((4,))
    hidden = layers.Dense(3, name="first")(i)
    tail = mk.Model(hidden, layers.Dense(2, name="second")(hidden))  # the graph is cut at `hidden`
    assert [layer.name for layer in tail.layers] == ["first", "second"]
    h = np.ones((2, 3), "float32")
    w, b = tail.get_layer("second").get_weights()
    np.testing.assert_allclose(tail(h).numpy(), h @ w + b, rtol=1e-6)


def test_disconnected_output_names_the_tensor_and_the_input():
    a, b = mk.Input((2,), name="left"), mk.Input((2,), name="right")
    out = layers.add([a, b])
    with pytest.raises(ValueError, match=r"output 'keras_tensor_\d+' is not connected.*input 'right'"):
        mk.Model(a, out)
