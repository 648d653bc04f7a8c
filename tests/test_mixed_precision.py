"""Dtype policies and autocasting (mk.mixed_precision), against Keras 3's rules and an emulated
bfloat16 reference: inputs and weights rounded to bfloat16, products accumulated in float32."""
import json
import os
import threading
import warnings
import zipfile

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk
from minikeras import dtype_policies
from minikeras.dtype_policies import dtype_policy as policy_module


@pytest.fixture(autouse=True)
def float32_policy():
    yield
    mk.mixed_precision.set_global_policy("float32")


def bf16(x):
    return jnp.asarray(x, jnp.bfloat16)


def test_policy_names_and_dtypes():
    policy = mk.mixed_precision.Policy("mixed_bfloat16")
    assert (policy.name, policy.compute_dtype, policy.variable_dtype) == ("mixed_bfloat16", "bfloat16", "float32")
    assert mk.mixed_precision.Policy("mixed_float16").compute_dtype == "float16"
    assert mk.keras.mixed_precision.Policy("float64").variable_dtype == "float64"
    assert repr(policy) == '<DTypePolicy "mixed_bfloat16">'
    assert policy == mk.keras.DTypePolicy("mixed_bfloat16") == mk.keras.FloatDTypePolicy("mixed_bfloat16")
    assert dtype_policies.get(None) == mk.mixed_precision.global_policy() == mk.mixed_precision.Policy("float32")
    assert dtype_policies.get(np.float32).name == "float32"
    config = dtype_policies.serialize(policy)
    assert config == {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "mixed_bfloat16"},
                      "registered_name": None}  # as Keras 3.15 writes it
    assert dtype_policies.deserialize(config) == policy == dtype_policies.get(config)


def test_bad_policies_are_refused_as_keras_refuses_them():
    with pytest.raises(ValueError, match="Cannot convert 'mixed_float32' to a mixed precision DTypePolicy"):
        mk.mixed_precision.Policy("mixed_float32")
    with pytest.raises(TypeError, match="'name' must be a string"):
        mk.mixed_precision.Policy(3)
    with pytest.raises(ValueError, match="Invalid `policy` argument.*Received: policy=3"):
        mk.mixed_precision.set_global_policy(3)
    with pytest.raises(ValueError, match="floating-point policies.*got policy: int32"):
        mk.mixed_precision.set_global_policy("int32")
    with pytest.raises(ValueError, match="Cannot convert 'bfloat17'"):
        mk.layers.Dense(2, dtype="bfloat17")


def test_float16_on_a_cpu_warns_once(monkeypatch):
    monkeypatch.setattr(policy_module, "_warned_float16", [])
    with pytest.warns(UserWarning, match="float16 has no fast arithmetic"):
        mk.mixed_precision.set_global_policy("mixed_float16")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mk.mixed_precision.set_global_policy("mixed_float16")


def test_the_global_policy_is_per_thread():
    mk.mixed_precision.set_global_policy("mixed_bfloat16")
    seen = []
    thread = threading.Thread(target=lambda: seen.append(mk.layers.Dense(2).dtype_policy.name))
    thread.start()
    thread.join()
    assert seen == ["float32"] and mk.layers.Dense(2).dtype_policy.name == "mixed_bfloat16"


def test_layer_dtype_attributes_and_config():
    mk.mixed_precision.set_global_policy("mixed_bfloat16")
    layer = mk.layers.Dense(3)
    other = mk.layers.Dense(3, dtype="float32")
    assert (layer.dtype, layer.compute_dtype, layer.variable_dtype) == (mk.float32, "bfloat16", "float32")
    assert other.dtype_policy.name == "float32"
    config = layer.get_config()
    assert config["dtype"]["config"] == {"name": "mixed_bfloat16"}
    mk.mixed_precision.set_global_policy("float32")
    assert mk.layers.Dense.from_config(config).dtype_policy.name == "mixed_bfloat16"
    layer.dtype_policy = "float32"
    assert layer.compute_dtype == "float32"


def test_dense_computes_in_bfloat16_with_float32_weights():
    x = np.random.default_rng(0).standard_normal((4, 5)).astype("float32")
    layer = mk.layers.Dense(3, bias_initializer="ones", dtype="mixed_bfloat16")
    y = layer(x)
    assert y.dtype == mk.bfloat16 and layer.kernel.dtype == mk.float32 and layer.bias.dtype == mk.float32
    kernel, bias = layer.kernel.numpy(), layer.bias.numpy()

    def reference(kernel, bias):
        product = jnp.matmul(bf16(x).astype(jnp.float32), bf16(kernel).astype(jnp.float32))
        return bf16(product) + bf16(bias)
    np.testing.assert_array_equal(np.asarray(y.numpy(), np.float32), np.asarray(reference(kernel, bias), np.float32))

    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(mk.cast(layer(x), "float32") ** 2)
    grads = tape.gradient(loss, [layer.kernel, layer.bias])
    expected = jax.grad(lambda k, b: jnp.sum(reference(k, b).astype(jnp.float32) ** 2), (0, 1))(kernel, bias)
    for got, want in zip(grads, expected):
        assert got.dtype == mk.float32
        np.testing.assert_allclose(got.numpy(), want, rtol=2e-2, atol=1e-2)


