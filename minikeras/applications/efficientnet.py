"""EfficientNetB0..B7 (Tan and Le, 2019), as ``keras.applications.efficientnet``: one builder,
each model a width coefficient, a depth coefficient, a default resolution and a dropout rate;
Keras's layer names, initializers, weight files and hashes. The model scales its [0, 255] input
itself (Rescaling and Normalization first), so ``preprocess_input`` passes images through.

    model = EfficientNetB0(weights="imagenet")          # takes images in [0, 255]
    base = EfficientNetB3(include_top=False, pooling="avg")
"""
import copy
import math

from minikeras import layers
from minikeras.applications import _builder, imagenet_utils
from minikeras.applications._builder import bn_axis
from minikeras.applications.mobilenet_sizes import make_divisible
from minikeras.backend import image_data_format
from minikeras.models import Model

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/keras-applications/"
WEIGHTS_HASHES = {  # variant: (md5 with top, md5 without)
    "b0": ("902e53a9f72be733fc0bcb005b3ebbac", "50bc09e76180e00e4465e1a485ddc09d"),
    "b1": ("1d254153d4ab51201f1646940f018540", "74c4e6b3e1f6a1eea24c589628592432"),
    "b2": ("b15cce36ff4dcbd00b6dd88e7857a6ad", "111f8e2ac8aa800a7a99e3239f7bfb39"),
    "b3": ("ffd1fdc53d0ce67064dc6a9c7960ede0", "af6d107764bb5b1abb91932881670226"),
    "b4": ("18c95ad55216b8f92d7e70b3a046e2fc", "ebc24e6d6c33eaebbd558eafbeedf1ba"),
    "b5": ("ace28f2a6363774853a83a0b21b9421a", "38879255a25d3c92d5e44e04ae6cec6f"),
    "b6": ("165f6e37dce68623721b423839de8be5", "9ecce42647a20130c1f39a5d4cb75743"),
    "b7": ("8c03f828fec3ef71311cd463b6759d99", "cbcfe4450ddf6f3ad90b1b398090fe4a"),
}
# B0's seven stages; the other variants widen (filters) and deepen (repeats) them
DEFAULT_BLOCKS_ARGS = [
    {"kernel_size": k, "repeats": r, "filters_in": fi, "filters_out": fo, "expand_ratio": e, "id_skip": True,
     "strides": s, "se_ratio": 0.25}
    for k, r, fi, fo, e, s in ((3, 1, 32, 16, 1, 1), (3, 2, 16, 24, 6, 2), (5, 2, 24, 40, 6, 2), (3, 3, 40, 80, 6, 2),
                               (5, 3, 80, 112, 6, 1), (5, 4, 112, 192, 6, 2), (3, 1, 192, 320, 6, 1))]
CONV_KERNEL_INITIALIZER = {"class_name": "VarianceScaling",
                           "config": {"scale": 2.0, "mode": "fan_out", "distribution": "truncated_normal"}}
DENSE_KERNEL_INITIALIZER = {"class_name": "VarianceScaling",
                            "config": {"scale": 1.0 / 3.0, "mode": "fan_out", "distribution": "uniform"}}
IMAGENET_STDDEV_RGB = [0.229, 0.224, 0.225]
VARIANTS = {  # variant: (width coefficient, depth coefficient, default size, dropout rate)
    "b0": (1.0, 1.0, 224, 0.2), "b1": (1.0, 1.1, 240, 0.2), "b2": (1.1, 1.2, 260, 0.3), "b3": (1.2, 1.4, 300, 0.3),
    "b4": (1.4, 1.8, 380, 0.4), "b5": (1.6, 2.2, 456, 0.4), "b6": (1.8, 2.6, 528, 0.5), "b7": (2.0, 3.1, 600, 0.5),
}


