"""ResNet50/101/152 (He et al., 2015) and ResNet50V2/101V2/152V2 (He et al., 2016), as
``keras.applications.resnet`` and ``resnet_v2``: the same layers, names, weight files and hashes.

    base = ResNet50(include_top=False, weights="imagenet", pooling="avg")
"""
from minikeras import layers
from minikeras.applications import _builder, imagenet_utils
from minikeras.applications._builder import bn_axis
from minikeras.backend import image_data_format
from minikeras.models import Model

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/resnet/"
WEIGHTS_HASHES = {  # name: (md5 with top, md5 without)
    "resnet50": ("2cb95161c43110f7111970584f804107", "4d473c1dd8becc155b73f8504c6f6626"),
    "resnet101": ("f1aeb4b969a6efcfb50fad2f0c20cfc5", "88cf7a10940856eca736dc7b7e228a21"),
    "resnet152": ("100835be76be38e30d865e96f2aaae62", "ee4c566cf9a93f14d82f913c2dc6dd0c"),
    "resnet50v2": ("3ef43a0b657b3be2300d5770ece849e0", "fac2f116257151a9d068a22e544a4917"),
    "resnet101v2": ("6343647c601c52e1368623803854d971", "c0ed64b8031c3730f411d2eb4eea35b5"),
    "resnet152v2": ("a49b44d1979771252814e80f8ec446f9", "ed17cf2e0169df9d443503ef94b23b33"),
}
BN_EPSILON = 1.001e-5


def ResNet(stack_fn, preact, use_bias, include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
           pooling=None, classes=1000, classifier_activation="softmax", name="resnet", weights_name=None):
    """A ResNet whose residual stages ``stack_fn(x)`` builds; ``preact`` for V2's
    pre-activation layout (batch normalization after the stages, not after the stem)."""
    _builder.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=224, min_size=32,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    img_input = _builder.image_input(input_tensor, input_shape)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=use_bias, name="conv1_conv")(x)
    if not preact:
        x = layers.BatchNormalization(axis=bn_axis(), epsilon=BN_EPSILON, name="conv1_bn")(x)
        x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    x = stack_fn(x)
    if preact:
        x = layers.BatchNormalization(axis=bn_axis(), epsilon=BN_EPSILON, name="post_bn")(x)
        x = layers.Activation("relu", name="post_relu")(x)
    x = _builder.classifier_or_pooling(x, include_top, pooling, classes, classifier_activation, weights)
    model = Model(_builder.model_inputs(input_tensor, img_input), x, name=name)
    hashes = WEIGHTS_HASHES.get(weights_name, (None, None))
    suffix, file_hash = ("", hashes[0]) if include_top else ("_notop", hashes[1])
    file_name = f"{weights_name}_weights_tf_dim_ordering_tf_kernels{suffix}.h5"
    return _builder.load_weights(model, weights, file_name, BASE_WEIGHTS_PATH + file_name, file_hash)


def residual_block_v1(x, filters, kernel_size=3, stride=1, conv_shortcut=True, name=None):
    """A bottleneck block: 1x1, kxk, 1x1 convolutions, each batch-normalized, plus the shortcut."""
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(x)
        shortcut = layers.BatchNormalization(axis=bn_axis(), epsilon=BN_EPSILON, name=f"{name}_0_bn")(shortcut)
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, strides=stride, name=f"{name}_1_conv")(x)
    x = layers.BatchNormalization(axis=bn_axis(), epsilon=BN_EPSILON, name=f"{name}_1_bn")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.Conv2D(filters, kernel_size, padding="SAME", name=f"{name}_2_conv")(x)
    x = layers.BatchNormalization(axis=bn_axis(), epsilon=BN_EPSILON, name=f"{name}_2_bn")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    x = layers.BatchNormalization(axis=bn_axis(), epsilon=BN_EPSILON, name=f"{name}_3_bn")(x)
    x = layers.Add(name=f"{name}_add")([shortcut, x])
    return layers.Activation("relu", name=f"{name}_out")(x)


