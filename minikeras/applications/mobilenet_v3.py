"""MobileNetV3Small and MobileNetV3Large (Howard et al., 2019), as
``keras.applications.mobilenet_v3``: ``alpha``, ``minimalistic`` (3x3 kernels, relu, no
squeeze-and-excite), ``dropout_rate``, and ``include_preprocessing``: the model rescales [0, 255]
to [-1, 1] itself (a Rescaling layer first), so ``preprocess_input`` passes images through.

    model = MobileNetV3Small(weights="imagenet")   # takes images in [0, 255]
    top5 = decode_predictions(model.predict(images))
"""
import warnings

from minikeras import layers
from minikeras.applications import _builder, imagenet_utils
from minikeras.applications.mobilenet_sizes import make_divisible
from minikeras.backend import image_data_format
from minikeras.models import Model
from minikeras.symbolic import is_symbolic

BASE_WEIGHT_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet_v3/"
WEIGHTS_HASHES = {  # model: (md5 with top, md5 without)
    "large_224_0.75_float": ("765b44a33ad4005b3ac83185abf1d0eb", "40af19a13ebea4e2ee0c676887f69a2e"),
    "large_224_1.0_float": ("59e551e166be033d707958cf9e29a6a7", "07fb09a5933dd0c8eaafa16978110389"),
    "large_minimalistic_224_1.0_float": ("675e7b876c45c57e9e63e6d90a36599c", "ec5221f64a2f6d1ef965a614bdae7973"),
    "small_224_0.75_float": ("cb65d4e5be93758266aa0a7f2c6708b7", "ebdb5cc8e0b497cd13a7c275d475c819"),
    "small_224_1.0_float": ("8768d4c2e7dee89b9d02b2d03d65d862", "d3e8ec802a04aa4fc771ee12a9a9b836"),
    "small_minimalistic_224_1.0_float": ("99cd97fb2fcdad2bf028eb838de69e37", "cde8136e733e811080d9fcd8a252f7e4"),
}
# (expansion, filters, kernel, stride, squeeze-and-excite, activation) of each inverted residual
# block; kernel "k", "se" and "act" mean the model's own (5, 0.25, hard_swish; minimalistic: 3,
# none, relu), the others are fixed
SMALL_BLOCKS = (
    (1, 16, 3, 2, "se", "relu"), (72.0 / 16, 24, 3, 2, None, "relu"), (88.0 / 24, 24, 3, 1, None, "relu"),
    (4, 40, "k", 2, "se", "act"), (6, 40, "k", 1, "se", "act"), (6, 40, "k", 1, "se", "act"),
    (3, 48, "k", 1, "se", "act"), (3, 48, "k", 1, "se", "act"), (6, 96, "k", 2, "se", "act"),
    (6, 96, "k", 1, "se", "act"), (6, 96, "k", 1, "se", "act"))
LARGE_BLOCKS = (
    (1, 16, 3, 1, None, "relu"), (4, 24, 3, 2, None, "relu"), (3, 24, 3, 1, None, "relu"),
    (3, 40, "k", 2, "se", "relu"), (3, 40, "k", 1, "se", "relu"), (3, 40, "k", 1, "se", "relu"),
    (6, 80, 3, 2, None, "act"), (2.5, 80, 3, 1, None, "act"), (2.3, 80, 3, 1, None, "act"),
    (2.3, 80, 3, 1, None, "act"), (6, 112, 3, 1, "se", "act"), (6, 112, 3, 1, "se", "act"),
    (6, 160, "k", 2, "se", "act"), (6, 160, "k", 1, "se", "act"), (6, 160, "k", 1, "se", "act"))


def _channel_axis():
    return 1 if image_data_format() == "channels_first" else -1


def _batch_norm(x, name):
    return layers.BatchNormalization(axis=_channel_axis(), epsilon=1e-3, momentum=0.999, name=name)(x)


def relu(x):
    return layers.ReLU()(x)


def hard_sigmoid(x):
    """relu6(x + 3) / 6, written as Keras writes it (two ops around a ReLU layer)."""
    return layers.ReLU(6.0)(x + 3.0) * (1.0 / 6.0)


def hard_swish(x):
    return layers.Activation("hard_swish")(x)


def _se_block(inputs, filters, se_ratio, prefix):
    """Squeeze and excite: the channels scaled by a gate computed from their global average."""
    x = layers.GlobalAveragePooling2D(keepdims=True, name=f"{prefix}squeeze_excite_avg_pool")(inputs)
    x = layers.Conv2D(make_divisible(filters * se_ratio, 8), kernel_size=1, padding="same",
                      name=f"{prefix}squeeze_excite_conv")(x)
    x = layers.ReLU(name=f"{prefix}squeeze_excite_relu")(x)
    x = layers.Conv2D(filters, kernel_size=1, padding="same", name=f"{prefix}squeeze_excite_conv_1")(x)
    x = hard_sigmoid(x)
    return layers.Multiply(name=f"{prefix}squeeze_excite_mul")([inputs, x])


