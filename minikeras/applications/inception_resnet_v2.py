"""InceptionResNetV2 (Szegedy et al., 2016), as ``keras.applications.inception_resnet_v2``: the
same layers and names (mixed_5b, block35_1 ... block8_10, conv_7b; the branches' convolutions
take Keras's automatic names), weight files and hashes. ``preprocess_input`` scales images to
[-1, 1].

    base = InceptionResNetV2(include_top=False, weights="imagenet", pooling="avg")
"""
from minikeras import layers
from minikeras.applications import _builder, imagenet_utils
from minikeras.applications._builder import bn_axis
from minikeras.applications.convnext_layers import keras_file_class
from minikeras.backend import image_data_format
from minikeras.layers import Layer
from minikeras.models import Model

BASE_WEIGHT_URL = "https://storage.googleapis.com/tensorflow/keras-applications/inception_resnet_v2/"
WEIGHTS = ("inception_resnet_v2_weights_tf_dim_ordering_tf_kernels.h5", "e693bd0210a403b3192acc6073ad2e96")
WEIGHTS_NO_TOP = ("inception_resnet_v2_weights_tf_dim_ordering_tf_kernels_notop.h5",
                  "d19885ff4a710c122648d3b5c3b684e4")


@keras_file_class("inception_resnet_v2")
class CustomScaleLayer(Layer):
    """``inputs[0] + inputs[1] * scale``: a residual block's input plus its scaled branch, as
    Keras's layer of that name."""

    def __init__(self, scale, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale

    def call(self, inputs):
        return inputs[0] + inputs[1] * self.scale

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[0])

    def get_config(self):
        return {**super().get_config(), "scale": self.scale}


def conv2d_bn(x, filters, kernel_size, strides=1, padding="same", activation="relu", use_bias=False, name=None):
    """A convolution, then (without a bias) BatchNormalization without scale, then the
    activation; named ``name``, ``name_bn``, ``name_ac`` when ``name`` is given."""
    x = layers.Conv2D(filters, kernel_size, strides=strides, padding=padding, use_bias=use_bias, name=name)(x)
    if not use_bias:
        x = layers.BatchNormalization(axis=bn_axis(), scale=False, name=None if name is None else f"{name}_bn")(x)
    if activation is not None:
        x = layers.Activation(activation, name=None if name is None else f"{name}_ac")(x)
    return x


def _block35_branches(x):
    branch_0 = conv2d_bn(x, 32, 1)
    branch_1 = conv2d_bn(conv2d_bn(x, 32, 1), 32, 3)
    branch_2 = conv2d_bn(conv2d_bn(conv2d_bn(x, 32, 1), 48, 3), 64, 3)
    return [branch_0, branch_1, branch_2]


def _block17_branches(x):
    branch_0 = conv2d_bn(x, 192, 1)
    branch_1 = conv2d_bn(conv2d_bn(conv2d_bn(x, 128, 1), 160, [1, 7]), 192, [7, 1])
    return [branch_0, branch_1]


def _block8_branches(x):
    branch_0 = conv2d_bn(x, 192, 1)
    branch_1 = conv2d_bn(conv2d_bn(conv2d_bn(x, 192, 1), 224, [1, 3]), 256, [3, 1])
    return [branch_0, branch_1]


BLOCK_BRANCHES = {"block35": _block35_branches, "block17": _block17_branches, "block8": _block8_branches}


def inception_resnet_block(x, scale, block_type, block_idx, activation="relu"):
    """A residual Inception block: 'block35' (Inception-ResNet-A), 'block17' (B) or 'block8'
    (C); its branches concatenated, projected back to the input's channels by a 1x1
    convolution with bias, scaled by ``scale`` and added to the input."""
    if block_type not in BLOCK_BRANCHES:
        raise ValueError('Unknown Inception-ResNet block type. Expects "block35", "block17" or "block8", but got: '
                         f"{block_type}")
    block_name = f"{block_type}_{block_idx}"
    mixed = layers.Concatenate(axis=bn_axis(), name=f"{block_name}_mixed")(BLOCK_BRANCHES[block_type](x))
    up = conv2d_bn(mixed, x.shape[bn_axis()], 1, activation=None, use_bias=True, name=f"{block_name}_conv")
    x = CustomScaleLayer(scale)([x, up])
    if activation is not None:
        x = layers.Activation(activation, name=f"{block_name}_ac")(x)
    return x


