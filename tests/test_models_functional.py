"""The functional API: mk.Input, layers and ops on symbolic tensors, mk.Model(inputs, outputs).

Expected structures, names, shapes and summaries are what Keras 3 (jax backend) gives for the
same code; values are checked against NumPy formulas of the layers' weights.
"""
import numpy as np
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.module import clear_session

RNG = np.random.default_rng(0)
XA = RNG.normal(size=(8, 4)).astype("float32")
XB = RNG.normal(size=(8, 3)).astype("float32")


def two_in_two_out():
    """The Keras guide's shape of model: two inputs, a shared trunk, two named outputs."""
    clear_session()  # automatic names ("concatenate") as in a fresh session
    a, b = mk.Input((4,), name="a"), mk.Input((3,), name="b")
    x = layers.concatenate([a, b])
    h = layers.Dense(5, activation="relu", name="hidden")(x)
    score = layers.Dense(1, name="score")(h)
    cls = layers.Dense(3, activation="softmax", name="cls")(h)
    return mk.Model([a, b], [score, cls], name="two")


@pytest.fixture(scope="module")
def model():
    return two_in_two_out()


def test_input_is_a_symbolic_tensor():
    x = mk.Input(shape=(28, 28, 1), name="image", dtype="int32")
    assert x.shape == (None, 28, 28, 1) and x.dtype == np.int32 and x.name == "image" and x.ndim == 4
    assert mk.Input((5,), batch_size=16).shape == (16, 5)
    with pytest.raises(TypeError, match="symbolic tensor"):
        np.asarray(mk.constant(x))


def test_layer_calls_and_ops_infer_shapes():
    x = mk.Input((6, 8))
    assert layers.Dense(3)(x).shape == (None, 6, 3)
    assert layers.Conv1D(2, 3)(x).shape == (None, 4, 2)
    assert (x[:, 1:, :] * 2.0 + 1.0).shape == (None, 5, 8)
    assert mk.concat([x, x], axis=1).shape == (None, 12, 8)
    assert mk.reduce_mean(x, axis=1).shape == (None, 8)
    assert mk.reshape(x, (-1, 48)).shape == (None, 48)
    var = mk.Input((None, 3))
    assert layers.Dense(2)(var).shape == (None, None, 2)


def test_model_structure_matches_keras(model):
    # Keras 3: ['a', 'b', 'concatenate', 'hidden', 'score', 'cls']
    assert [layer.name for layer in model.layers][:2] == ["a", "b"]
    assert [layer.name for layer in model.layers][3:] == ["hidden", "score", "cls"]
    assert type(model.layers[2]).__name__ == "Concatenate"
    assert model.input_shape == [(None, 4), (None, 3)]
    assert model.output_shape == [(None, 1), (None, 3)]
    assert model.output_names == ["score", "cls"]
    assert [t.name for t in model.inputs] == ["a", "b"] and len(model.outputs) == 2
    hidden = model.get_layer("hidden")
    assert model.get_layer(index=3) is hidden
    assert hidden.input.shape == (None, 7) and hidden.output.shape == (None, 5)
    assert isinstance(model, mk.Model) and type(model).__name__ == "Functional"


def test_model_call_matches_numpy(model):
    score, cls = model([XA, XB])
    wh, bh = model.get_layer("hidden").get_weights()
    h = np.maximum(np.concatenate([XA, XB], 1) @ wh + bh, 0)
    ws, bs = model.get_layer("score").get_weights()
    wc, bc = model.get_layer("cls").get_weights()
    logits = h @ wc + bc
    np.testing.assert_allclose(score.numpy(), h @ ws + bs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cls.numpy(), np.exp(logits) / np.exp(logits).sum(1, keepdims=True), rtol=1e-5)
    by_name = model({"a": XA, "b": XB})
    np.testing.assert_allclose(by_name[0].numpy(), score.numpy())
    compiled = mk.function(lambda a, b: model([a, b]))
    np.testing.assert_allclose(compiled(XA, XB)[1].numpy(), cls.numpy(), rtol=1e-6)


def test_wrong_inputs_are_named(model):
    with pytest.raises(ValueError, match="expects 2 input"):
        model(XA)
    with pytest.raises(ValueError, match="Input 'b' of model 'two' expects shape"):
        model([XA, XA])
    with pytest.raises(ValueError, match="missing"):
        model({"a": XA})