def test_integer_inputs_are_not_cast_and_variables_read_outside_calls_stay_float32():
    layer = mk.layers.Embedding(10, 4, dtype="mixed_bfloat16")
    out = layer(np.array([[1, 2]], "int32"))
    assert out.dtype == mk.bfloat16 and layer.embeddings.dtype == mk.float32
    assert layer.embeddings.value().dtype == mk.float32


def test_a_float32_layer_inside_a_mixed_model_computes_in_float32():
    mk.mixed_precision.set_global_policy("mixed_bfloat16")
    model = mk.Sequential([mk.Input((4,)), mk.layers.Dense(8), mk.layers.Dense(3, dtype="float32"),
                           mk.layers.Activation("softmax", dtype="float32")])
    out = model(np.ones((2, 4), "float32"))
    assert out.dtype == mk.float32
    assert [layer.compute_dtype for layer in model.layers] == ["bfloat16", "float32", "float32"]


def test_normalization_statistics_in_float32():
    x = (np.random.default_rng(1).standard_normal((8, 6)) * 3 + 100).astype("float32")
    layer = mk.layers.BatchNormalization(dtype="mixed_bfloat16", momentum=0.0)
    out = layer(x, training=True)
    assert out.dtype == mk.bfloat16 and layer.moving_mean.dtype == mk.float32
    xb = np.asarray(bf16(x), np.float32)  # the input is cast to the compute dtype at the boundary
    np.testing.assert_allclose(layer.moving_mean.numpy(), xb.mean(0), rtol=1e-6)
    np.testing.assert_allclose(layer.moving_variance.numpy(), xb.var(0), rtol=1e-4)
    expected = (xb - xb.mean(0)) / np.sqrt(xb.var(0) + 1e-3)
    np.testing.assert_allclose(np.asarray(out.numpy(), np.float32), expected, atol=2e-2)
    norm = mk.layers.LayerNormalization(dtype="mixed_bfloat16")
    out = norm(bf16(x))
    xb = np.asarray(bf16(x), np.float32)
    mean, var = xb.mean(-1, keepdims=True), xb.var(-1, keepdims=True)
    assert out.dtype == mk.bfloat16
    np.testing.assert_allclose(np.asarray(out.numpy(), np.float32), (xb - mean) / np.sqrt(var + 1e-3), atol=2e-2)


def test_fit_under_mixed_bfloat16_trains_with_float32_weights():
    mk.mixed_precision.set_global_policy("mixed_bfloat16")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((128, 6)).astype("float32")
    y = (x[:, 0] > 0).astype("int32")
    model = mk.Sequential([mk.Input((6,)), mk.layers.Dense(16, activation="relu"), mk.layers.Dense(2),
                           mk.layers.Activation("softmax", dtype="float32")])
    model.compile(mk.optimizers.Adam(0.02), "sparse_categorical_crossentropy", metrics=["accuracy"])
    assert isinstance(model.optimizer, mk.optimizers.Adam)  # no loss scaling for bfloat16, as Keras
    history = model.fit(x, y, epochs=8, batch_size=32, verbose=0)
    assert history.history["accuracy"][-1] > 0.9
    assert all(w.dtype == mk.float32 for w in model.weights)
    assert model.predict(x[:2], verbose=0).dtype == np.float32


FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "mixed_precision")


def _layer_dtypes(path):
    with zipfile.ZipFile(path) as archive:
        config = json.loads(archive.read("config.json"))
    # (Keras marks the global policy object that several layers share with a shared_object_id)
    return {layer["config"]["name"]: {k: v for k, v in layer["config"]["dtype"].items() if k != "shared_object_id"}
            for layer in config["config"]["layers"] if layer["class_name"] != "InputLayer"}


