"""Sequential (construction, add, pop, building), Model subclassing and summary()."""
import numpy as np
import pytest

import minikeras as mk
from minikeras.module import clear_session

layers = mk.layers
X = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)


def test_sequential_is_built_at_construction_when_the_first_layer_has_input_shape():
    model = mk.Sequential([layers.Dense(4, activation="relu", input_shape=(3,)), layers.Dense(2)])
    assert model.built
    assert [w.shape for w in model.weights] == [(3, 4), (4,), (4, 2), (2,)]
    assert [layer.output_shape for layer in model.layers] == [(None, 4), (None, 2)]
    hidden, out = model.layers
    expected = np.maximum(X @ hidden.kernel.numpy() + hidden.bias.numpy(), 0) @ out.kernel.numpy() + out.bias.numpy()
    np.testing.assert_allclose(model(X).numpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.predict(X, verbose=0), expected, rtol=1e-5, atol=1e-6)


def test_sequential_without_an_input_shape_builds_on_first_call():
    model = mk.Sequential([layers.Dense(4), layers.Dense(2)])
    assert not model.built and model.weights == []
    with pytest.raises(ValueError, match="isn't built"):
        model.count_params()
    model(X)
    assert model.built and model.count_params() == 3 * 4 + 4 + 4 * 2 + 2


def test_sequential_with_an_input():
    model = mk.Sequential([mk.Input(shape=(3,)), layers.Dense(4)])
    assert model.built and model.count_params() == 16
    model = mk.Sequential()
    model.add(mk.Input(shape=(3,)))
    model.add(layers.Dense(4))
    assert model.built and model.layers[0].kernel.shape == (3, 4)


def test_add_and_pop():
    model = mk.Sequential()
    model.add(layers.Dense(4, input_shape=(3,)))
    assert model.built and len(model.layers) == 1
    model.add(layers.Dense(2))
    assert model.predict(X, verbose=0).shape == (2, 2)
    removed_weights = len(model.weights)
    model.pop()
    assert len(model.layers) == 1 and len(model.weights) == removed_weights - 2
    assert model.predict(X, verbose=0).shape == (2, 4)  # the compiled predict step was rebuilt
    with pytest.raises(TypeError, match="expects a Layer.*int"):
        model.add(3)
    model.pop()
    with pytest.raises(TypeError, match="no layers"):
        model.pop()


def test_model_weights_have_layer_paths_in_order():
    clear_session()
    model = mk.Sequential([layers.Dense(4, input_shape=(3,)), layers.BatchNormalization(), layers.Dense(2)])
    assert [w.path for w in model.weights] == ["sequential/" + path for path in (  # Keras 3.15's paths
        "dense/kernel", "dense/bias", "batch_normalization/gamma", "batch_normalization/beta", "dense_1/kernel",
        "dense_1/bias", "batch_normalization/moving_mean", "batch_normalization/moving_variance")]
    assert model.name == "sequential"
    assert model.get_layer("dense_1") is model.layers[2] and model.get_layer(index=0) is model.layers[0]
    with pytest.raises(ValueError, match="No such layer: nope"):
        model.get_layer("nope")


class MLP(mk.Model):
    """The subclassing idiom of the TF 2 tutorials."""

    def __init__(self, units=4, **kwargs):
        super().__init__(**kwargs)
        self.hidden = layers.Dense(units, activation="relu")
        self.drop = layers.Dropout(0.5)
        self.out = layers.Dense(2)

    def call(self, inputs, training=None):
        return self.out(self.drop(self.hidden(inputs), training=training))


def test_subclassed_model_tracks_its_layers_and_builds_on_first_call():
    model = MLP()
    assert not model.built and model.weights == []
    assert model.layers == [model.hidden, model.drop, model.out]
    out = model(X)
    assert out.shape == (2, 2) and model.built
    assert [w.shape for w in model.trainable_variables] == [(3, 4), (4,), (4, 2), (2,)]
    np.testing.assert_allclose(model(X).numpy(), out.numpy())  # dropout is off at inference
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(model(X, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    assert all(g is not None for g in grads)


def test_subclassed_model_build_with_input_shape():
    model = MLP()
    model.build((None, 3))
    assert model.built and model.count_params() == 3 * 4 + 4 + 4 * 2 + 2
    with pytest.raises(ValueError, match="input_shape"):
        MLP().build()


def test_model_functional_api_needs_symbolic_inputs():
    with pytest.raises(ValueError, match="must be symbolic tensors from mk.Input"):
        mk.Model(inputs=1, outputs=2)


def test_freezing_a_model_freezes_all_its_layers():
    model = mk.Sequential([layers.Dense(4, input_shape=(3,)), layers.Dense(2)])
    model.trainable = False
    assert model.trainable_weights == [] and all(not layer.trainable for layer in model.layers)
    model.layers[1].trainable = True
    assert [w.path for w in model.trainable_weights] == [w.path for w in model.layers[1].weights]


MNIST_SUMMARY = """\
Model: "sequential"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ flatten (Flatten)               │ (None, 784)            │             0 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense (Dense)                   │ (None, 64)             │        50,240 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense_1 (Dense)                 │ (None, 10)             │           650 │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 50,890 (198.79 KB)
 Trainable params: 50,890 (198.79 KB)
 Non-trainable params: 0 (0.00 B)"""


@pytest.fixture(scope="module")
def mnist_mlp():
    clear_session()
    # zeros: the summary needs no random draw (and no compile for these weight shapes)
    return mk.Sequential([layers.Flatten(input_shape=(28, 28)),
                          layers.Dense(64, activation="relu", kernel_initializer="zeros"),
                          layers.Dense(10, kernel_initializer="zeros")])


def test_summary_is_keras_3_table(mnist_mlp):
    lines = []
    mnist_mlp.summary(print_fn=lines.append)
    assert "\n".join(lines) == MNIST_SUMMARY


def test_summary_counts_optimizer_params_in_the_total(mnist_mlp):
    mnist_mlp.compile(optimizer="adam", loss="mse")
    mnist_mlp.optimizer.build(mnist_mlp.trainable_variables)
    lines = []
    mnist_mlp.summary(print_fn=lines.append)
    tail = "\n".join(lines).splitlines()[-4:]
    # Keras 3: Adam holds iterations, learning_rate and two slots per weight; Total includes them
    assert tail == [" Total params: 152,672 (596.38 KB)",
                    " Trainable params: 50,890 (198.79 KB)",
                    " Non-trainable params: 0 (0.00 B)",
                    " Optimizer params: 101,782 (397.59 KB)"]


def test_summary_of_unbuilt_and_non_trainable_layers(capsys):
    clear_session()
    model = mk.Sequential([layers.Dense(4), layers.BatchNormalization()], name="tiny")
    model.summary()
    text = capsys.readouterr().out
    assert text.splitlines()[0] == 'Model: "tiny"'
    assert "│ dense (Dense)                   │ ?                      │   0 (unbuilt) │" in text
    model(X)
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert ("│ batch_normalization             │ (None, 4)              │            16 │\n"
            "│ (BatchNormalization)            │                        │               │") in text
    assert " Total params: 32 (128.00 B)" in text
    assert " Trainable params: 24 (96.00 B)" in text
    assert " Non-trainable params: 8 (32.00 B)" in text