def inverted_res_block(x, expansion, filters, kernel_size, stride, se_ratio, activation, block_id):
    """Expand (not in block 0), depthwise convolution, optional squeeze-and-excite, linear
    projection; the input added back when stride and channels allow."""
    shortcut = x
    prefix = "expanded_conv_"
    infilters = x.shape[_channel_axis()]
    if block_id:
        prefix = f"expanded_conv_{block_id}_"
        x = layers.Conv2D(make_divisible(infilters * expansion, 8), kernel_size=1, padding="same", use_bias=False,
                          name=f"{prefix}expand")(x)
        x = _batch_norm(x, f"{prefix}expand_bn")
        x = activation(x)
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size), name=f"{prefix}depthwise_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=stride, padding="same" if stride == 1 else "valid",
                               use_bias=False, name=f"{prefix}depthwise")(x)
    x = _batch_norm(x, f"{prefix}depthwise_bn")
    x = activation(x)
    if se_ratio:
        x = _se_block(x, make_divisible(infilters * expansion, 8), se_ratio, prefix)
    x = layers.Conv2D(filters, kernel_size=1, padding="same", use_bias=False, name=f"{prefix}project")(x)
    x = _batch_norm(x, f"{prefix}project_bn")
    if stride == 1 and infilters == filters:
        x = layers.Add(name=f"{prefix}add")([shortcut, x])
    return x


def _stack(blocks, x, alpha, kernel, activation, se_ratio):
    for block_id, (expansion, filters, block_kernel, stride, se, act) in enumerate(blocks):
        x = inverted_res_block(x, expansion, make_divisible(filters * alpha, 8),
                               kernel if block_kernel == "k" else block_kernel, stride,
                               se_ratio if se == "se" else None, activation if act == "act" else relu, block_id)
    return x


def _input_shape(input_shape, input_tensor):
    """Keras's shape rules for MobileNetV3 (it does not call ``obtain_input_shape``): checked
    against a given ``input_tensor``, else read from it, else any size with 3 channels."""
    channels_first = image_data_format() == "channels_first"
    if input_shape is not None and input_tensor is not None:
        if not is_symbolic(input_tensor):
            raise ValueError(f"input_tensor specified: {input_tensor} is not a keras tensor")
        if channels_first and input_tensor.shape[1] != input_shape[1]:
            raise ValueError("When backend.image_data_format()=channels_first, input_shape[1] must equal "
                             f"input_tensor.shape[1].  Received input_shape={input_shape}, "
                             f"input_tensor.shape={input_tensor.shape}")
        if not channels_first and input_tensor.shape[2] != input_shape[1]:
            raise ValueError(f"input_shape[1] must equal input_tensor.shape[2].  Received input_shape={input_shape}, "
                             f"input_tensor.shape={input_tensor.shape}")
    if input_shape is None and input_tensor is not None and is_symbolic(input_tensor):
        # Keras's order: (3, cols, rows) or (cols, rows, 3)
        if channels_first:
            input_shape = (3, input_tensor.shape[3], input_tensor.shape[2])
        else:
            input_shape = (input_tensor.shape[2], input_tensor.shape[1], 3)
    if input_shape is None and input_tensor is None:
        input_shape = (3, None, None) if channels_first else (None, None, 3)
    return input_shape


