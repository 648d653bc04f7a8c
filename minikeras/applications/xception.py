"""Xception (Chollet, 2016), as ``keras.applications.xception``: the same layers, names (Grad-CAM's
'block14_sepconv2_act'), weight files and hashes.

    model = Xception(weights="imagenet")
"""
from minikeras import layers
from minikeras.applications import _builder, imagenet_utils
from minikeras.backend import image_data_format
from minikeras.models import Model

BASE_URL = "https://storage.googleapis.com/tensorflow/keras-applications/xception/"
WEIGHTS = ("xception_weights_tf_dim_ordering_tf_kernels.h5", "0a58e3b7378bc2990ea3b43d5981f1f6")
WEIGHTS_NO_TOP = ("xception_weights_tf_dim_ordering_tf_kernels_notop.h5", "b0042744bf5b25fce3cb969f33bebb97")


def _channel_axis():
    return 1 if image_data_format() == "channels_first" else -1


def _sepconv_bn(x, filters, name):
    x = layers.SeparableConv2D(filters, (3, 3), padding="same", use_bias=False, name=name)(x)
    return layers.BatchNormalization(axis=_channel_axis(), name=f"{name}_bn")(x)


def _residual(x, filters):
    residual = layers.Conv2D(filters, (1, 1), strides=(2, 2), padding="same", use_bias=False)(x)
    return layers.BatchNormalization(axis=_channel_axis())(residual)


def _entry_block(x, block, filters, first_relu=True, out_filters=None):
    """Two separable convolutions and a stride-2 max pooling, added to a strided 1x1 shortcut."""
    residual = _residual(x, out_filters or filters)
    if first_relu:
        x = layers.Activation("relu", name=f"block{block}_sepconv1_act")(x)
    x = _sepconv_bn(x, filters, f"block{block}_sepconv1")
    x = layers.Activation("relu", name=f"block{block}_sepconv2_act")(x)
    x = _sepconv_bn(x, out_filters or filters, f"block{block}_sepconv2")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="same", name=f"block{block}_pool")(x)
    return layers.add([x, residual])


def Xception(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
             classes=1000, classifier_activation="softmax", name="xception"):
    """Xception, as ``keras.applications.Xception``.

    Args:
      include_top: the global pooling and Dense classifier on top (then the input is 299x299).
      weights: None, 'imagenet' (Keras's weight file, downloaded once) or a weights file's path.
      input_tensor: a KerasTensor to use as the image input.
      input_shape: (height, width, 3) without the top (each side at least 71).
      pooling: without the top, None, 'avg' or 'max'.
      classes, classifier_activation: the classifier's size and activation.
      name: the model's name.

    Returns:
      A functional Model; inputs go through ``xception.preprocess_input`` ('tf').
    """
    _builder.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=299, min_size=71,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    img_input = _builder.image_input(input_tensor, input_shape)
    channel_axis = _channel_axis()
    x = layers.Conv2D(32, (3, 3), strides=(2, 2), use_bias=False, name="block1_conv1")(img_input)
    x = layers.BatchNormalization(axis=channel_axis, name="block1_conv1_bn")(x)
    x = layers.Activation("relu", name="block1_conv1_act")(x)
    x = layers.Conv2D(64, (3, 3), use_bias=False, name="block1_conv2")(x)
    x = layers.BatchNormalization(axis=channel_axis, name="block1_conv2_bn")(x)
    x = layers.Activation("relu", name="block1_conv2_act")(x)
    x = _entry_block(x, 2, 128, first_relu=False)
    x = _entry_block(x, 3, 256)
    x = _entry_block(x, 4, 728)
    for i in range(8):
        residual = x
        prefix = f"block{i + 5}"
        for k in (1, 2, 3):
            x = layers.Activation("relu", name=f"{prefix}_sepconv{k}_act")(x)
            x = _sepconv_bn(x, 728, f"{prefix}_sepconv{k}")
        x = layers.add([x, residual])
    x = _entry_block(x, 13, 728, out_filters=1024)
    x = _sepconv_bn(x, 1536, "block14_sepconv1")
    x = layers.Activation("relu", name="block14_sepconv1_act")(x)
    x = _sepconv_bn(x, 2048, "block14_sepconv2")
    x = layers.Activation("relu", name="block14_sepconv2_act")(x)
    x = _builder.classifier_or_pooling(x, include_top, pooling, classes, classifier_activation, weights,
                                       pool_name=None, max_pool_name=None)
    model = Model(_builder.model_inputs(input_tensor, img_input), x, name=name)
    file_name, file_hash = WEIGHTS if include_top else WEIGHTS_NO_TOP
    return _builder.load_weights(model, weights, file_name, BASE_URL + file_name, file_hash)


def preprocess_input(x, data_format=None):
    """'tf' preprocessing: [0, 255] to [-1, 1]."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