def test_a_keras_model_saved_under_mixed_bfloat16_loads_with_its_policies_and_predictions(tmp_path):
    data = np.load(os.path.join(FIXTURES, "cnn_bf16.npz"))
    model = mk.saving.load_model(os.path.join(FIXTURES, "cnn_bf16.keras"))
    assert [layer.dtype_policy.name for layer in model.layers] == ["mixed_bfloat16"] * 4 + ["float32"]
    np.testing.assert_allclose(model.predict(data["x"], verbose=0), data["predictions"], atol=1e-3)
    mk.mixed_precision.set_global_policy("mixed_bfloat16")
    rebuilt = mk.Sequential([mk.Input((8, 8, 1)), mk.layers.Conv2D(4, 3, activation="relu"),
                             mk.layers.BatchNormalization(), mk.layers.Flatten(), mk.layers.Dense(5),
                             mk.layers.Activation("softmax", dtype="float32")])
    rebuilt.load_weights(os.path.join(FIXTURES, "cnn_bf16.weights.h5"))
    np.testing.assert_allclose(rebuilt.predict(data["x"], verbose=0), data["predictions"], atol=1e-3)
    path = str(tmp_path / "again.keras")
    model.save(path)  # written back with the policies as Keras 3 writes them
    assert _layer_dtypes(path) == _layer_dtypes(os.path.join(FIXTURES, "cnn_bf16.keras"))
    np.testing.assert_allclose(mk.saving.load_model(path).predict(data["x"], verbose=0), data["predictions"],
                               atol=1e-3)


@pytest.mark.parametrize("make, inputs", [
    (lambda p: mk.layers.LSTM(4, dtype=p), "seq"),
    (lambda p: mk.layers.GRU(4, dtype=p), "seq"),
    (lambda p: mk.layers.SimpleRNN(4, return_sequences=True, dtype=p), "seq"),
    (lambda p: mk.layers.MultiHeadAttention(2, 4, dtype=p), "attention"),
    (lambda p: mk.layers.Conv1D(4, 3, dtype=p), "seq"),
    (lambda p: mk.layers.Rescaling(0.5, dtype=p), "seq"),
    (lambda p: mk.layers.RandomFlip(dtype=p), "image"),
    (lambda p: mk.layers.Embedding(10, 3, dtype=p), "ids"),
])
def test_layers_output_the_compute_dtype_as_keras_does(make, inputs):
    # Keras 3.15 on JAX gives bfloat16 for each of these under "mixed_bfloat16"
    rng = np.random.default_rng(0)
    data = {"seq": rng.random((2, 6, 4)).astype("float32"), "image": rng.random((2, 4, 4, 3)).astype("float32"),
            "ids": np.array([[1, 2], [3, 4]], "int32")}
    layer = make("mixed_bfloat16")
    if inputs == "attention":
        out = layer(data["seq"], data["seq"])
    else:
        out = layer(data[inputs], training=True) if inputs == "image" else layer(data[inputs])
    assert out.dtype == mk.bfloat16
    assert all(w.dtype == mk.float32 for w in layer.weights)


def test_normalization_computes_and_outputs_the_compute_dtype_as_keras_does():
    # Keras 3.15 (JAX backend) under "mixed_bfloat16": the mean and variance cast to bfloat16, the
    # output bfloat16: [-1.0390625, -1.3359375, -1.640625] for a row of ones after this adapt
    adapted = mk.layers.Normalization(dtype="mixed_bfloat16")
    adapted.adapt(np.arange(12.0, dtype="float32").reshape(4, 3))
    out = adapted(np.ones((2, 3), "float32"))
    assert out.dtype == mk.bfloat16 and adapted.mean.dtype == mk.bfloat16
    np.testing.assert_array_equal(out.numpy().astype("float32"), [[-1.0390625, -1.3359375, -1.640625]] * 2)
    assert all(w.dtype != mk.bfloat16 for w in adapted.weights)
    for invert, want in ((False, -0.5), (True, 4.0)):
        given = mk.layers.Normalization(mean=2.0, variance=4.0, invert=invert, dtype="mixed_bfloat16")
        out = given(np.ones((2, 3), "float32"))
        assert out.dtype == mk.bfloat16
        np.testing.assert_array_equal(out.numpy().astype("float32"), np.full((2, 3), want))


def test_the_autocast_scope_belongs_to_the_thread_of_the_call():
    shared = mk.Variable(np.ones((2, 2), "float32"))
    seen = {}

    class Reads(mk.layers.Layer):
        def call(self, x):
            seen["inside"] = shared.value().dtype
            thread = threading.Thread(target=lambda: seen.update(other_thread=shared.value().dtype))
            thread.start()
            thread.join()
            return x

    Reads(dtype="mixed_bfloat16")(np.ones((1, 2), "float32"))
    assert seen == {"inside": mk.bfloat16, "other_thread": mk.float32}
    assert shared.value().dtype == mk.float32  # and after the call
