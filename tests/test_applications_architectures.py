"""mk.applications' architectures (weights=None, include_top=False, pooling='avg', their smallest
inputs) against Keras 3.15.1's: parameter count, layer count and the names of the last layers that
Keras names itself. The expected values were printed by Keras 3.15.1 on JAX:

    m = keras.applications.VGG16(weights=None, include_top=False, input_shape=(32, 32, 3), pooling="avg")
    m.count_params(), len(m.layers), [l.name for l in m.layers][-3:]

Outputs against Keras's for the same weights are not checked yet (issue #42)."""
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
]


@pytest.mark.parametrize("name, shape, params, layers, top_name", CASES, ids=[c[0] for c in CASES])
def test_architecture_matches_keras(name, shape, params, layers, top_name):
    model = getattr(applications, name)(weights=None, include_top=False, input_shape=shape, pooling="avg")
    assert model.count_params() == params
    assert len(model.layers) == layers
    assert top_name in [layer.name for layer in model.layers][-3:]
