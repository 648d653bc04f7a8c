"""NASNet-A (Zoph et al., 2018), as ``keras.applications.nasnet``: NASNetMobile and NASNetLarge,
with Keras's cells, layer names, weight files and hashes. Channels-last only, as in Keras;
``preprocess_input`` scales images to [-1, 1].

    model = NASNetMobile(weights="imagenet")                  # 224x224
    base = NASNetLarge(include_top=False, pooling="avg")      # 331x331 by default
"""
from minikeras import layers
from minikeras.applications import _builder, imagenet_utils
from minikeras.backend import image_data_format
from minikeras.models import Model

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/nasnet/"
NASNET_MOBILE_WEIGHT_PATH = f"{BASE_WEIGHTS_PATH}NASNet-mobile.h5"
NASNET_MOBILE_WEIGHT_PATH_NO_TOP = f"{BASE_WEIGHTS_PATH}NASNet-mobile-no-top.h5"
NASNET_LARGE_WEIGHT_PATH = f"{BASE_WEIGHTS_PATH}NASNet-large.h5"
NASNET_LARGE_WEIGHT_PATH_NO_TOP = f"{BASE_WEIGHTS_PATH}NASNet-large-no-top.h5"
WEIGHT_FILES = {  # (default size, include_top): (file name in the cache, URL, md5)
    (224, True): ("nasnet_mobile.h5", NASNET_MOBILE_WEIGHT_PATH, "020fb642bf7360b370c678b08e0adf61"),
    (224, False): ("nasnet_mobile_no_top.h5", NASNET_MOBILE_WEIGHT_PATH_NO_TOP, "1ed92395b5b598bdda52abe5c0dbfd63"),
    (331, True): ("nasnet_large.h5", NASNET_LARGE_WEIGHT_PATH, "11577c9a518f0070763c2b964a382f17"),
    (331, False): ("nasnet_large_no_top.h5", NASNET_LARGE_WEIGHT_PATH_NO_TOP, "d81d89dc07e6e56530c4e77faddd61b5"),
}
CHANNEL_AXIS = -1


def _batch_norm(name):
    return layers.BatchNormalization(axis=CHANNEL_AXIS, momentum=0.9997, epsilon=1e-3, name=name)


def _conv_1x1(filters, name, strides=(1, 1)):
    return layers.Conv2D(filters, (1, 1), strides=strides, padding="same", use_bias=False, name=name,
                         kernel_initializer="he_normal")


def _separable_conv_block(ip, filters, kernel_size=(3, 3), strides=(1, 1), block_id=None):
    """relu, SeparableConv2D (strided: after TensorFlow's 'same' padding), BatchNormalization,
    relu, SeparableConv2D, BatchNormalization."""
    x = layers.Activation("relu")(ip)
    if strides == (2, 2):
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size),
                                 name=f"separable_conv_1_pad_{block_id}")(x)
        conv_pad = "valid"
    else:
        conv_pad = "same"
    x = layers.SeparableConv2D(filters, kernel_size, strides=strides, name=f"separable_conv_1_{block_id}",
                               padding=conv_pad, use_bias=False)(x)
    x = _batch_norm(f"separable_conv_1_bn_{block_id}")(x)
    x = layers.Activation("relu")(x)
    x = layers.SeparableConv2D(filters, kernel_size, name=f"separable_conv_2_{block_id}", padding="same",
                               use_bias=False)(x)
    return _batch_norm(f"separable_conv_2_bn_{block_id}")(x)


