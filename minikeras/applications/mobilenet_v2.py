"""MobileNetV2 (Sandler et al., 2018), as ``keras.applications.mobilenet_v2``: the width
multiplier ``alpha``, Keras's input-size rules and warnings, the same layer names and weight
files (one per alpha and resolution; Keras publishes no hashes for them).

    base = MobileNetV2(input_shape=(160, 160, 3), include_top=False, weights="imagenet")
    features = base(mobilenet_v2.preprocess_input(images))    # 'tf': [0, 255] -> [-1, 1]
"""
from minikeras import layers
from minikeras.applications import _builder, imagenet_utils
from minikeras.applications.mobilenet_sizes import default_size, imagenet_rows, make_divisible
from minikeras.backend import image_data_format
from minikeras.models import Model
from minikeras.symbolic import is_symbolic

BASE_WEIGHT_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet_v2/"
IMAGENET_ALPHAS = (0.35, 0.50, 0.75, 1.0, 1.3, 1.4)
IMAGENET_SIZES = (96, 128, 160, 192, 224)
BLOCKS = (  # (filters, stride, expansion) of the inverted residual blocks 0..16
    (16, 1, 1), (24, 2, 6), (24, 1, 6), (32, 2, 6), (32, 1, 6), (32, 1, 6), (64, 2, 6), (64, 1, 6), (64, 1, 6),
    (64, 1, 6), (96, 1, 6), (96, 1, 6), (96, 1, 6), (160, 2, 6), (160, 1, 6), (160, 1, 6), (320, 1, 6))


def _channel_axis():
    return 1 if image_data_format() == "channels_first" else -1


def _batch_norm(x, name):
    return layers.BatchNormalization(axis=_channel_axis(), epsilon=1e-3, momentum=0.999, name=name)(x)


def inverted_res_block(inputs, expansion, stride, alpha, filters, block_id):
    """Expand with a 1x1 convolution (not in block 0), a 3x3 depthwise convolution, project with
    a linear 1x1 convolution; the input is added back when the shapes allow."""
    in_channels = inputs.shape[_channel_axis()]
    pointwise_filters = make_divisible(int(filters * alpha), 8)
    x = inputs
    prefix = f"block_{block_id}_"
    if block_id:
        x = layers.Conv2D(expansion * in_channels, kernel_size=1, padding="same", use_bias=False, activation=None,
                          name=f"{prefix}expand")(x)
        x = _batch_norm(x, f"{prefix}expand_BN")
        x = layers.ReLU(6.0, name=f"{prefix}expand_relu")(x)
    else:
        prefix = "expanded_conv_"
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3), name=f"{prefix}pad")(x)
    x = layers.DepthwiseConv2D(kernel_size=3, strides=stride, activation=None, use_bias=False,
                               padding="same" if stride == 1 else "valid", name=f"{prefix}depthwise")(x)
    x = _batch_norm(x, f"{prefix}depthwise_BN")
    x = layers.ReLU(6.0, name=f"{prefix}depthwise_relu")(x)
    x = layers.Conv2D(pointwise_filters, kernel_size=1, padding="same", use_bias=False, activation=None,
                      name=f"{prefix}project")(x)
    x = _batch_norm(x, f"{prefix}project_BN")
    if in_channels == pointwise_filters and stride == 1:
        return layers.Add(name=f"{prefix}add")([inputs, x])
    return x


def _check_input_tensor_against_shape(input_tensor, input_shape):
    """Keras's check when both are given: a KerasTensor whose width equals ``input_shape``'s."""
    if not is_symbolic(input_tensor):
        raise ValueError(f"input_tensor is not a Keras tensor; Received `input_tensor={input_tensor}`")
    if image_data_format() == "channels_first":
        if input_tensor.shape[1] != input_shape[1]:
            raise ValueError("input_shape[1] must equal shape(input_tensor)[1] when `image_data_format` is "
                             f"`channels_first`; Received `input_tensor.shape={input_tensor.shape}`, "
                             f"`input_shape={input_shape}`")
    elif input_tensor.shape[2] != input_shape[1]:
        raise ValueError("input_tensor.shape[2] must equal input_shape[1]; Received "
                         f"`input_tensor.shape={input_tensor.shape}`, `input_shape={input_shape}`")