def test_shared_layer_and_nested_model():
    shared = layers.Dense(3, name="shared")
    a, b = mk.Input((4,)), mk.Input((4,))
    out = layers.add([shared(a), shared(b)])
    inner = mk.Model([a, b], out, name="inner")
    assert len(shared._inbound_nodes()) == 2
    x, y = mk.Input((4,)), mk.Input((4,))
    outer = mk.Model([x, y], layers.Dense(1, name="head")(inner([x, y])), name="outer")
    w, bias = shared.get_weights()
    wh, bh = outer.get_layer("head").get_weights()
    expected = ((XA @ w + bias) + (XA[::-1] @ w + bias)) @ wh + bh
    np.testing.assert_allclose(outer([XA, XA[::-1]]).numpy(), expected, rtol=1e-5, atol=1e-6)
    assert [layer.name for layer in outer.layers][2] == "inner"
    assert len(outer.trainable_weights) == 4


def test_feature_extraction():
    base = mk.Sequential([mk.Input((4,)), layers.Dense(6, activation="relu"), layers.Dense(2)])
    extractor = mk.Model(inputs=base.inputs, outputs=[layer.output for layer in base.layers])
    features = extractor(XA)
    assert [f.shape for f in features] == [(8, 6), (8, 2)]
    np.testing.assert_allclose(features[1].numpy(), base(XA).numpy(), rtol=1e-6)


def test_dict_inputs_and_outputs():
    inputs = {"x": mk.Input((4,), name="x"), "y": mk.Input((3,), name="y")}
    merged = layers.Concatenate()([inputs["x"], inputs["y"]])
    model = mk.Model(inputs, {"sum": mk.reduce_sum(merged, axis=1), "copy": merged})
    out = model({"y": XB, "x": XA})
    assert set(out) == {"sum", "copy"}
    np.testing.assert_allclose(out["sum"].numpy(), np.concatenate([XA, XB], 1).sum(1), rtol=1e-5)


def test_errors_name_the_problem():
    a, b = mk.Input((4,), name="first"), mk.Input((4,), name="second")
    out = layers.Dense(2)(b)
    with pytest.raises(ValueError, match="not connected.*input 'second'"):
        mk.Model(a, out)
    with pytest.raises(ValueError, match="must be symbolic tensors"):
        mk.Model(XA, out)
    x = mk.Input((4,))
    y = layers.Dense(2, name="twin")(layers.Dense(4, name="twin")(x))
    with pytest.raises(ValueError, match='The name "twin" is used 2 times'):
        mk.Model(x, y)
    with pytest.raises(ValueError, match=r"outputs.*must be symbolic.*ndarray of shape \(8, 4\)"):
        mk.Model(x, XA)


def test_training_flag_reaches_the_layers():
    x = mk.Input((100,))
    model = mk.Model(x, layers.Dropout(0.5)(x))
    ones = np.ones((2, 100), "float32")
    np.testing.assert_array_equal(model(ones).numpy(), ones)
    dropped = model(ones, training=True).numpy()
    assert set(np.unique(dropped)) <= {0.0, 2.0} and (dropped == 0).any()


# Keras 3 prints this for Model([a, b], concatenate([a, b]) + 1.0) (from the reference run)
KERAS_OP_SUMMARY = """\
┏━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┓
┃ Layer (type)        ┃ Output Shape      ┃    Param # ┃ Connected to      ┃
┡━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━┩
│ a (InputLayer)      │ (None, 4)         │          0 │ -                 │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ b (InputLayer)      │ (None, 3)         │          0 │ -                 │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ concatenate         │ (None, 7)         │          0 │ a[0][0], b[0][0]  │
│ (Concatenate)       │                   │            │                   │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ add (Add)           │ (None, 7)         │          0 │ concatenate[0][0] │
└─────────────────────┴───────────────────┴────────────┴───────────────────┘"""

KERAS_SUMMARY_ROWS = """\
│ hidden (Dense)      │ (None, 5)         │         40 │ concatenate[0][0] │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ score (Dense)       │ (None, 1)         │          6 │ hidden[0][0]      │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ cls (Dense)         │ (None, 3)         │         18 │ hidden[0][0]      │
└─────────────────────┴───────────────────┴────────────┴───────────────────┘
 Total params: 64 (256.00 B)"""


