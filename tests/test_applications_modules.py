"""keras.applications' module paths and each module's preprocess_input against Keras 3.15.1
(tests/fixtures/keras_application_modules/, made by its make_fixtures.py): every public name of
Keras's modules is there, the constructors are mk.applications' own, and preprocess_input gives
Keras's values channels-last and channels-first, on arrays and on Tensors."""
import json
import os
import warnings

import numpy as np
import pytest

import minikeras as mk
from minikeras import keras
from minikeras.applications import mobilenet_sizes

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras_application_modules")
with open(os.path.join(FIXTURES, "module_names.json")) as _f:
    KERAS_NAMES = json.load(_f)["modules"]
PREPROCESSED = dict(np.load(os.path.join(FIXTURES, "preprocess.npz")))
# modules that only re-export, whose public names are exactly Keras's
REEXPORTS = ("vgg16", "vgg19", "resnet50", "resnet_v2")


def test_keras_applications_is_mk_applications():
    assert keras.applications is mk.applications
    assert mk.keras.applications.MobileNetV2 is mk.applications.mobilenet_v2.MobileNetV2


@pytest.mark.parametrize("module", sorted(KERAS_NAMES))
def test_module_has_keras_names(module):
    ours = getattr(keras.applications, module)
    missing = [name for name in KERAS_NAMES[module] if not hasattr(ours, name)]
    assert not missing, f"keras.applications.{module} lacks {missing}"
    for name in KERAS_NAMES[module]:
        if name[0].isupper():  # a constructor: the one mk.applications exports
            assert getattr(ours, name) is getattr(mk.applications, name)
    if module in REEXPORTS:
        assert sorted(n for n in dir(ours) if not n.startswith("_")) == KERAS_NAMES[module]


def test_module_paths_import():
    import minikeras.keras.applications.resnet_v2 as resnet_v2
    from minikeras.keras.applications.resnet50 import ResNet50, preprocess_input
    assert ResNet50 is mk.applications.ResNet50
    assert preprocess_input is mk.applications.resnet.preprocess_input
    assert resnet_v2 is mk.applications.resnet_v2


@pytest.mark.parametrize("module", sorted(KERAS_NAMES))
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_preprocess_input_matches_keras(module, data_format):
    images = PREPROCESSED["images"]
    if data_format == "channels_first":
        images = images.transpose(0, 3, 1, 2)
    expected = PREPROCESSED[f"{module}/{data_format}"]
    preprocess = getattr(keras.applications, module).preprocess_input
    np.testing.assert_allclose(preprocess(images.copy(), data_format=data_format), expected, rtol=1e-6, atol=1e-5)
    on_tensor = preprocess(mk.constant(images), data_format=data_format)
    np.testing.assert_allclose(np.asarray(on_tensor), expected, rtol=1e-6, atol=1e-5)


def test_mobilenet_weight_resolution_rules():
    sizes = (96, 128, 160, 192, 224)
    assert mobilenet_sizes.default_size((160, 160, 3), sizes) == 160
    assert mobilenet_sizes.default_size((160, 128, 3), sizes) == 224
    assert mobilenet_sizes.default_size(None, sizes) == 224
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mobilenet_sizes.imagenet_rows((96, 96, 3), sizes) == 96
    with pytest.warns(UserWarning, match=r"rows` is not in \[96, 128, 160, 192, 224\]. Weights for input shape "
                                         r"\(224, 224\) will be loaded"):
        assert mobilenet_sizes.imagenet_rows((100, 100, 3), sizes) == 224


@pytest.mark.parametrize("constructor, kwargs, message", [
    ("MobileNetV2", {"alpha": 0.6}, "alpha must be one of `0.35`, `0.50`, `0.75`, `1.0`, `1.3` or `1.4` only"),
    ("MobileNet", {"alpha": 0.6}, "alpha can be one of `0.25`, `0.50`, `0.75` or `1.0` only"),
    ("MobileNet", {"depth_multiplier": 2}, "depth multiplier must be 1"),
    ("MobileNetV3Small", {"alpha": 0.5}, "alpha can be one of `0.75`, `1.0` for non minimalistic"),
    ("MobileNetV3Large", {"alpha": 0.75, "minimalistic": True}, "or `1.0` for minimalistic only"),
])
def test_imagenet_weights_refuse_other_widths_before_downloading(constructor, kwargs, message):
    with pytest.raises(ValueError, match="If imagenet weights are being loaded") as info:
        getattr(mk.applications, constructor)(weights="imagenet", include_top=False, input_shape=(224, 224, 3),
                                              **kwargs)
    assert message in str(info.value)


def test_input_tensor_and_input_shape_must_agree():
    with pytest.raises(ValueError, match=r"input_tensor.shape\[2\] must equal input_shape\[1\]"):
        mk.applications.MobileNetV2(weights=None, include_top=False, input_tensor=mk.Input((64, 64, 3)),
                                    input_shape=(96, 96, 3))
    with pytest.raises(ValueError, match=r"input_shape\[1\] must equal input_tensor.shape\[2\]"):
        mk.applications.MobileNetV3Small(weights=None, include_top=False, input_tensor=mk.Input((64, 64, 3)),
                                         input_shape=(96, 96, 3))


def test_normalization_finalize_state_keeps_initial_statistics():
    """EfficientNet built with weights=None keeps Keras's un-adapted Normalization (mean 0,
    variance 1): it passes inputs through."""
    layer = mk.layers.Normalization(axis=-1)
    layer.build((None, 3))
    layer.finalize_state()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(np.asarray(layer(x)), x)


def test_input_tensor_after_other_layers_keeps_them_in_the_model():
    """As Keras 3.15.1 builds it: the model starts at the source Input, the Rescaling in front is
    one of its layers, and with no input_shape the name carries Keras's 'None' resolution."""
    images = mk.Input((64, 80, 3))
    scaled = mk.layers.Rescaling(1.0)(images)
    model = mk.applications.MobileNetV2(weights=None, include_top=False, input_tensor=scaled)
    assert model.name == "mobilenetv2_1.00_None"
    assert model.input_shape == (None, 64, 80, 3)
    assert model.output_shape == (None, 2, 3, 1280)
    assert len(model.layers) == 155