def _stem_and_mixed_5b(img_input):
    x = conv2d_bn(img_input, 32, 3, strides=2, padding="valid")
    x = conv2d_bn(x, 32, 3, padding="valid")
    x = conv2d_bn(x, 64, 3)
    x = layers.MaxPooling2D(3, strides=2)(x)
    x = conv2d_bn(x, 80, 1, padding="valid")
    x = conv2d_bn(x, 192, 3, padding="valid")
    x = layers.MaxPooling2D(3, strides=2)(x)
    branch_0 = conv2d_bn(x, 96, 1)
    branch_1 = conv2d_bn(conv2d_bn(x, 48, 1), 64, 5)
    branch_2 = conv2d_bn(conv2d_bn(conv2d_bn(x, 64, 1), 96, 3), 96, 3)
    branch_pool = conv2d_bn(layers.AveragePooling2D(3, strides=1, padding="same")(x), 64, 1)
    return layers.Concatenate(axis=bn_axis(), name="mixed_5b")([branch_0, branch_1, branch_2, branch_pool])


def _mixed_6a(x):
    branch_0 = conv2d_bn(x, 384, 3, strides=2, padding="valid")
    branch_1 = conv2d_bn(conv2d_bn(conv2d_bn(x, 256, 1), 256, 3), 384, 3, strides=2, padding="valid")
    branch_pool = layers.MaxPooling2D(3, strides=2, padding="valid")(x)
    return layers.Concatenate(axis=bn_axis(), name="mixed_6a")([branch_0, branch_1, branch_pool])


def _mixed_7a(x):
    branch_0 = conv2d_bn(conv2d_bn(x, 256, 1), 384, 3, strides=2, padding="valid")
    branch_1 = conv2d_bn(conv2d_bn(x, 256, 1), 288, 3, strides=2, padding="valid")
    branch_2 = conv2d_bn(conv2d_bn(conv2d_bn(x, 256, 1), 288, 3), 320, 3, strides=2, padding="valid")
    branch_pool = layers.MaxPooling2D(3, strides=2, padding="valid")(x)
    return layers.Concatenate(axis=bn_axis(), name="mixed_7a")([branch_0, branch_1, branch_2, branch_pool])


def InceptionResNetV2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                      classes=1000, classifier_activation="softmax", name="inception_resnet_v2"):
    """InceptionResNetV2, as ``keras.applications.InceptionResNetV2``.

    Args:
      include_top: global average pooling and the Dense 'predictions' on top (then the input
        is 299x299).
      weights: None, 'imagenet' (Keras's weight file, downloaded once) or a weights file's path.
      input_tensor: a KerasTensor to use as the image input.
      input_shape: (height, width, channels) without the top (each side at least 75).
      pooling: without the top, None (the 4-D feature map), 'avg' or 'max'.
      classes, classifier_activation: the classifier's size and activation.
      name: the model's name.

    Returns:
      A functional Model taking images preprocessed by ``preprocess_input`` ([-1, 1]).
    """
    _builder.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=299, min_size=75,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    img_input = _builder.image_input(input_tensor, input_shape)
    x = _stem_and_mixed_5b(img_input)
    for block_idx in range(1, 11):
        x = inception_resnet_block(x, scale=0.17, block_type="block35", block_idx=block_idx)
    x = _mixed_6a(x)
    for block_idx in range(1, 21):
        x = inception_resnet_block(x, scale=0.1, block_type="block17", block_idx=block_idx)
    x = _mixed_7a(x)
    for block_idx in range(1, 10):
        x = inception_resnet_block(x, scale=0.2, block_type="block8", block_idx=block_idx)
    x = inception_resnet_block(x, scale=1.0, activation=None, block_type="block8", block_idx=10)
    x = conv2d_bn(x, 1536, 1, name="conv_7b")
    x = _builder.classifier_or_pooling(x, include_top, pooling, classes, classifier_activation, weights,
                                       pool_name=None, max_pool_name=None)
    model = Model(_builder.model_inputs(input_tensor, img_input), x, name=name)
    file_name, file_hash = WEIGHTS if include_top else WEIGHTS_NO_TOP
    return _builder.load_weights(model, weights, file_name, BASE_WEIGHT_URL + file_name, file_hash)


def preprocess_input(x, data_format=None):
    """Scales images in [0, 255] to [-1, 1] (``imagenet_utils.preprocess_input``'s 'tf' mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