def _default_size(input_shape, input_tensor):
    if input_shape is not None and input_tensor is not None:
        _check_input_tensor_against_shape(input_tensor, input_shape)
    if input_shape is None and input_tensor is not None and is_symbolic(input_tensor):
        return default_size(tuple(input_tensor.shape)[1:], IMAGENET_SIZES)
    return default_size(input_shape, IMAGENET_SIZES)


def MobileNetV2(input_shape=None, alpha=1.0, include_top=True, weights="imagenet", input_tensor=None,
                pooling=None, classes=1000, classifier_activation="softmax", name=None):
    """MobileNetV2, as ``keras.applications.MobileNetV2``.

    Args:
      input_shape: (height, width, 3), each side at least 32; with ``include_top`` and ImageNet
        weights it must be (224, 224, 3). A square side of 96, 128, 160, 192 or 224 picks the
        ImageNet weights of that resolution; other shapes load the 224 ones, with a warning.
      alpha: the width multiplier (0.35, 0.5, 0.75, 1.0, 1.3 or 1.4 with ImageNet weights).
      include_top: the global pooling and Dense classifier on top.
      weights: None, 'imagenet' (Keras's weight file, downloaded once) or a weights file's path.
      input_tensor: a KerasTensor to use as the image input.
      pooling: without the top, None (the 4-D feature map), 'avg' or 'max'.
      classes, classifier_activation: the classifier's size and activation.
      name: the model's name; None is Keras's ``mobilenetv2_{alpha:.2f}_{rows}``.

    Returns:
      A functional Model; inputs go through ``mobilenet_v2.preprocess_input`` ('tf').
    """
    _builder.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=_default_size(input_shape, input_tensor),
                                                    min_size=32, data_format=image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    rows = input_shape[1] if image_data_format() == "channels_first" else input_shape[0]
    if weights == "imagenet":
        if alpha not in IMAGENET_ALPHAS:
            raise ValueError("If imagenet weights are being loaded, alpha must be one of `0.35`, `0.50`, `0.75`, "
                             f"`1.0`, `1.3` or `1.4` only; Received `alpha={alpha}`")
        rows = imagenet_rows(input_shape, IMAGENET_SIZES)
    img_input = _builder.image_input(input_tensor, input_shape)
    x = layers.Conv2D(make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2), padding="same", use_bias=False,
                      name="Conv1")(img_input)
    x = _batch_norm(x, "bn_Conv1")
    x = layers.ReLU(6.0, name="Conv1_relu")(x)
    for block_id, (filters, stride, expansion) in enumerate(BLOCKS):
        x = inverted_res_block(x, filters=filters, alpha=alpha, stride=stride, expansion=expansion, block_id=block_id)
    # the last convolution widens with alpha > 1 only, as the paper says
    last_block_filters = make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = layers.Conv2D(last_block_filters, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = _batch_norm(x, "Conv_1_bn")
    x = layers.ReLU(6.0, name="out_relu")(x)
    x = _builder.classifier_or_pooling(x, include_top, pooling, classes, classifier_activation, weights,
                                       pool_name=None, max_pool_name=None, head_pool_name=None)
    model = Model(_builder.model_inputs(input_tensor, img_input), x, name=name or f"mobilenetv2_{alpha:0.2f}_{rows}")
    suffix = "" if include_top else "_no_top"
    file_name = f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_{float(alpha)}_{rows}{suffix}.h5"
    return _builder.load_weights(model, weights, file_name, BASE_WEIGHT_PATH + file_name)


def preprocess_input(x, data_format=None):
    """'tf' preprocessing: [0, 255] to [-1, 1] (see ``imagenet_utils.preprocess_input``)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
