"""EfficientNetV2 (Tan and Le, 2021), as ``keras.applications.efficientnet_v2``: B0..B3, S, M and
L, with Keras's stages (fused MBConv blocks first, MBConv with squeeze-and-excite after), layer
names, initializers, weight files and hashes. The model scales its [0, 255] input itself (B0..B3:
to [0, 1], then ImageNet's mean and deviation; S, M, L: to [-1, 1]), so ``preprocess_input``
passes images through.

    model = EfficientNetV2B0(weights="imagenet")             # images in [0, 255]
    base = EfficientNetV2S(include_top=False, pooling="avg")
"""
import copy
import math

from minikeras import initializers, layers
from minikeras.applications import _builder, imagenet_utils
from minikeras.applications._builder import bn_axis
from minikeras.applications.efficientnet import CONV_KERNEL_INITIALIZER, DENSE_KERNEL_INITIALIZER
from minikeras.backend import image_data_format
from minikeras.models import Model

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/efficientnet_v2/"
WEIGHTS_HASHES = {  # weights name: (md5 with top, md5 without)
    "b0": ("21ecbf6da12460d5c40bb2f29ceb2188", "893217f2bb855e2983157299931e43ff"),
    "b1": ("069f0534ff22adf035c89e2d9547a9dc", "0e80663031ca32d657f9caa404b6ec37"),
    "b2": ("424e49f28180edbde1e94797771950a7", "1dfe2e7a5d45b6632553a8961ea609eb"),
    "b3": ("1f1fc43bd98a6e4fd8fdfd551e02c7a0", "f6abf7b5849ac99a89b50dd3fd532856"),
    "-s": ("e1d88a8495beba45748fedd0cecbe016", "af0682fb74e8c54910f2d4393339c070"),
    "-m": ("a3bf6aa3276309f4fc6a34aa114c95cd", "1b8dc055df72dde80d614482840fe342"),
    "-l": ("27e6d408b53c7ebc868fefa357689935", "b0b66b5c863aef5b46e8608fe1711615"),
}
_B_STAGES = ((3, 1, 32, 16, 1, 0, 1, 1), (3, 2, 16, 32, 4, 0, 2, 1), (3, 2, 32, 48, 4, 0, 2, 1),
             (3, 3, 48, 96, 4, 0.25, 2, 0), (3, 5, 96, 112, 6, 0.25, 1, 0), (3, 8, 112, 192, 6, 0.25, 2, 0))
_STAGES = {  # variant: its stages, each (kernel, repeats, filters in, filters out, expand ratio, se ratio, strides,
    # conv type: 1 fused MBConv, 0 MBConv)
    "efficientnetv2-s": ((3, 2, 24, 24, 1, 0.0, 1, 1), (3, 4, 24, 48, 4, 0.0, 2, 1), (3, 4, 48, 64, 4, 0, 2, 1),
                         (3, 6, 64, 128, 4, 0.25, 2, 0), (3, 9, 128, 160, 6, 0.25, 1, 0),
                         (3, 15, 160, 256, 6, 0.25, 2, 0)),
    "efficientnetv2-m": ((3, 3, 24, 24, 1, 0, 1, 1), (3, 5, 24, 48, 4, 0, 2, 1), (3, 5, 48, 80, 4, 0, 2, 1),
                         (3, 7, 80, 160, 4, 0.25, 2, 0), (3, 14, 160, 176, 6, 0.25, 1, 0),
                         (3, 18, 176, 304, 6, 0.25, 2, 0), (3, 5, 304, 512, 6, 0.25, 1, 0)),
    "efficientnetv2-l": ((3, 4, 32, 32, 1, 0, 1, 1), (3, 7, 32, 64, 4, 0, 2, 1), (3, 7, 64, 96, 4, 0, 2, 1),
                         (3, 10, 96, 192, 4, 0.25, 2, 0), (3, 19, 192, 224, 6, 0.25, 1, 0),
                         (3, 25, 224, 384, 6, 0.25, 2, 0), (3, 7, 384, 640, 6, 0.25, 1, 0)),
    "efficientnetv2-b0": _B_STAGES, "efficientnetv2-b1": _B_STAGES, "efficientnetv2-b2": _B_STAGES,
    "efficientnetv2-b3": _B_STAGES,
}
DEFAULT_BLOCKS_ARGS = {
    variant: [dict(zip(("kernel_size", "num_repeat", "input_filters", "output_filters", "expand_ratio", "se_ratio",
                        "strides", "conv_type"), stage)) for stage in stages]
    for variant, stages in _STAGES.items()}
