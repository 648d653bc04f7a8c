"""MobileNet (Howard et al., 2017), as ``keras.applications.mobilenet``: depthwise separable
convolutions, the width multiplier ``alpha`` and ``depth_multiplier``, Keras's input-size rules,
layer names and weight files (one per alpha and resolution; Keras publishes no hashes for them).

    model = MobileNet(alpha=0.5, input_shape=(128, 128, 3), weights="imagenet")
"""
from minikeras import layers
from minikeras.applications import _builder, imagenet_utils
from minikeras.applications.mobilenet_sizes import default_size, imagenet_rows
from minikeras.backend import image_data_format
from minikeras.models import Model

BASE_WEIGHT_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet/"
IMAGENET_ALPHAS = {1.0: "1_0", 0.75: "7_5", 0.50: "5_0", 0.25: "2_5"}
IMAGENET_SIZES = (128, 160, 192, 224)
BLOCKS = (  # (pointwise filters, strides) of the depthwise separable blocks 1..13
    (64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1), (512, 1), (512, 1), (512, 1),
    (1024, 2), (1024, 1))


def _channel_axis():
    return 1 if image_data_format() == "channels_first" else -1


def _conv_block(inputs, filters, alpha, kernel=(3, 3), strides=(1, 1)):
    """The first convolution, batch-normalized, relu6."""
    x = layers.Conv2D(int(filters * alpha), kernel, padding="same", use_bias=False, strides=strides,
                      name="conv1")(inputs)
    x = layers.BatchNormalization(axis=_channel_axis(), name="conv1_bn")(x)
    return layers.ReLU(6.0, name="conv1_relu")(x)


def _depthwise_conv_block(inputs, pointwise_conv_filters, alpha, depth_multiplier=1, strides=(1, 1), block_id=1):
    """A 3x3 depthwise convolution and a 1x1 pointwise one, each batch-normalized, relu6; a
    stride-2 block pads bottom and right first."""
    if strides == (1, 1):
        x = inputs
    else:
        x = layers.ZeroPadding2D(((0, 1), (0, 1)), name=f"conv_pad_{block_id}")(inputs)
    x = layers.DepthwiseConv2D((3, 3), padding="same" if strides == (1, 1) else "valid",
                               depth_multiplier=depth_multiplier, strides=strides, use_bias=False,
                               name=f"conv_dw_{block_id}")(x)
    x = layers.BatchNormalization(axis=_channel_axis(), name=f"conv_dw_{block_id}_bn")(x)
    x = layers.ReLU(6.0, name=f"conv_dw_{block_id}_relu")(x)
    x = layers.Conv2D(int(pointwise_conv_filters * alpha), (1, 1), padding="same", use_bias=False, strides=(1, 1),
                      name=f"conv_pw_{block_id}")(x)
    x = layers.BatchNormalization(axis=_channel_axis(), name=f"conv_pw_{block_id}_bn")(x)
    return layers.ReLU(6.0, name=f"conv_pw_{block_id}_relu")(x)


def MobileNet(input_shape=None, alpha=1.0, depth_multiplier=1, dropout=1e-3, include_top=True, weights="imagenet",
              input_tensor=None, pooling=None, classes=1000, classifier_activation="softmax", name=None):
    """MobileNet, as ``keras.applications.MobileNet``.

    Args:
      input_shape: (height, width, 3), each side at least 32; with ``include_top`` and ImageNet
        weights it must be (224, 224, 3). A square side of 128, 160, 192 or 224 picks the
        ImageNet weights of that resolution; other shapes load the 224 ones, with a warning.
      alpha: the width multiplier (0.25, 0.5, 0.75 or 1.0 with ImageNet weights).
      depth_multiplier: the depthwise convolutions' channel multiplier (1 with ImageNet weights).
      dropout: the dropout rate before the classifier.
      include_top: the pooling, dropout and 1x1-convolution classifier on top.
      weights: None, 'imagenet' (Keras's weight file, downloaded once) or a weights file's path.
      input_tensor: a KerasTensor to use as the image input.
      pooling: without the top, None (the 4-D feature map), 'avg' or 'max'.
      classes, classifier_activation: the classifier's size and activation.
      name: the model's name; None is Keras's ``mobilenet_{alpha:.2f}_{rows}``.

    Returns:
      A functional Model; inputs go through ``mobilenet.preprocess_input`` ('tf').
    """
    _builder.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size(input_shape, IMAGENET_SIZES),
                                                    min_size=32, data_format=image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    rows = input_shape[1] if image_data_format() == "channels_first" else input_shape[0]
    if weights == "imagenet":
        if depth_multiplier != 1:
            raise ValueError("If imagenet weights are being loaded, depth multiplier must be 1.  "
                             f"Received depth_multiplier={depth_multiplier}")
        if alpha not in IMAGENET_ALPHAS:
            raise ValueError("If imagenet weights are being loaded, alpha can be one of `0.25`, `0.50`, `0.75` or "
                             f"`1.0` only.  Received alpha={alpha}")
        rows = imagenet_rows(input_shape, IMAGENET_SIZES)
    img_input = _builder.image_input(input_tensor, input_shape)
    x = _conv_block(img_input, 32, alpha, strides=(2, 2))
    for block_id, (filters, stride) in enumerate(BLOCKS, start=1):
        x = _depthwise_conv_block(x, filters, alpha, depth_multiplier, strides=(stride, stride), block_id=block_id)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Dropout(dropout, name="dropout")(x)
        x = layers.Conv2D(classes, (1, 1), padding="same", name="conv_preds")(x)
        x = layers.Reshape((classes,), name="reshape_2")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Activation(activation=classifier_activation, name="predictions")(x)
    elif pooling == "avg":
        x = layers.GlobalAveragePooling2D()(x)
    elif pooling == "max":
        x = layers.GlobalMaxPooling2D()(x)
    model = Model(_builder.model_inputs(input_tensor, img_input), x, name=name or f"mobilenet_{alpha:0.2f}_{rows}")
    file_name = None
    if weights == "imagenet":
        suffix = "" if include_top else "_no_top"
        file_name = f"mobilenet_{IMAGENET_ALPHAS[alpha]}_{rows}_tf{suffix}.h5"
    return _builder.load_weights(model, weights, file_name, BASE_WEIGHT_PATH + (file_name or ""))


def preprocess_input(x, data_format=None):
    """'tf' preprocessing: [0, 255] to [-1, 1] (see ``imagenet_utils.preprocess_input``)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
