"""InceptionV3 (Szegedy et al., 2015), as ``keras.applications.inception_v3``: the same layers,
names (mixed0 ... mixed10, DeepDream's taps), weight files and hashes.

    base = InceptionV3(include_top=False, weights="imagenet")
    dream = Model(base.input, [base.get_layer(n).output for n in ("mixed3", "mixed5")])
"""
from minikeras import layers
from minikeras.applications import _builder, imagenet_utils
from minikeras.applications._builder import bn_axis
from minikeras.backend import image_data_format
from minikeras.models import Model

BASE_URL = "https://storage.googleapis.com/tensorflow/keras-applications/inception_v3/"
WEIGHTS = ("inception_v3_weights_tf_dim_ordering_tf_kernels.h5", "9a0d58056eeedaa3f26cb7ebd46da564")
WEIGHTS_NO_TOP = ("inception_v3_weights_tf_dim_ordering_tf_kernels_notop.h5", "bcbd6486424b2319ff4ef7d526e38f63")


def conv2d_bn(x, filters, num_row, num_col, padding="same", strides=(1, 1), name=None):
    """A bias-free convolution, batch normalization without scale, relu."""
    conv_name, bn_name = (f"{name}_conv", f"{name}_bn") if name is not None else (None, None)
    x = layers.Conv2D(filters, (num_row, num_col), strides=strides, padding=padding, use_bias=False,
                      name=conv_name)(x)
    x = layers.BatchNormalization(axis=bn_axis(), scale=False, name=bn_name)(x)
    return layers.Activation("relu", name=name)(x)


def _avg_pool_branch(x, filters):
    branch = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same")(x)
    return conv2d_bn(branch, filters, 1, 1)


def _block_35(x, pool_filters, name):
    branch1x1 = conv2d_bn(x, 64, 1, 1)
    branch5x5 = conv2d_bn(x, 48, 1, 1)
    branch5x5 = conv2d_bn(branch5x5, 64, 5, 5)
    branch3x3dbl = conv2d_bn(x, 64, 1, 1)
    branch3x3dbl = conv2d_bn(branch3x3dbl, 96, 3, 3)
    branch3x3dbl = conv2d_bn(branch3x3dbl, 96, 3, 3)
    branch_pool = _avg_pool_branch(x, pool_filters)
    return layers.concatenate([branch1x1, branch5x5, branch3x3dbl, branch_pool], axis=bn_axis(), name=name)


def _block_17(x, width, name):
    branch1x1 = conv2d_bn(x, 192, 1, 1)
    branch7x7 = conv2d_bn(x, width, 1, 1)
    branch7x7 = conv2d_bn(branch7x7, width, 1, 7)
    branch7x7 = conv2d_bn(branch7x7, 192, 7, 1)
    branch7x7dbl = conv2d_bn(x, width, 1, 1)
    branch7x7dbl = conv2d_bn(branch7x7dbl, width, 7, 1)
    branch7x7dbl = conv2d_bn(branch7x7dbl, width, 1, 7)
    branch7x7dbl = conv2d_bn(branch7x7dbl, width, 7, 1)
    branch7x7dbl = conv2d_bn(branch7x7dbl, 192, 1, 7)
    branch_pool = _avg_pool_branch(x, 192)
    return layers.concatenate([branch1x1, branch7x7, branch7x7dbl, branch_pool], axis=bn_axis(), name=name)


def _block_8(x, i):
    branch1x1 = conv2d_bn(x, 320, 1, 1)
    branch3x3 = conv2d_bn(x, 384, 1, 1)
    branch3x3_1 = conv2d_bn(branch3x3, 384, 1, 3)
    branch3x3_2 = conv2d_bn(branch3x3, 384, 3, 1)
    branch3x3 = layers.concatenate([branch3x3_1, branch3x3_2], axis=bn_axis(), name=f"mixed9_{i}")
    branch3x3dbl = conv2d_bn(x, 448, 1, 1)
    branch3x3dbl = conv2d_bn(branch3x3dbl, 384, 3, 3)
    branch3x3dbl_1 = conv2d_bn(branch3x3dbl, 384, 1, 3)
    branch3x3dbl_2 = conv2d_bn(branch3x3dbl, 384, 3, 1)
    branch3x3dbl = layers.concatenate([branch3x3dbl_1, branch3x3dbl_2], axis=bn_axis())
    branch_pool = _avg_pool_branch(x, 192)
    return layers.concatenate([branch1x1, branch3x3, branch3x3dbl, branch_pool], axis=bn_axis(),
                              name=f"mixed{9 + i}")