def _adjust_block(p, ip, filters, block_id=None):
    """The previous cell's output ``p`` made to match ``ip``: halved in size (two offset 1x1
    stride-2 paths, concatenated) when its spatial size differs, projected by a 1x1
    convolution when only its channels differ."""
    if p is None:
        return ip
    if p.shape[-2] != ip.shape[-2]:
        p = layers.Activation("relu", name=f"adjust_relu_1_{block_id}")(p)
        p1 = layers.AveragePooling2D((1, 1), strides=(2, 2), padding="valid", name=f"adjust_avg_pool_1_{block_id}")(p)
        p1 = _conv_1x1(filters // 2, f"adjust_conv_1_{block_id}")(p1)
        p2 = layers.ZeroPadding2D(padding=((0, 1), (0, 1)))(p)
        p2 = layers.Cropping2D(cropping=((1, 0), (1, 0)))(p2)
        p2 = layers.AveragePooling2D((1, 1), strides=(2, 2), padding="valid", name=f"adjust_avg_pool_2_{block_id}")(p2)
        p2 = _conv_1x1(filters // 2, f"adjust_conv_2_{block_id}")(p2)
        p = layers.concatenate([p1, p2], axis=CHANNEL_AXIS)
        return _batch_norm(f"adjust_bn_{block_id}")(p)
    if p.shape[CHANNEL_AXIS] != filters:
        p = layers.Activation("relu")(p)
        p = _conv_1x1(filters, f"adjust_conv_projection_{block_id}")(p)
        return _batch_norm(f"adjust_bn_{block_id}")(p)
    return p


def _avg_pool_3x3(name, strides=(1, 1), padding="same"):
    return layers.AveragePooling2D((3, 3), strides=strides, padding=padding, name=name)


def _normal_a_cell(ip, p, filters, block_id=None):
    """A NASNet-A normal cell: five pairwise sums of separable convolutions, average poolings
    and identities over the cell's input and the previous cell's, concatenated with the
    adjusted previous output. Returns (output, ``ip`` as the next cell's previous)."""
    p = _adjust_block(p, ip, filters, block_id)
    h = layers.Activation("relu")(ip)
    h = _conv_1x1(filters, f"normal_conv_1_{block_id}")(h)
    h = _batch_norm(f"normal_bn_1_{block_id}")(h)
    x1_1 = _separable_conv_block(h, filters, kernel_size=(5, 5), block_id=f"normal_left1_{block_id}")
    x1_2 = _separable_conv_block(p, filters, block_id=f"normal_right1_{block_id}")
    x1 = layers.add([x1_1, x1_2], name=f"normal_add_1_{block_id}")
    x2_1 = _separable_conv_block(p, filters, (5, 5), block_id=f"normal_left2_{block_id}")
    x2_2 = _separable_conv_block(p, filters, (3, 3), block_id=f"normal_right2_{block_id}")
    x2 = layers.add([x2_1, x2_2], name=f"normal_add_2_{block_id}")
    x3 = _avg_pool_3x3(f"normal_left3_{block_id}")(h)
    x3 = layers.add([x3, p], name=f"normal_add_3_{block_id}")
    x4_1 = _avg_pool_3x3(f"normal_left4_{block_id}")(p)
    x4_2 = _avg_pool_3x3(f"normal_right4_{block_id}")(p)
    x4 = layers.add([x4_1, x4_2], name=f"normal_add_4_{block_id}")
    x5 = _separable_conv_block(h, filters, block_id=f"normal_left5_{block_id}")
    x5 = layers.add([x5, h], name=f"normal_add_5_{block_id}")
    x = layers.concatenate([p, x1, x2, x3, x4, x5], axis=CHANNEL_AXIS, name=f"normal_concat_{block_id}")
    return x, ip


def _reduction_a_cell(ip, p, filters, block_id=None):
    """A NASNet-A reduction cell: as the normal cell, its operations striding by 2. Returns
    (output, ``ip`` as the next cell's previous)."""
    p = _adjust_block(p, ip, filters, block_id)
    h = layers.Activation("relu")(ip)
    h = _conv_1x1(filters, f"reduction_conv_1_{block_id}")(h)
    h = _batch_norm(f"reduction_bn_1_{block_id}")(h)
    h3 = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(h, 3), name=f"reduction_pad_1_{block_id}")(h)
    x1_1 = _separable_conv_block(h, filters, (5, 5), strides=(2, 2), block_id=f"reduction_left1_{block_id}")
    x1_2 = _separable_conv_block(p, filters, (7, 7), strides=(2, 2), block_id=f"reduction_right1_{block_id}")
    x1 = layers.add([x1_1, x1_2], name=f"reduction_add_1_{block_id}")
    x2_1 = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="valid", name=f"reduction_left2_{block_id}")(h3)
    x2_2 = _separable_conv_block(p, filters, (7, 7), strides=(2, 2), block_id=f"reduction_right2_{block_id}")
    x2 = layers.add([x2_1, x2_2], name=f"reduction_add_2_{block_id}")
    x3_1 = _avg_pool_3x3(f"reduction_left3_{block_id}", strides=(2, 2), padding="valid")(h3)
    x3_2 = _separable_conv_block(p, filters, (5, 5), strides=(2, 2), block_id=f"reduction_right3_{block_id}")
    x3 = layers.add([x3_1, x3_2], name=f"reduction_add3_{block_id}")
    x4 = _avg_pool_3x3(f"reduction_left4_{block_id}")(x1)
    x4 = layers.add([x2, x4])
    x5_1 = _separable_conv_block(x1, filters, (3, 3), block_id=f"reduction_left4_{block_id}")
    x5_2 = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="valid", name=f"reduction_right5_{block_id}")(h3)
    x5 = layers.add([x5_1, x5_2], name=f"reduction_add4_{block_id}")
    x = layers.concatenate([x2, x3, x4, x5], axis=CHANNEL_AXIS, name=f"reduction_concat_{block_id}")
    return x, ip