VARIANTS = {  # weights name: (blocks, width coefficient, depth coefficient, default size)
    "b0": ("efficientnetv2-b0", 1.0, 1.0, 224), "b1": ("efficientnetv2-b1", 1.0, 1.1, 240),
    "b2": ("efficientnetv2-b2", 1.1, 1.2, 260), "b3": ("efficientnetv2-b3", 1.2, 1.4, 300),
    "-s": ("efficientnetv2-s", 1.0, 1.0, 384), "-m": ("efficientnetv2-m", 1.0, 1.0, 480),
    "-l": ("efficientnetv2-l", 1.0, 1.0, 480),
}
IMAGENET_MEAN_RGB = [0.485, 0.456, 0.406]
IMAGENET_STDDEV_RGB = [0.229, 0.224, 0.225]


def round_filters(filters, width_coefficient, min_depth, depth_divisor):
    """``filters`` scaled by the width coefficient, rounded to the nearest multiple of
    ``depth_divisor``, at least ``min_depth``."""
    filters *= width_coefficient
    minimum_depth = min_depth or depth_divisor
    return int(max(minimum_depth, int(filters + depth_divisor / 2) // depth_divisor * depth_divisor))


def round_repeats(repeats, depth_coefficient):
    return int(math.ceil(depth_coefficient * repeats))


def _conv(filters, kernel_size, name, strides=1, **kwargs):
    return layers.Conv2D(filters, kernel_size, strides=strides, kernel_initializer=CONV_KERNEL_INITIALIZER,
                         padding="same", use_bias=False, name=name, **kwargs)


def _squeeze_excite(x, input_filters, filters, se_ratio, activation, name):
    filters_se = max(1, int(input_filters * se_ratio))
    se = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
    se = layers.Reshape((filters, 1, 1) if bn_axis() == 1 else (1, 1, filters), name=f"{name}se_reshape")(se)
    se = layers.Conv2D(filters_se, 1, padding="same", activation=activation, kernel_initializer=CONV_KERNEL_INITIALIZER,
                       name=f"{name}se_reduce")(se)
    se = layers.Conv2D(filters, 1, padding="same", activation="sigmoid", kernel_initializer=CONV_KERNEL_INITIALIZER,
                       name=f"{name}se_expand")(se)
    return layers.multiply([x, se], name=f"{name}se_excite")


def _residual(x, inputs, strides, input_filters, output_filters, survival_probability, name):
    """The input added back when the shapes allow, after a per-example Dropout (Keras passes
    the block's ``survival_probability`` as the drop rate; the first block has none)."""
    if strides == 1 and input_filters == output_filters:
        if survival_probability:
            x = layers.Dropout(survival_probability, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


def MBConvBlock(input_filters, output_filters, expand_ratio=1, kernel_size=3, strides=1, se_ratio=0.0,
                bn_momentum=0.9, activation="swish", survival_probability=0.8, name="block0"):
    """A function applying one MBConv block: 1x1 expansion, depthwise convolution,
    squeeze-and-excite, 1x1 projection, the residual."""

    def apply(inputs):
        filters = input_filters * expand_ratio
        x = inputs
        if expand_ratio != 1:
            x = _conv(filters, 1, f"{name}expand_conv")(inputs)
            x = layers.BatchNormalization(axis=bn_axis(), momentum=bn_momentum, name=f"{name}expand_bn")(x)
            x = layers.Activation(activation, name=f"{name}expand_activation")(x)
        x = layers.DepthwiseConv2D(kernel_size=kernel_size, strides=strides, padding="same", use_bias=False,
                                   depthwise_initializer=CONV_KERNEL_INITIALIZER, name=f"{name}dwconv2")(x)
        x = layers.BatchNormalization(axis=bn_axis(), momentum=bn_momentum, name=f"{name}bn")(x)
        x = layers.Activation(activation, name=f"{name}activation")(x)
        if 0 < se_ratio <= 1:
            x = _squeeze_excite(x, input_filters, filters, se_ratio, activation, name)
        x = _conv(output_filters, 1, f"{name}project_conv")(x)
        x = layers.BatchNormalization(axis=bn_axis(), momentum=bn_momentum, name=f"{name}project_bn")(x)
        return _residual(x, inputs, strides, input_filters, output_filters, survival_probability, name)

    return apply


def FusedMBConvBlock(input_filters, output_filters, expand_ratio=1, kernel_size=3, strides=1, se_ratio=0.0,
                     bn_momentum=0.9, activation="swish", survival_probability=0.8, name="block0"):
    """A function applying one fused MBConv block: the expansion and the depthwise convolution
    fused into one ``kernel_size`` convolution (with ``strides``), optional squeeze-and-excite,
    a 1x1 projection (or, with no expansion, the one convolution and an activation), the
    residual."""

    def apply(inputs):
        filters = input_filters * expand_ratio
        x = inputs
        if expand_ratio != 1:
            x = _conv(filters, kernel_size, f"{name}expand_conv", strides=strides)(inputs)
            x = layers.BatchNormalization(axis=bn_axis(), momentum=bn_momentum, name=f"{name}expand_bn")(x)
            x = layers.Activation(activation=activation, name=f"{name}expand_activation")(x)
        if 0 < se_ratio <= 1:
            x = _squeeze_excite(x, input_filters, filters, se_ratio, activation, name)
        x = _conv(output_filters, 1 if expand_ratio != 1 else kernel_size, f"{name}project_conv",
                  strides=1 if expand_ratio != 1 else strides)(x)
        x = layers.BatchNormalization(axis=bn_axis(), momentum=bn_momentum, name=f"{name}project_bn")(x)
        if expand_ratio == 1:
            x = layers.Activation(activation=activation, name=f"{name}project_activation")(x)
        return _residual(x, inputs, strides, input_filters, output_filters, survival_probability, name)

    return apply


def input_scaling(x, rescale_to_unit, channels):
    """B0..B3 (with 3 channels): to [0, 1], then ImageNet's mean and variance (a Normalization
    without weights); the others: to [-1, 1]."""
    if rescale_to_unit and channels == 3:
        x = layers.Rescaling(scale=1.0 / 255)(x)
        return layers.Normalization(mean=IMAGENET_MEAN_RGB, variance=[s ** 2 for s in IMAGENET_STDDEV_RGB],
                                    axis=bn_axis())(x)
    return layers.Rescaling(scale=1.0 / 128.0, offset=-1)(x)


def EfficientNetV2(width_coefficient, depth_coefficient, default_size, dropout_rate=0.2, drop_connect_rate=0.2,
                   depth_divisor=8, min_depth=8, bn_momentum=0.9, activation="swish", blocks_args="default",
                   name="efficientnetv2", include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                   pooling=None, classes=1000, classifier_activation="softmax", include_preprocessing=True,
                   weights_name=None):
    """An EfficientNetV2 of ``blocks_args``' stages ('default': the stages Keras keeps under the
    model's ``name``, or under the ``weights_name`` variant's), scaled by ``width_coefficient``
    and ``depth_coefficient``; ``drop_connect_rate`` the stochastic-depth rate the blocks' grow
    to. See ``EfficientNetV2B0`` for the other arguments."""
    variant_blocks = VARIANTS[weights_name][0] if weights_name in VARIANTS else name
    if blocks_args == "default":
        if variant_blocks not in DEFAULT_BLOCKS_ARGS:
            raise ValueError(f"EfficientNetV2 has default blocks for the names {sorted(DEFAULT_BLOCKS_ARGS)}; pass "
                             f"`blocks_args` for another. Received: name={name!r}")
        blocks_args = DEFAULT_BLOCKS_ARGS[variant_blocks]
    _builder.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size, min_size=32,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    img_input = _builder.image_input(input_tensor, input_shape)
    x = img_input
    if include_preprocessing:
        x = input_scaling(x, variant_blocks.split("-")[-1].startswith("b"), input_shape[bn_axis() - 1])

    def scaled(filters):
        return round_filters(filters, width_coefficient, min_depth, depth_divisor)

    x = _conv(scaled(blocks_args[0]["input_filters"]), 3, "stem_conv", strides=2)(x)
    x = layers.BatchNormalization(axis=bn_axis(), momentum=bn_momentum, name="stem_bn")(x)
    x = layers.Activation(activation, name="stem_activation")(x)
    blocks_args = copy.deepcopy(blocks_args)
    b = 0
    blocks = float(sum(args["num_repeat"] for args in blocks_args))
    for i, args in enumerate(blocks_args):
        if args["num_repeat"] <= 0:
            raise ValueError(f"The number of repeats in `EfficientNetV2` must be > 0. "
                             f"Received: num_repeat={args['num_repeat']}")
        args["input_filters"] = scaled(args["input_filters"])
        args["output_filters"] = scaled(args["output_filters"])
        block = {0: MBConvBlock, 1: FusedMBConvBlock}[args.pop("conv_type")]
        for j in range(round_repeats(args.pop("num_repeat"), depth_coefficient)):
            if j > 0:  # only a stage's first block strides and changes the width
                args["strides"] = 1
                args["input_filters"] = args["output_filters"]
            x = block(activation=activation, bn_momentum=bn_momentum,
                      survival_probability=drop_connect_rate * b / blocks, name=f"block{i + 1}{chr(j + 97)}_",
                      **args)(x)
            b += 1
    x = _conv(scaled(1280), 1, "top_conv")(x)
    x = layers.BatchNormalization(axis=bn_axis(), momentum=bn_momentum, name="top_bn")(x)
    x = layers.Activation(activation=activation, name="top_activation")(x)
    x = _builder.classifier_or_pooling(x, include_top, pooling, classes, classifier_activation, weights,
                                       dropout_rate=dropout_rate,
                                       dense_kwargs=dict(kernel_initializer=DENSE_KERNEL_INITIALIZER,
                                                         bias_initializer=initializers.Constant(0.0)))
    model = Model(_builder.model_inputs(input_tensor, img_input), x, name=name)
    hashes = WEIGHTS_HASHES[weights_name] if weights == "imagenet" else None
    return _builder.load_named_weights(model, weights, include_top, name, hashes, BASE_WEIGHTS_PATH)


def _variant(weights_name, include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
             include_preprocessing, name):
    _, width, depth, size = VARIANTS[weights_name]
    return EfficientNetV2(width, depth, size, name=name, include_top=include_top, weights=weights,
                          input_tensor=input_tensor, input_shape=input_shape, pooling=pooling, classes=classes,
                          classifier_activation=classifier_activation, include_preprocessing=include_preprocessing,
                          weights_name=weights_name)


def EfficientNetV2B0(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                     classes=1000, classifier_activation="softmax", include_preprocessing=True,
                     name="efficientnetv2-b0"):
    """EfficientNetV2B0, as ``keras.applications.EfficientNetV2B0`` (B1..B3, S, M, L take the
    same arguments).

    Args:
      include_top: the global pooling, dropout and Dense classifier on top (then the input is
        the variant's default size: 224 for B0; 240, 260, 300 for B1..B3; 384 for S; 480 for M
        and L).
      weights: None, 'imagenet' (Keras's weight file, downloaded once) or a weights file's path.
      input_tensor: a KerasTensor to use as the image input.
      input_shape: (height, width, channels) without the top (each side at least 32).
      pooling: without the top, None (the 4-D feature map), 'avg' or 'max'.
      classes, classifier_activation: the classifier's size and activation.
      include_preprocessing: the Rescaling (and for B0..B3 the Normalization) of [0, 255] images
        first; without it the model takes images in [-1, 1].
      name: the model's name (it also names the ImageNet weight file, as in Keras).

    Returns:
      A functional Model taking images in [0, 255].
    """
    return _variant("b0", include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
                    include_preprocessing, name)


def EfficientNetV2B1(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                     classes=1000, classifier_activation="softmax", include_preprocessing=True,
                     name="efficientnetv2-b1"):
    """EfficientNetV2B1 (width 1.0, depth 1.1, 240x240); arguments as ``EfficientNetV2B0``."""
    return _variant("b1", include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
                    include_preprocessing, name)


def EfficientNetV2B2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                     classes=1000, classifier_activation="softmax", include_preprocessing=True,
                     name="efficientnetv2-b2"):
    """EfficientNetV2B2 (width 1.1, depth 1.2, 260x260); arguments as ``EfficientNetV2B0``."""
    return _variant("b2", include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
                    include_preprocessing, name)


def EfficientNetV2B3(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                     classes=1000, classifier_activation="softmax", include_preprocessing=True,
                     name="efficientnetv2-b3"):
    """EfficientNetV2B3 (width 1.2, depth 1.4, 300x300); arguments as ``EfficientNetV2B0``."""
    return _variant("b3", include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
                    include_preprocessing, name)


def EfficientNetV2S(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                    classes=1000, classifier_activation="softmax", include_preprocessing=True,
                    name="efficientnetv2-s"):
    """EfficientNetV2S (six stages, 384x384, inputs rescaled to [-1, 1]); arguments as
    ``EfficientNetV2B0``."""
    return _variant("-s", include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
                    include_preprocessing, name)


def EfficientNetV2M(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                    classes=1000, classifier_activation="softmax", include_preprocessing=True,
                    name="efficientnetv2-m"):
    """EfficientNetV2M (seven stages, 480x480, inputs rescaled to [-1, 1]); arguments as
    ``EfficientNetV2B0``."""
    return _variant("-m", include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
                    include_preprocessing, name)


def EfficientNetV2L(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                    classes=1000, classifier_activation="softmax", include_preprocessing=True,
                    name="efficientnetv2-l"):
    """EfficientNetV2L (seven stages, 480x480, inputs rescaled to [-1, 1]); arguments as
    ``EfficientNetV2B0``."""
    return _variant("-l", include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
                    include_preprocessing, name)


def preprocess_input(x, data_format=None):
    """Returns ``x`` unchanged: EfficientNetV2 scales its input itself. Kept for the API's sake,
    as Keras keeps it."""
    return x


decode_predictions = imagenet_utils.decode_predictions