def InceptionV3(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                classes=1000, classifier_activation="softmax", name="inception_v3"):
    """InceptionV3, as ``keras.applications.InceptionV3``.

    Args:
      include_top: the global pooling and Dense classifier on top (then the input is 299x299).
      weights: None, 'imagenet' (Keras's weight file, downloaded once) or a weights file's path.
      input_tensor: a KerasTensor to use as the image input.
      input_shape: (height, width, 3) without the top (each side at least 75).
      pooling: without the top, None, 'avg' or 'max'.
      classes, classifier_activation: the classifier's size and activation.
      name: the model's name.

    Returns:
      A functional Model; inputs go through ``inception_v3.preprocess_input`` ('tf').
    """
    _builder.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=299, min_size=75,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    img_input = _builder.image_input(input_tensor, input_shape)
    x = conv2d_bn(img_input, 32, 3, 3, strides=(2, 2), padding="valid")
    x = conv2d_bn(x, 32, 3, 3, padding="valid")
    x = conv2d_bn(x, 64, 3, 3)
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = conv2d_bn(x, 80, 1, 1, padding="valid")
    x = conv2d_bn(x, 192, 3, 3, padding="valid")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = _block_35(x, 32, "mixed0")
    x = _block_35(x, 64, "mixed1")
    x = _block_35(x, 64, "mixed2")
    branch3x3 = conv2d_bn(x, 384, 3, 3, strides=(2, 2), padding="valid")
    branch3x3dbl = conv2d_bn(x, 64, 1, 1)
    branch3x3dbl = conv2d_bn(branch3x3dbl, 96, 3, 3)
    branch3x3dbl = conv2d_bn(branch3x3dbl, 96, 3, 3, strides=(2, 2), padding="valid")
    branch_pool = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = layers.concatenate([branch3x3, branch3x3dbl, branch_pool], axis=bn_axis(), name="mixed3")
    x = _block_17(x, 128, "mixed4")
    for i in range(2):
        x = _block_17(x, 160, f"mixed{5 + i}")
    x = _block_17(x, 192, "mixed7")
    branch3x3 = conv2d_bn(x, 192, 1, 1)
    branch3x3 = conv2d_bn(branch3x3, 320, 3, 3, strides=(2, 2), padding="valid")
    branch7x7x3 = conv2d_bn(x, 192, 1, 1)
    branch7x7x3 = conv2d_bn(branch7x7x3, 192, 1, 7)
    branch7x7x3 = conv2d_bn(branch7x7x3, 192, 7, 1)
    branch7x7x3 = conv2d_bn(branch7x7x3, 192, 3, 3, strides=(2, 2), padding="valid")
    branch_pool = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = layers.concatenate([branch3x3, branch7x7x3, branch_pool], axis=bn_axis(), name="mixed8")
    for i in range(2):
        x = _block_8(x, i)
    x = _builder.classifier_or_pooling(x, include_top, pooling, classes, classifier_activation, weights,
                                       pool_name=None, max_pool_name=None)
    model = Model(_builder.model_inputs(input_tensor, img_input), x, name=name)
    file_name, file_hash = WEIGHTS if include_top else WEIGHTS_NO_TOP
    return _builder.load_weights(model, weights, file_name, BASE_URL + file_name, file_hash)


def preprocess_input(x, data_format=None):
    """'tf' preprocessing: [0, 255] to [-1, 1]."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