def block(inputs, activation="swish", drop_rate=0.0, name="", filters_in=32, filters_out=16, kernel_size=3,
          strides=1, expand_ratio=1, se_ratio=0.0, id_skip=True):
    """An MBConv block: expansion, depthwise convolution, squeeze-and-excite, projection, and the
    input added back (after a per-sample dropout, the stochastic depth) when the shapes allow."""
    filters = filters_in * expand_ratio
    if expand_ratio != 1:
        x = layers.Conv2D(filters, 1, padding="same", use_bias=False, kernel_initializer=CONV_KERNEL_INITIALIZER,
                          name=f"{name}expand_conv")(inputs)
        x = layers.BatchNormalization(axis=bn_axis(), name=f"{name}expand_bn")(x)
        x = layers.Activation(activation, name=f"{name}expand_activation")(x)
    else:
        x = inputs
    if strides == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size), name=f"{name}dwconv_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=strides, padding="valid" if strides == 2 else "same",
                               use_bias=False, depthwise_initializer=CONV_KERNEL_INITIALIZER, name=f"{name}dwconv")(x)
    x = layers.BatchNormalization(axis=bn_axis(), name=f"{name}bn")(x)
    x = layers.Activation(activation, name=f"{name}activation")(x)
    if 0 < se_ratio <= 1:
        filters_se = max(1, int(filters_in * se_ratio))
        se = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
        se_shape = (filters, 1, 1) if bn_axis() == 1 else (1, 1, filters)
        se = layers.Reshape(se_shape, name=f"{name}se_reshape")(se)
        se = layers.Conv2D(filters_se, 1, padding="same", activation=activation,
                           kernel_initializer=CONV_KERNEL_INITIALIZER, name=f"{name}se_reduce")(se)
        se = layers.Conv2D(filters, 1, padding="same", activation="sigmoid", kernel_initializer=CONV_KERNEL_INITIALIZER,
                           name=f"{name}se_expand")(se)
        x = layers.multiply([x, se], name=f"{name}se_excite")
    x = layers.Conv2D(filters_out, 1, padding="same", use_bias=False, kernel_initializer=CONV_KERNEL_INITIALIZER,
                      name=f"{name}project_conv")(x)
    x = layers.BatchNormalization(axis=bn_axis(), name=f"{name}project_bn")(x)
    if id_skip and strides == 1 and filters_in == filters_out:
        if drop_rate > 0:
            x = layers.Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


def _stem(img_input, weights, filters):
    """[0, 255] to ImageNet's normalized inputs (the Normalization's mean and variance come with
    the weights), then the stride-2 convolution."""
    x = layers.Rescaling(1.0 / 255.0)(img_input)
    normalization = layers.Normalization(axis=bn_axis())
    x = normalization(x)
    normalization.finalize_state()  # mean 0 and variance 1 until weights load, as in Keras
    if weights == "imagenet":
        # the original divides by the variance, Normalization by its square root: Keras divides
        # by the square root once more (tensorflow/tensorflow#49930)
        x = layers.Rescaling([1.0 / math.sqrt(stddev) for stddev in IMAGENET_STDDEV_RGB])(x)
    x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3), name="stem_conv_pad")(x)
    x = layers.Conv2D(filters, 3, strides=2, padding="valid", use_bias=False,
                      kernel_initializer=CONV_KERNEL_INITIALIZER, name="stem_conv")(x)
    return layers.BatchNormalization(axis=bn_axis(), name="stem_bn")(x)


def EfficientNet(width_coefficient, depth_coefficient, default_size, dropout_rate=0.2, drop_connect_rate=0.2,
                 depth_divisor=8, activation="swish", blocks_args="default", name="efficientnet", include_top=True,
                 weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
                 classifier_activation="softmax", weights_name=None):
    """An EfficientNet scaled by ``width_coefficient`` (filters) and ``depth_coefficient``
    (repeats of each stage); ``drop_connect_rate`` is the last block's stochastic-depth rate
    (earlier blocks' grow linearly to it). See ``EfficientNetB0`` for the other arguments."""
    if blocks_args == "default":
        blocks_args = DEFAULT_BLOCKS_ARGS
    _builder.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size, min_size=32,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    img_input = _builder.image_input(input_tensor, input_shape)

    def round_filters(filters):
        return int(make_divisible(filters * width_coefficient, depth_divisor))

    def round_repeats(repeats):
        return int(math.ceil(depth_coefficient * repeats))

    x = _stem(img_input, weights, round_filters(32))
    x = layers.Activation(activation, name="stem_activation")(x)
    blocks_args = copy.deepcopy(blocks_args)
    b = 0
    blocks = float(sum(round_repeats(args["repeats"]) for args in blocks_args))
    for i, args in enumerate(blocks_args):
        if args["repeats"] <= 0:
            raise ValueError("The number of repeats in `EfficientNet` must be > 0. "
                             f"Received: repeats={args['repeats']}")
        args["filters_in"] = round_filters(args["filters_in"])
        args["filters_out"] = round_filters(args["filters_out"])
        for j in range(round_repeats(args.pop("repeats"))):
            if j > 0:  # only a stage's first block strides and changes the width
                args["strides"] = 1
                args["filters_in"] = args["filters_out"]
            x = block(x, activation, drop_connect_rate * b / blocks, name=f"block{i + 1}{chr(j + 97)}_", **args)
            b += 1
    x = layers.Conv2D(round_filters(1280), 1, padding="same", use_bias=False,
                      kernel_initializer=CONV_KERNEL_INITIALIZER, name="top_conv")(x)
    x = layers.BatchNormalization(axis=bn_axis(), name="top_bn")(x)
    x = layers.Activation(activation, name="top_activation")(x)
    x = _builder.classifier_or_pooling(x, include_top, pooling, classes, classifier_activation, weights,
                                       dropout_rate=dropout_rate,
                                       dense_kwargs=dict(kernel_initializer=DENSE_KERNEL_INITIALIZER))
    model = Model(_builder.model_inputs(input_tensor, img_input), x, name=name)
    hashes = WEIGHTS_HASHES[weights_name] if weights == "imagenet" else None
    return _builder.load_named_weights(model, weights, include_top, name, hashes, BASE_WEIGHTS_PATH)


