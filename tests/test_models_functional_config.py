"""A functional model's get_config/from_config in Keras 3's layout, and its .keras round trip."""
import numpy as np

import minikeras as mk
from minikeras import layers
from minikeras.module import clear_session

RNG = np.random.default_rng(0)
XA = RNG.normal(size=(8, 4)).astype("float32")
XB = RNG.normal(size=(8, 3)).astype("float32")


def two_in_two_out():
    clear_session()  # the automatic names below ("concatenate") as in a fresh session
    a, b = mk.Input((4,), name="a"), mk.Input((3,), name="b")
    h = layers.Dense(5, activation="relu", name="hidden")(layers.concatenate([a, b]))
    return mk.Model([a, b], [layers.Dense(1, name="score")(h), layers.Dense(3, activation="softmax", name="cls")(h)],
                    name="two")


def test_config_round_trip_in_keras_3_layout(tmp_path):
    model = two_in_two_out()
    config = model.get_config()
    assert config["input_layers"] == [["a", 0, 0], ["b", 0, 0]]
    assert config["output_layers"] == [["score", 0, 0], ["cls", 0, 0]]
    hidden = next(spec for spec in config["layers"] if spec["name"] == "hidden")
    assert hidden["inbound_nodes"] == [{"args": [{"class_name": "__keras_tensor__", "config": {
        "shape": [None, 7], "dtype": "float32", "keras_history": ["concatenate", 0, 0]}}], "kwargs": {}}]
    rebuilt = type(model).from_config(config)
    rebuilt.set_weights(model.get_weights())
    np.testing.assert_allclose(rebuilt([XA, XB])[1].numpy(), model([XA, XB])[1].numpy(), rtol=1e-6)
    path = str(tmp_path / "two.keras")
    model.save(path)
    loaded = mk.saving.load_model(path)
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in model.layers]
    np.testing.assert_allclose(loaded([XA, XB])[0].numpy(), model([XA, XB])[0].numpy(), rtol=1e-6)


def test_nested_model_and_dict_outputs_round_trip():
    inner_in = mk.Input((4,), name="inner_in")
    inner = mk.Model(inner_in, layers.Dense(3, name="inner_dense")(inner_in), name="inner")
    x = mk.Input((4,), name="x")
    model = mk.Model(x, {"feat": inner(x), "out": layers.Dense(1, name="out")(inner(x))}, name="outer")
    config = model.get_config()
    assert config["output_layers"] == {"feat": ["inner", 0, 0], "out": ["out", 0, 0]}
    rebuilt = type(model).from_config(config)
    rebuilt.set_weights(model.get_weights())
    expected, got = model(XA), rebuilt(XA)
    for key in ("feat", "out"):
        np.testing.assert_allclose(got[key].numpy(), expected[key].numpy(), rtol=1e-6)
