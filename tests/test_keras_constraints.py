"""keras.constraints: Keras 3's formulas, names and configs; applied after each optimizer update
(checked against a Keras 3 run from the same weights); Keras 3's .keras file with constraints."""
import os

import numpy as np
import pytest
from conftest import assert_close

import minikeras as mk
from minikeras import keras

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_constraints")
EPS = 1e-7
W = np.random.default_rng(1).normal(size=(4, 3)).astype("float32")


def norms(w, axis):
    return np.sqrt(np.sum(w ** 2, axis=axis, keepdims=True))


@pytest.mark.parametrize("constraint, expected", [
    (keras.constraints.MaxNorm(1.2), W * np.clip(norms(W, 0), 0, 1.2) / (EPS + norms(W, 0))),
    (keras.constraints.MaxNorm(1.0, axis=[0, 1]), W * np.clip(norms(W, (0, 1)), 0, 1.0) / (EPS + norms(W, (0, 1)))),
    (keras.constraints.MinMaxNorm(1.5, 2.0, rate=0.5, axis=1),
     W * (0.5 * np.clip(norms(W, 1), 1.5, 2.0) + 0.5 * norms(W, 1)) / (EPS + norms(W, 1))),
    (keras.constraints.UnitNorm(), W / (EPS + norms(W, 0))),
    (keras.constraints.NonNeg(), np.maximum(W, 0)),
    (keras.constraints.Constraint(), W),
])
def test_formulas_as_keras(constraint, expected):
    assert_close(constraint(mk.constant(W)), expected, rtol=1e-6, atol=1e-6)


def test_names_and_configs_as_keras():
    c = keras.constraints
    assert isinstance(c.get("max_norm"), c.MaxNorm) and isinstance(c.get("NonNeg"), c.NonNeg)
    assert c.max_norm is c.MaxNorm and c.unit_norm is c.UnitNorm and c.get(None) is None
    config = c.serialize(c.MinMaxNorm(0.5, 2.0, rate=0.3, axis=[0, 1]))
    assert config == {"module": "minikeras.constraints", "class_name": "MinMaxNorm", "registered_name": None,
                      "config": {"min_value": 0.5, "max_value": 2.0, "rate": 0.3, "axis": [0, 1]}}
    assert c.deserialize(config).get_config() == config["config"]
    with pytest.raises(ValueError, match="Could not interpret constraint identifier: bad"):
        c.get("bad")
    layer = keras.layers.Dense(2, kernel_constraint=c.MaxNorm(2.0), bias_constraint="non_neg")
    config = layer.get_config()
    assert config["kernel_constraint"]["config"] == {"max_value": 2.0, "axis": 0}
    again = keras.layers.Dense.from_config(config)
    assert isinstance(again.kernel_constraint, c.MaxNorm) and isinstance(again.bias_constraint, c.NonNeg)


def test_fit_applies_constraints_after_each_update_as_keras():
    f = np.load(os.path.join(HERE, "constrained.npz"))
    model = keras.Sequential([
        keras.Input((2,), dtype="int32"),
        keras.layers.Embedding(5, 4, embeddings_constraint=keras.constraints.UnitNorm(axis=1)),
        keras.layers.Dense(3, kernel_constraint=keras.constraints.MaxNorm(1.5), bias_constraint="non_neg"),
    ])
    model.layers[0].set_weights([f["embeddings"]])
    model.layers[1].set_weights([f["kernel"], f["bias"]])
    model.compile(keras.optimizers.SGD(0.5), "mse")
    model.fit(f["ids"], f["y"], batch_size=4, epochs=1, shuffle=False, verbose=0)
    assert_close(model.layers[0].embeddings, f["trained_embeddings"], rtol=1e-5, atol=1e-5)
    assert_close(model.layers[1].kernel, f["trained_kernel"], rtol=1e-5, atol=1e-5)
    assert_close(model.layers[1].bias, f["trained_bias"], rtol=1e-5, atol=1e-5)
    assert np.all(norms(model.layers[1].kernel.numpy(), 0) <= 1.5 + 1e-5)


def test_a_custom_training_loop_applies_them_too():
    v = mk.Variable([3.0, -4.0], constraint=keras.constraints.NonNeg())
    optimizer = keras.optimizers.SGD(0.1)
    optimizer.apply_gradients([(mk.constant([1.0, 1.0]), v)])
    np.testing.assert_allclose(v.numpy(), [2.9, 0.0], rtol=1e-6)


