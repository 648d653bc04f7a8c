"""mk.applications' architectures (weights=None, include_top=False, pooling='avg', their smallest
inputs) against Keras 3.15.1's: parameter count, layer count and the names of the last layers that
Keras names itself. The expected values were printed by Keras 3.15.1 on JAX:

    m = keras.applications.VGG16(weights=None, include_top=False, input_shape=(32, 32, 3), pooling="avg")
    m.count_params(), len(m.layers), [l.name for l in m.layers][-3:]

Outputs against Keras's for the same weights: test_applications_keras_outputs.py."""
import os

import pytest

from minikeras import applications

CASES = [  # name, input shape, parameters, layers, a layer name near the top
    ("VGG16", (32, 32, 3), 14714688, 20, "block5_pool"),
    ("VGG19", (32, 32, 3), 20024384, 23, "block5_pool"),
    ("ResNet50", (32, 32, 3), 23587712, 176, "conv5_block3_out"),
    ("ResNet50V2", (32, 32, 3), 23564800, 191, "post_relu"),
    ("DenseNet121", (32, 32, 3), 7037504, 428, "relu"),
    ("InceptionV3", (75, 75, 3), 21802784, 312, "mixed10"),
    ("Xception", (71, 71, 3), 20861480, 133, "block14_sepconv2_act"),
    ("MobileNet", (32, 32, 3), 3228864, 87, "conv_pw_13_relu"),
    ("MobileNetV2", (32, 32, 3), 2257984, 155, "out_relu"),
    ("MobileNetV3Small", (32, 32, 3), 939120, 158, "avg_pool"),
    ("MobileNetV3Large", (32, 32, 3), 2996352, 188, "avg_pool"),
    ("EfficientNetB0", (32, 32, 3), 4049571, 238, "top_activation"),
    ("EfficientNetB3", (32, 32, 3), 10783535, 385, "top_activation"),
    # the smallest of each family are compared output for output in test_applications_keras_outputs
    ("ConvNeXtSmall", (32, 32, 3), 49454688, 260, "convnext_small_stage_3_block_2_identity"),
    ("EfficientNetV2B3", (32, 32, 3), 12930622, 410, "top_activation"),
    ("EfficientNetV2S", (32, 32, 3), 20331360, 514, "top_activation"),
    ("NASNetLarge", (32, 32, 3), 84916818, 1040, "normal_concat_18"),
]
# too large to build in every run (up to 348M parameters); MINIKERAS_LARGE_APPLICATIONS=1 builds them
LARGE_CASES = [
    ("ConvNeXtBase", (32, 32, 3), 87566464, 260, "convnext_base_stage_3_block_2_identity"),
    ("ConvNeXtLarge", (32, 32, 3), 196230336, 260, "convnext_large_stage_3_block_2_identity"),
    ("ConvNeXtXLarge", (32, 32, 3), 348147968, 260, "convnext_xlarge_stage_3_block_2_identity"),
    ("EfficientNetV2B1", (32, 32, 3), 6931124, 335, "top_activation"),
    ("EfficientNetV2B2", (32, 32, 3), 8769374, 350, "top_activation"),
    ("EfficientNetV2M", (32, 32, 3), 53150388, 741, "top_activation"),
    ("EfficientNetV2L", (32, 32, 3), 117746848, 1029, "top_activation"),
]


@pytest.mark.parametrize("name, shape, params, layers, top_name", CASES, ids=[c[0] for c in CASES])
def test_architecture_matches_keras(name, shape, params, layers, top_name):
    model = getattr(applications, name)(weights=None, include_top=False, input_shape=shape, pooling="avg")
    assert model.count_params() == params
    assert len(model.layers) == layers
    assert top_name in [layer.name for layer in model.layers][-3:]


@pytest.mark.skipif(not os.environ.get("MINIKERAS_LARGE_APPLICATIONS"), reason="MINIKERAS_LARGE_APPLICATIONS is unset")
@pytest.mark.parametrize("name, shape, params, layers, top_name", LARGE_CASES, ids=[c[0] for c in LARGE_CASES])
def test_large_architecture_matches_keras(name, shape, params, layers, top_name):
    test_architecture_matches_keras(name, shape, params, layers, top_name)
