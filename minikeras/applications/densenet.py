"""DenseNet121/169/201 (Huang et al., 2016), as ``keras.applications.densenet``: the same layers,
names, weight files and hashes.

    model = DenseNet121(weights="imagenet")
    preds = model(densenet.preprocess_input(images))    # 'torch' preprocessing
"""
from minikeras import layers
from minikeras.applications import _builder, imagenet_utils
from minikeras.applications._builder import bn_axis
from minikeras.backend import image_data_format
from minikeras.models import Model

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/densenet/"
WEIGHTS_HASHES = {  # blocks: (name, md5 with top, md5 without)
    (6, 12, 24, 16): ("densenet121", "9d60b8095a5708f2dcce2bca79d332c7", "30ee3e1110167f948a6b9946edeeb738"),
    (6, 12, 32, 32): ("densenet169", "d699b8f76981ab1b30698df4c175e90b", "b8c4d4c20dd625c148057b9ff1c1176b"),
    (6, 12, 48, 32): ("densenet201", "1ceb130c1ea1b78c3bf6114dbdfd8807", "c13680b51ded0fb44dff2d8f86ac8bb1"),
}
BN_EPSILON = 1.001e-5


def dense_block(x, blocks, name):
    for i in range(blocks):
        x = conv_block(x, 32, name=f"{name}_block{i + 1}")
    return x


def transition_block(x, reduction, name):
    """Batch normalization, relu, a 1x1 convolution to ``reduction`` of the channels, 2x2 average pooling."""
    x = layers.BatchNormalization(axis=bn_axis(), epsilon=BN_EPSILON, name=f"{name}_bn")(x)
    x = layers.Activation("relu", name=f"{name}_relu")(x)
    x = layers.Conv2D(int(x.shape[bn_axis()] * reduction), 1, use_bias=False, name=f"{name}_conv")(x)
    return layers.AveragePooling2D(2, strides=2, name=f"{name}_pool")(x)


def conv_block(x, growth_rate, name):
    """Two batch-normalized convolutions whose ``growth_rate`` channels are concatenated to ``x``."""
    x1 = layers.BatchNormalization(axis=bn_axis(), epsilon=BN_EPSILON, name=f"{name}_0_bn")(x)
    x1 = layers.Activation("relu", name=f"{name}_0_relu")(x1)
    x1 = layers.Conv2D(4 * growth_rate, 1, use_bias=False, name=f"{name}_1_conv")(x1)
    x1 = layers.BatchNormalization(axis=bn_axis(), epsilon=BN_EPSILON, name=f"{name}_1_bn")(x1)
    x1 = layers.Activation("relu", name=f"{name}_1_relu")(x1)
    x1 = layers.Conv2D(growth_rate, 3, padding="same", use_bias=False, name=f"{name}_2_conv")(x1)
    return layers.Concatenate(axis=bn_axis(), name=f"{name}_concat")([x, x1])


def DenseNet(blocks, include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
             classes=1000, classifier_activation="softmax", name="densenet"):
    """A DenseNet with ``blocks`` conv blocks in each of its four dense blocks."""
    _builder.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=224, min_size=32,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    img_input = _builder.image_input(input_tensor, input_shape)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)))(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=False, name="conv1_conv")(x)
    x = layers.BatchNormalization(axis=bn_axis(), epsilon=BN_EPSILON, name="conv1_bn")(x)
    x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)))(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1")(x)
    for k, count in enumerate(blocks):
        x = dense_block(x, count, name=f"conv{k + 2}")
        if k < 3:
            x = transition_block(x, 0.5, name=f"pool{k + 2}")
    x = layers.BatchNormalization(axis=bn_axis(), epsilon=BN_EPSILON, name="bn")(x)
    x = layers.Activation("relu", name="relu")(x)
    x = _builder.classifier_or_pooling(x, include_top, pooling, classes, classifier_activation, weights)
    model = Model(_builder.model_inputs(input_tensor, img_input), x, name=name)
    if weights == "imagenet" and tuple(blocks) not in WEIGHTS_HASHES:
        raise ValueError("Weights for this configuration are not available.")
    variant, top_hash, notop_hash = WEIGHTS_HASHES.get(tuple(blocks), (None, None, None))
    file_name = f"{variant}_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return _builder.load_weights(model, weights, file_name, BASE_WEIGHTS_PATH + file_name,
                                 top_hash if include_top else notop_hash)


def DenseNet121(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                classes=1000, classifier_activation="softmax", name="densenet121"):
    """DenseNet121, as ``keras.applications.DenseNet121``.

    Args:
      include_top: the global pooling and Dense classifier on top (then the input is 224x224).
      weights: None, 'imagenet' (Keras's weight file, downloaded once) or a weights file's path.
      input_tensor: a KerasTensor to use as the image input.
      input_shape: (height, width, 3) without the top (each side at least 32).
      pooling: without the top, None, 'avg' or 'max'.
      classes, classifier_activation: the classifier's size and activation.
      name: the model's name.

    Returns:
      A functional Model; inputs go through ``densenet.preprocess_input`` ('torch').
    """
    return DenseNet([6, 12, 24, 16], include_top, weights, input_tensor, input_shape, pooling, classes,
                    classifier_activation, name=name)


def DenseNet169(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                classes=1000, classifier_activation="softmax", name="densenet169"):
    """DenseNet169; arguments as ``DenseNet121``."""
    return DenseNet([6, 12, 32, 32], include_top, weights, input_tensor, input_shape, pooling, classes,
                    classifier_activation, name=name)


def DenseNet201(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                classes=1000, classifier_activation="softmax", name="densenet201"):
    """DenseNet201; arguments as ``DenseNet121``."""
    return DenseNet([6, 12, 48, 32], include_top, weights, input_tensor, input_shape, pooling, classes,
                    classifier_activation, name=name)


def preprocess_input(x, data_format=None):
    """'torch' preprocessing: to [0, 1], then each channel's ImageNet mean and std."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="torch")


decode_predictions = imagenet_utils.decode_predictions
