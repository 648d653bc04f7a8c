"""The layers Keras's applications define for themselves, against their written formulas:
ConvNeXt's LayerScale and StochasticDepth, InceptionResNetV2's CustomScaleLayer; and in `.keras`
files both ways with Keras 3.15.1 (tests/fixtures/keras_application_layers/)."""
import json
import os
import zipfile

import numpy as np
import pytest

import minikeras as mk
from minikeras.applications.convnext import LayerScale, StochasticDepth
from minikeras.applications.inception_resnet_v2 import CustomScaleLayer


def test_layer_scale_multiplies_each_channel_by_its_trainable_scale():
    layer = LayerScale(1e-6, 3)
    x = np.arange(24, dtype=np.float32).reshape(2, 2, 2, 3)
    np.testing.assert_allclose(np.asarray(layer(x)), x * 1e-6, rtol=1e-6)
    assert [w.shape for w in layer.trainable_weights] == [(3,)]
    layer.gamma.assign(np.array([1.0, 2.0, -1.0], np.float32))
    np.testing.assert_allclose(np.asarray(layer(x)), x * np.array([1.0, 2.0, -1.0]))
    assert layer.get_config()["init_values"] == 1e-6 and layer.get_config()["projection_dim"] == 3


def test_layer_scale_refuses_other_channel_counts():
    with pytest.raises(ValueError, match=r"LayerScale 'scale' expects inputs with 4 channels.*\(2, 3\)"):
        LayerScale(0.1, 4, name="scale")(np.ones((2, 3), np.float32))


def test_stochastic_depth_drops_whole_examples_while_training():
    rate = 0.25
    layer = StochasticDepth(rate)
    x = np.ones((4000, 2, 2, 3), np.float32)
    np.testing.assert_array_equal(np.asarray(layer(x)), x)  # inference: the identity
    y = np.asarray(layer(x, training=True))
    per_example = y.reshape(len(x), -1)
    # each example is all zeros or all 1 / keep_prob
    assert np.all(per_example == per_example[:, :1])
    assert set(np.unique(per_example[:, 0]).tolist()) == {0.0, np.float32(1 / (1 - rate))}
    dropped = float(np.mean(per_example[:, 0] == 0))
    assert abs(dropped - rate) < 0.03  # 4000 draws: the standard error is 0.007
    np.testing.assert_allclose(y.mean(), 1.0, atol=0.05)  # unbiased


@pytest.mark.parametrize("rate", [-0.1, 1.0, "0.5"])
def test_stochastic_depth_refuses_rates_outside_zero_one(rate):
    with pytest.raises(ValueError, match="StochasticDepth: `drop_path_rate` must be a float in"):
        StochasticDepth(rate)


def test_custom_scale_layer_adds_the_scaled_branch():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    branch = np.full((2, 3), 2.0, np.float32)
    np.testing.assert_allclose(np.asarray(CustomScaleLayer(0.17)([x, branch])), x + 0.34, rtol=1e-6)
    symbolic = CustomScaleLayer(0.1)([mk.Input((5, 5, 4)), mk.Input((5, 5, 4))])
    assert tuple(symbolic.shape) == (None, 5, 5, 4)


FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras_application_layers")


def _application_layer_entries(path):
    with zipfile.ZipFile(path) as archive:
        layers = json.loads(archive.read("config.json"))["config"]["layers"]
    return {layer["config"]["name"]: (layer["module"], layer["class_name"]) for layer in layers
            if layer["class_name"] in ("LayerScale", "StochasticDepth", "CustomScaleLayer")}


def test_keras_files_with_the_application_layers_load_and_save_as_kerass(tmp_path):
    """Keras's file (its layers under keras.src.applications.convnext and .inception_resnet_v2)
    loads here with Keras's outputs; minikeras writes them back under Keras's module names (so
    Keras's loader finds them) and reads its own file."""
    io = np.load(os.path.join(FIXTURES, "io.npz"))
    keras_file = os.path.join(FIXTURES, "model.keras")
    model = mk.keras.models.load_model(keras_file)
    np.testing.assert_allclose(np.asarray(model(io["x"])), io["y"], rtol=1e-6, atol=1e-6)
    ours = str(tmp_path / "ours.keras")
    model.save(ours)
    assert _application_layer_entries(ours) == _application_layer_entries(keras_file) == {
        "layer_scale": ("keras.src.applications.convnext", "LayerScale"),
        "stochastic_depth": ("keras.src.applications.convnext", "StochasticDepth"),
        "custom_scale": ("keras.src.applications.inception_resnet_v2", "CustomScaleLayer")}
    again = mk.keras.models.load_model(ours)
    assert again.get_layer("stochastic_depth").drop_path_rate == 0.25
    np.testing.assert_allclose(np.asarray(again(io["x"])), io["y"], rtol=1e-6, atol=1e-6)
