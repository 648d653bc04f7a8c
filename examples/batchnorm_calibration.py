"""Random weights that keep their scale: the examples' fallback when ImageNet weights are out of reach.

A MobileNetV2 with random weights (``weights=None``) called in inference mode normalizes with
BatchNormalization's initial statistics (mean 0, variance 1), which its random convolutions do not
produce: the activations shrink by orders of magnitude from block to block (1e-2 after the first
block, 1e-11 at the top at 64x64), and a frozen base then hands a new head or decoder nothing.
``calibrate_batchnorm`` sets each BatchNormalization's moving statistics to those of a batch of
the task's own images (one call in training mode with momentum 0), so that every layer sees
inputs of unit scale: the random features keep their variety. Pretrained weights need none of it.
"""
import minikeras as mk


def calibrate_batchnorm(model, images):
    """Sets the moving mean and variance of every BatchNormalization in ``model`` to the statistics
    it sees on ``images`` (each layer after the ones below it were set). Returns their count."""
    layers = [layer for layer in model.layers if isinstance(layer, mk.keras.layers.BatchNormalization)]
    saved = [(layer.momentum, layer.trainable) for layer in layers]
    for layer in layers:
        layer.momentum, layer.trainable = 0.0, True  # a frozen BatchNormalization would not update
    model(images, training=True)
    for layer, (momentum, trainable) in zip(layers, saved):
        layer.momentum, layer.trainable = momentum, trainable
    return len(layers)