def test_keras_files_with_constraints_load_and_save(tmp_path):
    model = keras.saving.load_model(os.path.join(HERE, "constrained.keras"))
    embedding, dense = model.layers
    assert isinstance(embedding.embeddings_constraint, keras.constraints.UnitNorm)
    assert embedding.embeddings_constraint.axis == 1
    assert isinstance(dense.kernel_constraint, keras.constraints.MaxNorm) and dense.kernel_constraint.max_value == 1.5
    assert isinstance(dense.bias_constraint, keras.constraints.NonNeg)
    model.save(tmp_path / "again.keras")
    again = keras.saving.load_model(tmp_path / "again.keras")
    assert again.layers[1].kernel_constraint.get_config() == {"max_value": 1.5, "axis": 0}


def test_add_weight_takes_keras_3s_and_tf_2s_spellings():
    layer = keras.layers.Layer()
    a = layer.add_weight((2, 3), "ones", "float32", name="a")  # Keras 3: shape, initializer, dtype
    b = layer.add_weight("b", (4,), "zeros", constraint="non_neg")  # a name first: TF 2 / minikeras
    c = layer.add_weight(shape=(1,), initializer="ones", trainable=False, aggregation="sum", name="c")
    assert (a.shape, a.path.split("/")[-1], float(a.numpy().sum())) == ((2, 3), "a", 6.0)
    assert b.shape == (4,) and b.name == "b" and isinstance(b.constraint, keras.constraints.NonNeg)
    assert not c.trainable and layer.add_weight().shape == ()
    with pytest.raises(ValueError, match="`shape` was passed both positionally and as a keyword argument"):
        layer.add_weight((2,), shape=(2,))
    with pytest.raises(TypeError, match="add_weight\\(\\) takes at most 3 positional arguments"):
        layer.add_weight((2,), "ones", "float32", True)
    with pytest.raises(ValueError, match="Invalid value for argument `aggregation`"):
        layer.add_weight((2,), aggregation="max")
    metric = keras.metrics.Metric(name="m")
    assert metric.add_weight((2,), "ones").shape == (2,) and metric.add_weight("total").name == "total"


@pytest.mark.parametrize("make, x, constrained", [
    (lambda: keras.layers.Conv2D(2, 2, kernel_constraint="non_neg", bias_constraint="non_neg"), (1, 4, 4, 3),
     ["kernel", "bias"]),
    (lambda: keras.layers.Conv1D(2, 2, kernel_constraint="non_neg"), (1, 4, 3), ["kernel"]),
    (lambda: keras.layers.Conv2DTranspose(2, 2, kernel_constraint="non_neg"), (1, 4, 4, 3), ["kernel"]),
    (lambda: keras.layers.DepthwiseConv2D(2, depthwise_constraint="non_neg"), (1, 4, 4, 3), ["kernel"]),
    (lambda: keras.layers.SeparableConv2D(2, 2, depthwise_constraint="non_neg", pointwise_constraint="non_neg"),
     (1, 4, 4, 3), ["depthwise_kernel", "pointwise_kernel"]),
    (lambda: keras.layers.PReLU(alpha_initializer="ones", alpha_constraint="non_neg"), (1, 3), ["alpha"]),
    (lambda: keras.layers.LayerNormalization(beta_constraint="non_neg", gamma_constraint="non_neg"), (1, 3),
     ["gamma", "beta"]),
    (lambda: keras.layers.BatchNormalization(beta_constraint="non_neg", gamma_constraint="non_neg"), (1, 3),
     ["gamma", "beta"]),
    (lambda: keras.layers.EinsumDense("ab,bc->ac", 2, bias_axes="c", kernel_constraint="non_neg",
                                      bias_constraint="non_neg"), (1, 3), ["kernel", "bias"]),
    (lambda: keras.layers.LSTM(2, kernel_constraint="non_neg", recurrent_constraint="non_neg",
                               bias_constraint="non_neg"), (1, 4, 3), ["kernel", "recurrent_kernel", "bias"]),
])
def test_layers_that_take_constraints_apply_them_after_each_update(make, x, constrained):
    layer = make()
    model = keras.Sequential([keras.Input(x[1:]), layer, keras.layers.Flatten(), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(10.0), "mse")  # a large step drives unconstrained weights negative
    data = np.random.default_rng(0).normal(size=(8,) + x[1:]).astype("float32")
    model.fit(data, np.full((8, 1), -5.0, "float32"), batch_size=4, verbose=0)
    for weight in layer.weights:
        if weight.name in constrained:
            assert isinstance(weight.constraint, keras.constraints.NonNeg), weight.name
            assert np.all(weight.numpy() >= 0), weight.name
    config = type(layer).from_config(layer.get_config()).get_config()  # the constraints survive a round trip
    assert sum(isinstance(value, dict) and value["class_name"] == "NonNeg"
               for key, value in config.items() if key.endswith("constraint")) == len(constrained)