def stack_residual_blocks_v1(x, filters, blocks, stride1=2, name=None):
    x = residual_block_v1(x, filters, stride=stride1, name=f"{name}_block1")
    for i in range(2, blocks + 1):
        x = residual_block_v1(x, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def residual_block_v2(x, filters, kernel_size=3, stride=1, conv_shortcut=False, name=None):
    """A pre-activation bottleneck block (batch normalization and relu before the convolutions)."""
    preact = layers.BatchNormalization(axis=bn_axis(), epsilon=BN_EPSILON, name=f"{name}_preact_bn")(x)
    preact = layers.Activation("relu", name=f"{name}_preact_relu")(preact)
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(preact)
    else:
        shortcut = layers.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = layers.Conv2D(filters, 1, strides=1, use_bias=False, name=f"{name}_1_conv")(preact)
    x = layers.BatchNormalization(axis=bn_axis(), epsilon=BN_EPSILON, name=f"{name}_1_bn")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name=f"{name}_2_pad")(x)
    x = layers.Conv2D(filters, kernel_size, strides=stride, use_bias=False, name=f"{name}_2_conv")(x)
    x = layers.BatchNormalization(axis=bn_axis(), epsilon=BN_EPSILON, name=f"{name}_2_bn")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    return layers.Add(name=f"{name}_out")([shortcut, x])


def stack_residual_blocks_v2(x, filters, blocks, stride1=2, name=None):
    x = residual_block_v2(x, filters, conv_shortcut=True, name=f"{name}_block1")
    for i in range(2, blocks):
        x = residual_block_v2(x, filters, name=f"{name}_block{i}")
    return residual_block_v2(x, filters, stride=stride1, name=f"{name}_block{blocks}")


def _stages(version, counts):
    stack, last_stride = (stack_residual_blocks_v1, None) if version == 1 else (stack_residual_blocks_v2, 1)

    def stack_fn(x):
        for k, (filters, blocks) in enumerate(zip((64, 128, 256, 512), counts)):
            stride = {}
            if version == 1 and k == 0:
                stride = {"stride1": 1}
            if version == 2 and k == 3:
                stride = {"stride1": last_stride}
            x = stack(x, filters, blocks, name=f"conv{k + 2}", **stride)
        return x
    return stack_fn


def _resnet(version, counts, weights_name, include_top, weights, input_tensor, input_shape, pooling, classes,
            classifier_activation, name):
    return ResNet(_stages(version, counts), version == 2, True, include_top=include_top, weights=weights,
                  input_tensor=input_tensor, input_shape=input_shape, pooling=pooling, classes=classes,
                  classifier_activation=classifier_activation, name=name, weights_name=weights_name)


def ResNet50(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
             classifier_activation="softmax", name="resnet50"):
    """ResNet50, as ``keras.applications.ResNet50``.

    Args:
      include_top: the global pooling and Dense classifier on top (then the input is 224x224).
      weights: None, 'imagenet' (Keras's weight file, downloaded once) or a weights file's path.
      input_tensor: a KerasTensor to use as the image input.
      input_shape: (height, width, 3) without the top (each side at least 32).
      pooling: without the top, None, 'avg' or 'max'.
      classes, classifier_activation: the classifier's size and activation.
      name: the model's name.

    Returns:
      A functional Model; inputs go through ``resnet50.preprocess_input`` ('caffe').
    """
    return _resnet(1, (3, 4, 6, 3), "resnet50", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def ResNet101(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
              classes=1000, classifier_activation="softmax", name="resnet101"):
    """ResNet101; arguments as ``ResNet50``."""
    return _resnet(1, (3, 4, 23, 3), "resnet101", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def ResNet152(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
              classes=1000, classifier_activation="softmax", name="resnet152"):
    """ResNet152; arguments as ``ResNet50``."""
    return _resnet(1, (3, 8, 36, 3), "resnet152", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def ResNet50V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
               classes=1000, classifier_activation="softmax", name="resnet50v2"):
    """ResNet50V2, as ``keras.applications.ResNet50V2``; arguments as ``ResNet50``, inputs go
    through ``resnet_v2.preprocess_input`` ('tf')."""
    return _resnet(2, (3, 4, 6, 3), "resnet50v2", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def ResNet101V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                classes=1000, classifier_activation="softmax", name="resnet101v2"):
    """ResNet101V2; arguments as ``ResNet50V2``."""
    return _resnet(2, (3, 4, 23, 3), "resnet101v2", include_top, weights, input_tensor, input_shape, pooling,
                   classes, classifier_activation, name)


def ResNet152V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                classes=1000, classifier_activation="softmax", name="resnet152v2"):
    """ResNet152V2; arguments as ``ResNet50V2``."""
    return _resnet(2, (3, 8, 36, 3), "resnet152v2", include_top, weights, input_tensor, input_shape, pooling,
                   classes, classifier_activation, name)


def preprocess_input(x, data_format=None):
    """ResNet (V1)'s 'caffe' preprocessing: RGB to BGR, minus ImageNet's mean pixel."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


def preprocess_input_v2(x, data_format=None):
    """ResNet V2's 'tf' preprocessing: [0, 255] to [-1, 1]."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