def _variant(variant, include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
             name):
    width, depth, size, dropout = VARIANTS[variant]
    return EfficientNet(width, depth, size, dropout, name=name, include_top=include_top, weights=weights,
                        input_tensor=input_tensor, input_shape=input_shape, pooling=pooling, classes=classes,
                        classifier_activation=classifier_activation, weights_name=variant)


def EfficientNetB0(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                   classes=1000, classifier_activation="softmax", name="efficientnetb0"):
    """EfficientNetB0, as ``keras.applications.EfficientNetB0`` (B1..B7 take the same arguments).

    Args:
      include_top: the global pooling, dropout and Dense classifier on top (then the input is
        the variant's default size: 224 for B0, 240, 260, 300, 380, 456, 528, 600 for B1..B7).
      weights: None, 'imagenet' (Keras's weight file, downloaded once) or a weights file's path.
      input_tensor: a KerasTensor to use as the image input.
      input_shape: (height, width, 3) without the top (each side at least 32).
      pooling: without the top, None (the 4-D feature map), 'avg' or 'max'.
      classes, classifier_activation: the classifier's size and activation.
      name: the model's name (it also names the ImageNet weight file, as in Keras).

    Returns:
      A functional Model taking images in [0, 255] (it normalizes them itself).
    """
    return _variant("b0", include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
                    name)


def EfficientNetB1(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                   classes=1000, classifier_activation="softmax", name="efficientnetb1"):
    """EfficientNetB1 (width 1.0, depth 1.1, 240x240); arguments as ``EfficientNetB0``."""
    return _variant("b1", include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
                    name)


def EfficientNetB2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                   classes=1000, classifier_activation="softmax", name="efficientnetb2"):
    """EfficientNetB2 (width 1.1, depth 1.2, 260x260); arguments as ``EfficientNetB0``."""
    return _variant("b2", include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
                    name)


def EfficientNetB3(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                   classes=1000, classifier_activation="softmax", name="efficientnetb3"):
    """EfficientNetB3 (width 1.2, depth 1.4, 300x300); arguments as ``EfficientNetB0``."""
    return _variant("b3", include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
                    name)


def EfficientNetB4(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                   classes=1000, classifier_activation="softmax", name="efficientnetb4"):
    """EfficientNetB4 (width 1.4, depth 1.8, 380x380); arguments as ``EfficientNetB0``."""
    return _variant("b4", include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
                    name)


def EfficientNetB5(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                   classes=1000, classifier_activation="softmax", name="efficientnetb5"):
    """EfficientNetB5 (width 1.6, depth 2.2, 456x456); arguments as ``EfficientNetB0``."""
    return _variant("b5", include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
                    name)


def EfficientNetB6(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                   classes=1000, classifier_activation="softmax", name="efficientnetb6"):
    """EfficientNetB6 (width 1.8, depth 2.6, 528x528); arguments as ``EfficientNetB0``."""
    return _variant("b6", include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
                    name)


def EfficientNetB7(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                   classes=1000, classifier_activation="softmax", name="efficientnetb7"):
    """EfficientNetB7 (width 2.0, depth 3.1, 600x600); arguments as ``EfficientNetB0``."""
    return _variant("b7", include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
                    name)


def preprocess_input(x, data_format=None):
    """Returns ``x`` unchanged: EfficientNet normalizes its input itself. Kept for the API's
    sake, as Keras keeps it."""
    return x


decode_predictions = imagenet_utils.decode_predictions
