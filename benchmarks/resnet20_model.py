"""ResNet-20 for 32x32x3 images (He et al. 2016, CIFAR variant: 3 stages of 3 basic blocks with
16/32/64 filters, BatchNormalization after every convolution, stride-2 first convolutions of the
later stages, 1x1 projection shortcuts, global average pooling, Dense(10) logits), written once
against a Keras-like namespace so that ``resnet_step.py`` (minikeras) and ``resnet_step_tf.py``
(TensorFlow's Keras, in its own process) build the same model. Imports no framework."""


def resnet20(keras, image_size=32, blocks_per_stage=3, widths=(16, 32, 64)):
    """The model, from ``keras`` (a module with ``layers``, ``Input`` and ``Model``)."""
    layers = keras.layers

    def conv_bn(x, filters, strides, relu):
        x = layers.Conv2D(filters, 3, strides=strides, padding="same", use_bias=False)(x)
        x = layers.BatchNormalization()(x)
        return layers.Activation("relu")(x) if relu else x

    def basic_block(x, filters, strides):
        shortcut = x
        y = conv_bn(conv_bn(x, filters, strides, relu=True), filters, 1, relu=False)
        if strides != 1 or x.shape[-1] != filters:
            shortcut = layers.BatchNormalization()(layers.Conv2D(filters, 1, strides=strides, use_bias=False)(x))
        return layers.Activation("relu")(layers.Add()([y, shortcut]))

    inputs = keras.Input((image_size, image_size, 3))
    x = conv_bn(inputs, widths[0], 1, relu=True)
    for stage, filters in enumerate(widths):
        for index in range(blocks_per_stage):
            x = basic_block(x, filters, 2 if stage > 0 and index == 0 else 1)
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, layers.Dense(10)(x))