def NASNet(input_shape=None, penultimate_filters=4032, num_blocks=6, stem_block_filters=96, skip_reduction=True,
           filter_multiplier=2, include_top=True, weights="imagenet", input_tensor=None, pooling=None, classes=1000,
           default_size=None, classifier_activation="softmax", name="NASNet"):
    """A NASNet-A: a stride-2 stem, two reduction cells, then three stacks of ``num_blocks``
    normal cells with a reduction cell between, ``penultimate_filters // 24`` filters in the
    first stack (times ``filter_multiplier`` in each next). ImageNet weights exist for
    ``default_size`` 224 (Mobile) and 331 (Large). See ``NASNetLarge`` for the other arguments."""
    if image_data_format() == "channels_first":
        raise ValueError("NASNet does not support the `channels_first` image data format. Switch to `channels_last` "
                         "by editing your local config file at ~/.keras/keras.json")
    _builder.check_weights_argument(weights, include_top, classes)
    if isinstance(input_shape, tuple) and None in input_shape and weights == "imagenet":
        raise ValueError("When specifying the input shape of a NASNet and loading `ImageNet` weights, the input_shape "
                         f"argument must be static (no None entries). Got: `input_shape={input_shape}`.")
    if default_size is None:
        default_size = 331
    if weights == "imagenet" and default_size not in (224, 331):  # before building, unlike Keras
        raise ValueError("ImageNet weights can only be loaded with NASNetLarge or NASNetMobile")
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size, min_size=32,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    img_input = _builder.image_input(input_tensor, input_shape)
    if penultimate_filters % (24 * (filter_multiplier ** 2)) != 0:
        raise ValueError("For NASNet-A models, the `penultimate_filters` must be a multiple of 24 * "
                         f"(`filter_multiplier` ** 2). Current value: {penultimate_filters}")
    filters = penultimate_filters // 24
    x = layers.Conv2D(stem_block_filters, (3, 3), strides=(2, 2), padding="valid", use_bias=False, name="stem_conv1",
                      kernel_initializer="he_normal")(img_input)
    x = _batch_norm("stem_bn1")(x)
    p = None
    x, p = _reduction_a_cell(x, p, filters // (filter_multiplier ** 2), block_id="stem_1")
    x, p = _reduction_a_cell(x, p, filters // filter_multiplier, block_id="stem_2")
    for stack in range(3):
        if stack > 0:
            x, p0 = _reduction_a_cell(x, p, filters * filter_multiplier ** stack,
                                      block_id=f"reduce_{stack * num_blocks}")
            p = p0 if not skip_reduction else p
        for i in range(num_blocks):
            block_id = f"{i}" if stack == 0 else f"{stack * num_blocks + i + 1}"
            x, p = _normal_a_cell(x, p, filters * filter_multiplier ** stack, block_id=block_id)
    x = layers.Activation("relu")(x)
    if include_top:
        x = layers.GlobalAveragePooling2D()(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    elif pooling == "avg":
        x = layers.GlobalAveragePooling2D()(x)
    elif pooling == "max":
        x = layers.GlobalMaxPooling2D()(x)
    model = Model(_builder.model_inputs(input_tensor, img_input), x, name=name)
    file_name, url, file_hash = WEIGHT_FILES.get((default_size, include_top), (None, "", None))
    return _builder.load_weights(model, weights, file_name, url, file_hash)


def NASNetMobile(input_shape=None, include_top=True, weights="imagenet", input_tensor=None, pooling=None, classes=1000,
                 classifier_activation="softmax", name="nasnet_mobile"):
    """NASNetMobile (NASNet-A 4 @ 1056: 224x224 by default, also without the top), as
    ``keras.applications.NASNetMobile``; arguments as ``NASNetLarge``."""
    if not include_top and input_shape is None:
        input_shape = (224, 224, 3)
    return NASNet(input_shape, penultimate_filters=1056, num_blocks=4, stem_block_filters=32, skip_reduction=False,
                  filter_multiplier=2, include_top=include_top, weights=weights, input_tensor=input_tensor,
                  pooling=pooling, classes=classes, default_size=224, classifier_activation=classifier_activation,
                  name=name)


def NASNetLarge(input_shape=None, include_top=True, weights="imagenet", input_tensor=None, pooling=None, classes=1000,
                classifier_activation="softmax", name="nasnet_large"):
    """NASNetLarge (NASNet-A 6 @ 4032), as ``keras.applications.NASNetLarge``.

    Args:
      input_shape: (height, width, 3); with the top and ImageNet weights it must be the
        default (331x331; NASNetMobile: 224x224); each side at least 32.
      include_top: global average pooling and the Dense 'predictions' on top.
      weights: None, 'imagenet' (Keras's weight file, downloaded once) or a weights file's path.
      input_tensor: a KerasTensor to use as the image input.
      pooling: without the top, None (the 4-D feature map), 'avg' or 'max'.
      classes, classifier_activation: the classifier's size and activation.
      name: the model's name.

    Returns:
      A functional Model taking images preprocessed by ``preprocess_input`` ([-1, 1]).
    """
    return NASNet(input_shape, penultimate_filters=4032, num_blocks=6, stem_block_filters=96, skip_reduction=True,
                  filter_multiplier=2, include_top=include_top, weights=weights, input_tensor=input_tensor,
                  pooling=pooling, classes=classes, default_size=331, classifier_activation=classifier_activation,
                  name=name)


def preprocess_input(x, data_format=None):
    """Scales images in [0, 255] to [-1, 1] (``imagenet_utils.preprocess_input``'s 'tf' mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