def MobileNetV3(blocks, last_point_ch, input_shape=None, alpha=1.0, model_type="large", minimalistic=False,
                include_top=True, weights="imagenet", input_tensor=None, classes=1000, pooling=None,
                dropout_rate=0.2, classifier_activation="softmax", include_preprocessing=True, name=None):
    """A MobileNetV3 of the inverted residual ``blocks`` (``SMALL_BLOCKS`` or ``LARGE_BLOCKS``);
    see ``MobileNetV3Small`` for the arguments."""
    _builder.check_weights_argument(weights, include_top, classes)
    input_shape = _input_shape(input_shape, input_tensor)
    rows, cols = (input_shape[1], input_shape[2]) if image_data_format() == "channels_first" \
        else (input_shape[0], input_shape[1])
    if rows and cols and (rows < 32 or cols < 32):
        raise ValueError(f"Input size must be at least 32x32; Received `input_shape={input_shape}`")
    if weights == "imagenet":
        if (not minimalistic and alpha not in (0.75, 1.0)) or (minimalistic and alpha != 1.0):
            raise ValueError("If imagenet weights are being loaded, alpha can be one of `0.75`, `1.0` for non "
                             f"minimalistic or `1.0` for minimalistic only. Received: alpha={alpha}, "
                             f"minimalistic={minimalistic}")
        if rows != cols or rows != 224:
            warnings.warn("`input_shape` is undefined or non-square, or `rows` is not 224. Weights for input shape "
                          "(224, 224) will be loaded as the default.", stacklevel=3)
    img_input = _builder.image_input(input_tensor, input_shape)
    kernel, activation, se_ratio = (3, relu, None) if minimalistic else (5, hard_swish, 0.25)
    x = img_input
    if include_preprocessing:
        x = layers.Rescaling(scale=1.0 / 127.5, offset=-1.0)(x)
    x = layers.Conv2D(16, kernel_size=3, strides=(2, 2), padding="same", use_bias=False, name="conv")(x)
    x = _batch_norm(x, "conv_bn")
    x = activation(x)
    x = _stack(blocks, x, alpha, kernel, activation, se_ratio)
    last_conv_ch = make_divisible(x.shape[_channel_axis()] * 6, 8)
    if alpha > 1.0:  # a width multiplier above 1 widens the last layer too
        last_point_ch = make_divisible(last_point_ch * alpha, 8)
    x = layers.Conv2D(last_conv_ch, kernel_size=1, padding="same", use_bias=False, name="conv_1")(x)
    x = _batch_norm(x, "conv_1_bn")
    x = activation(x)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Conv2D(last_point_ch, kernel_size=1, padding="same", use_bias=True, name="conv_2")(x)
        x = activation(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate)(x)
        x = layers.Conv2D(classes, kernel_size=1, padding="same", name="logits")(x)
        x = layers.Flatten()(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Activation(activation=classifier_activation, name="predictions")(x)
    elif pooling == "avg":
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
    elif pooling == "max":
        x = layers.GlobalMaxPooling2D(name="max_pool")(x)
    model = Model(_builder.model_inputs(input_tensor, img_input), x, name=name)
    model_name = f"{model_type}{'_minimalistic' if minimalistic else ''}_224_{alpha}_float"
    file_name, file_hash = None, None
    if weights == "imagenet":
        top_hash, notop_hash = WEIGHTS_HASHES[model_name]
        file_name, file_hash = (f"weights_mobilenet_v3_{model_name}.h5", top_hash) if include_top \
            else (f"weights_mobilenet_v3_{model_name}_no_top_v2.h5", notop_hash)
    return _builder.load_weights(model, weights, file_name, BASE_WEIGHT_PATH + (file_name or ""), file_hash)


def MobileNetV3Small(input_shape=None, alpha=1.0, minimalistic=False, include_top=True, weights="imagenet",
                     input_tensor=None, classes=1000, pooling=None, dropout_rate=0.2, classifier_activation="softmax",
                     include_preprocessing=True, name="MobileNetV3Small"):
    """MobileNetV3Small, as ``keras.applications.MobileNetV3Small``.

    Args:
      input_shape: (height, width, 3), each side at least 32 (any size, also with the top: the
        classifier follows a global pooling). ImageNet weights are for 224x224 (a warning
        otherwise).
      alpha: the width multiplier (0.75 or 1.0 with ImageNet weights; 1.0 if minimalistic).
      minimalistic: 3x3 kernels, relu instead of hard_swish, no squeeze-and-excite.
      include_top: the pooling, 1x1 convolutions and classifier on top.
      weights: None, 'imagenet' (Keras's weight file, downloaded once) or a weights file's path.
      input_tensor: a KerasTensor to use as the image input.
      classes: the classifier's size (1000 with ImageNet weights).
      pooling: without the top, None (the 4-D feature map), 'avg' or 'max'.
      dropout_rate: the dropout before the classifier (0 for none).
      classifier_activation: the top layer's activation (None or 'softmax' with pretrained weights).
      include_preprocessing: a Rescaling layer first, so the model takes pixels in [0, 255].
      name: the model's name.

    Returns:
      A functional Model.
    """
    return MobileNetV3(SMALL_BLOCKS, 1024, input_shape, alpha, "small", minimalistic, include_top, weights,
                       input_tensor, classes, pooling, dropout_rate, classifier_activation, include_preprocessing,
                       name=name)


def MobileNetV3Large(input_shape=None, alpha=1.0, minimalistic=False, include_top=True, weights="imagenet",
                     input_tensor=None, classes=1000, pooling=None, dropout_rate=0.2, classifier_activation="softmax",
                     include_preprocessing=True, name="MobileNetV3Large"):
    """MobileNetV3Large, as ``keras.applications.MobileNetV3Large``; arguments as
    ``MobileNetV3Small``."""
    return MobileNetV3(LARGE_BLOCKS, 1280, input_shape, alpha, "large", minimalistic, include_top, weights,
                       input_tensor, classes, pooling, dropout_rate, classifier_activation, include_preprocessing,
                       name=name)


def preprocess_input(x, data_format=None):
    """Returns ``x`` unchanged: MobileNetV3 rescales its input itself (``include_preprocessing``).
    Kept for the API's sake, as Keras keeps it."""
    return x


decode_predictions = imagenet_utils.decode_predictions