def test_summary_has_connected_to_like_keras(model):
    lines = []
    model.summary(print_fn=lines.append)
    assert KERAS_SUMMARY_ROWS in lines[0]
    clear_session()
    a, b = mk.Input((4,), name="a"), mk.Input((3,), name="b")
    ops_model = mk.Model([a, b], layers.concatenate([a, b]) + 1.0)
    lines = []
    ops_model.summary(print_fn=lines.append)
    assert KERAS_OP_SUMMARY in lines[0]
    assert [layer.name for layer in ops_model.layers] == ["a", "b", "concatenate"]  # ops are not layers


def test_sequential_with_input_is_functional_underneath():
    model = mk.Sequential([mk.Input((4,)), layers.Dense(3, name="d1"), layers.Dense(2, name="d2")])
    assert model.output_shape == (None, 2) and model.input_shape == (None, 4)
    assert model.layers[1].input is model.layers[0].output
    assert [layer.name for layer in model.layers] == ["d1", "d2"]
    lazy = mk.Sequential([layers.Dense(3)])
    lazy(XA)
    assert lazy.output_shape == (None, 3)


def test_ops_and_layers_of_the_same_name_coexist():
    a, b = mk.Input((4,)), mk.Input((4,))
    model = mk.Model([a, b], layers.Add()([a, b]) + (a + b))  # the op 'add' beside the layer 'add'
    np.testing.assert_allclose(model([XA, XA]).numpy(), 4 * XA, rtol=1e-6)


def test_a_layer_called_on_a_concrete_value_is_named():
    x = mk.Input((4,))
    concrete = layers.Dense(2)(XA)  # a mistake: not called on x
    with pytest.raises(ValueError, match=r"Tensor of shape \(8, 2\).*concrete value"):
        mk.Model(x, concrete)


def test_compiled_model_runs_no_python_per_node():
    calls = []

    def traced(x):
        calls.append(1)  # runs whenever Python runs this node
        return x * 2.0
    x = mk.Input((4,))
    model = mk.Model(x, layers.Dense(2)(layers.Lambda(traced)(x)))
    step = mk.function(lambda v: model(v))
    step(XA)
    calls.clear()
    for _ in range(3):
        step(XA)
    assert calls == []  # one trace: later calls run the compiled program only


def test_functional_training_step_is_the_sequential_program():
    def stack():
        return [layers.Dense(8, activation="relu"), layers.Dropout(0.5), layers.Dense(3)]
    sequential = mk.Sequential([mk.Input((4,))] + stack())
    x = mk.Input((4,))
    y = x
    for layer in stack():
        y = layer(y)
    functional = mk.Model(x, y)

    def program_of(model):
        optimizer = mk.optimizers.SGD(0.1)

        @mk.function
        def step(inputs, labels):
            with mk.GradientTape() as tape:
                loss = mk.reduce_mean(mk.square(model(inputs, training=True) - labels))
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
            return loss
        program, _ = step.program_for((XA, np.zeros((8, 3), "float32")))
        return [str(eqn.primitive) for eqn in program.jaxpr.jaxpr.eqns]
    equations = program_of(functional)
    assert len(equations) > 20 and equations == program_of(sequential)  # the same XLA program, op for op


class CallCounter(layers.Layer):
    """Assigns a Variable in call, as BatchNormalization does in training."""

    def build(self, input_shape):
        self.count = self.add_weight(shape=(), initializer="zeros", trainable=False)

    def call(self, x):
        self.count.assign_add(1.0)
        return x


def test_building_the_graph_leaves_variables_as_they_were():
    x = mk.Input((3,))
    counter = CallCounter()
    model = mk.Model(x, layers.BatchNormalization()(counter(x), training=True))
    assert float(counter.count.numpy()) == 0.0  # the shape tracing assigned nothing for good
    moving_mean = model.layers[2].non_trainable_weights[0]
    np.testing.assert_array_equal(moving_mean.numpy(), np.zeros(3))
    model(XB)
    assert float(counter.count.numpy()) == 1.0
    np.testing.assert_allclose(moving_mean.numpy(), 0.01 * XB.mean(0), rtol=1e-5, atol=1e-7)  # momentum 0.99
