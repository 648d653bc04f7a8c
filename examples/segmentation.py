"""Image segmentation with a U-Net on a MobileNetV2 encoder (the TensorFlow tutorial's model, renamed).

After the tutorial *Image segmentation* (tensorflow/docs site/en/tutorials/images/segmentation.ipynb),
with ``tf.keras.X -> mk.keras.X``: the encoder is MobileNetV2's intermediate activations
('block_1_expand_relu' ... 'block_16_project') as one frozen model, the decoder pix2pix's
upsample blocks (Conv2DTranspose, BatchNormalization, ReLU) with skip connections, and the
last Conv2DTranspose gives each pixel three logits (SparseCategoricalCrossentropy from logits).

The Oxford-IIIT pets cannot be downloaded here, so the data is made here (``synthetic_shapes.py``):
one shape (an ellipse, a rectangle or a triangle, of a random colour, size and place) on a
background of two random colours blended along a random direction, with noise; its mask has the pets' three
classes: 0 the shape, 1 the background, 2 the outline (a band two pixels wide on the border).

Differences from the tutorial, for a CPU and this data: 64x64 images instead of 128x128,
MobileNetV2 with alpha 0.35, the decoder's widths divided by 4 (128, 64, 32, 16 filters), and
the image and its mask flipped by one RandomFlip over both stacked along the channels (the
tutorial's two RandomFlip layers with one seed flip alike in Keras 3; minikeras's random layers
draw from one generator, so two layers do not repeat each other's draws). The encoder has
ImageNet weights when they are cached or can be downloaded (``--weights imagenet``), and random
ones otherwise (``--weights none``, the default here: offline). A random encoder gets its BatchNormalization
statistics from 64 training images first (``batchnorm_calibration.py``: without that its
activations vanish block by block and the decoder learns "background everywhere"); frozen, it
then hands the decoder random but informative features through the skip connections.

    python examples/segmentation.py                  # 1,000 training images, 8 epochs
    python examples/segmentation.py --quick          # a short run (the tests)
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

import minikeras as mk

sys.path.insert(0, str(Path(__file__).resolve().parent))
from batchnorm_calibration import calibrate_batchnorm  # noqa: E402
from synthetic_shapes import KINDS, draw  # noqa: E402

keras = mk.keras
OUTPUT_CLASSES = 3  # the shape, the background, the outline
SHAPE, BACKGROUND, OUTLINE = 0, 1, 2
LAYER_NAMES = [
    "block_1_expand_relu",   # size/2
    "block_3_expand_relu",   # size/4
    "block_6_expand_relu",   # size/8
    "block_13_expand_relu",  # size/16
    "block_16_project",      # size/32
]


# -- the data --------------------------------------------------------------------------------
def make_shapes(n, size=64, seed=0):
    """``(images, masks)``: float32 images in [0, 1] of shape (n, size, size, 3) and uint8 masks
    (n, size, size, 1) with SHAPE, BACKGROUND or OUTLINE per pixel."""
    rng = np.random.default_rng(seed)
    images = np.empty((n, size, size, 3), np.float32)
    masks = np.empty((n, size, size, 1), np.uint8)
    for i in range(n):
        images[i], inside = draw(rng.integers(len(KINDS)), size, rng)
        border = _dilate(inside) & ~_erode(inside)
        masks[i, ..., 0] = np.where(border, OUTLINE, np.where(inside, SHAPE, BACKGROUND))
    return images, masks


def _dilate(mask):
    padded = np.pad(mask, 1)
    return padded[1:-1, 1:-1] | padded[:-2, 1:-1] | padded[2:, 1:-1] | padded[1:-1, :-2] | padded[1:-1, 2:]


def _erode(mask):
    return ~_dilate(~mask)


class Augment(keras.layers.Layer):
    """Flips an image and its mask left-right together: one RandomFlip over both, stacked."""

    def __init__(self, seed=42):
        super().__init__()
        self.augment = keras.layers.RandomFlip(mode="horizontal", seed=seed)

    def call(self, inputs, labels):
        both = self.augment(keras.ops.concatenate([inputs, keras.ops.cast(labels, inputs.dtype)], axis=-1))
        return both[..., :-1], keras.ops.cast(both[..., -1:], labels.dtype)


def batches(images, masks, batch_size, augment=True, buffer_size=1000):
    """The tutorial's input pipeline: cache, shuffle, batch, repeat, augment, prefetch."""
    dataset = mk.data.Dataset.from_tensor_slices((images, masks)).cache()
    if not augment:
        return dataset.batch(batch_size)
    return (dataset.shuffle(buffer_size, seed=0).batch(batch_size).repeat().map(Augment())
            .prefetch(buffer_size=mk.data.AUTOTUNE))


# -- the model -------------------------------------------------------------------------------
def upsample(filters, size, apply_dropout=False):
    """pix2pix's upsample block: Conv2DTranspose (stride 2) -> BatchNormalization -> [Dropout] -> ReLU."""
    initializer = keras.initializers.RandomNormal(0.0, 0.02)
    result = keras.Sequential()
    result.add(keras.layers.Conv2DTranspose(filters, size, strides=2, padding="same",
                                            kernel_initializer=initializer, use_bias=False))
    result.add(keras.layers.BatchNormalization())
    if apply_dropout:
        result.add(keras.layers.Dropout(0.5))
    result.add(keras.layers.ReLU())
    return result


def encoder(size, alpha=0.35, weights=None, calibration_images=None):
    """MobileNetV2's activations at LAYER_NAMES as one frozen model (the tutorial's down_stack).
    With random weights, its BatchNormalization statistics are set from ``calibration_images``
    (see ``batchnorm_calibration``)."""
    base_model = keras.applications.MobileNetV2(input_shape=[size, size, 3], include_top=False, alpha=alpha,
                                                weights=weights)
    if weights is None and calibration_images is not None:
        calibrate_batchnorm(base_model, calibration_images)
    base_model_outputs = [base_model.get_layer(name).output for name in LAYER_NAMES]
    down_stack = keras.Model(inputs=base_model.input, outputs=base_model_outputs)
    down_stack.trainable = False
    return down_stack


def unet_model(output_channels, down_stack, up_stack, size):
    """The tutorial's U-Net: the encoder's skips, each upsample block followed by a concatenation
    with the next skip, then a Conv2DTranspose to ``output_channels`` logits at full size."""
    inputs = keras.layers.Input(shape=[size, size, 3])
    skips = down_stack(inputs)
    x = skips[-1]
    skips = reversed(skips[:-1])
    for up, skip in zip(up_stack, skips):
        x = up(x)
        concat = keras.layers.Concatenate()
        x = concat([x, skip])
    last = keras.layers.Conv2DTranspose(filters=output_channels, kernel_size=3, strides=2, padding="same")
    x = last(x)
    return keras.Model(inputs=inputs, outputs=x)


def build(size, alpha=0.35, width=0.25, weights=None, calibration_images=None):
    """The compiled U-Net: the encoder and the tutorial's up_stack (512, 256, 128, 64 filters)
    times ``width``."""
    up_stack = [upsample(int(filters * width), 3) for filters in (512, 256, 128, 64)]
    model = unet_model(OUTPUT_CLASSES, encoder(size, alpha, weights, calibration_images), up_stack, size)
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def create_mask(pred_mask):
    """The class of each pixel, (height, width, 1), of the first image's logits."""
    pred_mask = np.argmax(np.asarray(pred_mask), axis=-1)
    return pred_mask[..., np.newaxis][0]


def mean_iou(true_masks, predicted_masks, classes=OUTPUT_CLASSES):
    """The intersection over union of each class, averaged over the classes."""
    ious = []
    for c in range(classes):
        truth, predicted = true_masks == c, predicted_masks == c
        union = np.sum(truth | predicted)
        ious.append(np.sum(truth & predicted) / union if union else 1.0)
    return float(np.mean(ious))


def plot_predictions(images, masks, predicted, path=None, rows=3):
    """Input image, true mask and predicted mask side by side, ``rows`` examples."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(rows, 3, figsize=(6, 2 * rows), squeeze=False)
    for row in range(rows):
        for ax, picture, title in zip(axes[row], (images[row], masks[row, ..., 0], predicted[row, ..., 0]),
                                      ("Input Image", "True Mask", "Predicted Mask")):
            ax.imshow(picture, vmin=0, vmax=OUTPUT_CLASSES - 1) if picture.ndim == 2 else ax.imshow(picture)
            ax.set_title(title, fontsize=9)
            ax.axis("off")
    fig.tight_layout()
    if path:
        fig.savefig(path, dpi=60)
        plt.close(fig)
    return fig


# -- the run ---------------------------------------------------------------------------------
def weights_argument(value):
    if value not in ("imagenet", "none"):
        raise argparse.ArgumentTypeError(f"expected 'imagenet' or 'none', received {value!r}")
    return None if value == "none" else value


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run: 32x32 images, 96 examples, 1 epoch")
    parser.add_argument("--size", type=int, help="image size (a multiple of 32; default 64, quick 32)")
    parser.add_argument("--train", type=int, help="training images (default 1000, quick 96)")
    parser.add_argument("--epochs", type=int, help="epochs (default 8, quick 1)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--weights", type=weights_argument, default=None,
                        help="the encoder's weights: 'imagenet' (cached or downloaded) or 'none' (default)")
    parser.add_argument("--figure", help="write the predicted masks of three test images to this PNG file")
    return parser.parse_args(argv)


def main(argv=None, log=print):
    args = parse_args(argv)
    size = args.size or (32 if args.quick else 64)
    n_train = args.train or (96 if args.quick else 1000)
    epochs = args.epochs or (1 if args.quick else 8)
    n_test = 64 if args.quick else 200
    train_images, train_masks = make_shapes(n_train, size, seed=0)
    test_images, test_masks = make_shapes(n_test, size, seed=1)
    shares = np.bincount(train_masks.ravel(), minlength=OUTPUT_CLASSES) / train_masks.size
    log(f"{n_train} training and {n_test} test images of {size}x{size}; pixels: "
        f"{shares[SHAPE]:.0%} shape, {shares[BACKGROUND]:.0%} background, {shares[OUTLINE]:.0%} outline")
    mk.random.set_seed(0)
    model = build(size, weights=args.weights, calibration_images=train_images[:64])
    log(f"U-Net: {model.count_params():,} parameters, {sum(int(np.prod(w.shape)) for w in model.trainable_weights):,}"
        f" trainable (the encoder, MobileNetV2 with {'ImageNet' if args.weights else 'random'} weights, is frozen"
        f"{'' if args.weights else '; its BatchNormalization statistics set from 64 training images'})")
    steps_per_epoch = max(1, n_train // args.batch_size)
    start = time.perf_counter()
    report = keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: log(
        f"epoch {epoch + 1}: loss {logs['loss']:.4f}, accuracy {logs['accuracy']:.4f}, val_loss {logs['val_loss']:.4f}"
        f", val_accuracy {logs['val_accuracy']:.4f} ({time.perf_counter() - start:.0f} s)"))
    history = model.fit(batches(train_images, train_masks, args.batch_size), epochs=epochs,
                        steps_per_epoch=steps_per_epoch, validation_data=batches(test_images, test_masks,
                                                                                 args.batch_size, augment=False),
                        callbacks=[report], verbose=0)
    predicted = np.argmax(np.asarray(model.predict(test_images, verbose=0)), axis=-1)[..., None]
    accuracy = float(np.mean(predicted == test_masks))
    iou = mean_iou(test_masks, predicted)
    baseline = float(np.mean(test_masks == BACKGROUND))
    log(f"test pixel accuracy {accuracy:.4f} (all background: {baseline:.4f}), mean IoU over the 3 classes {iou:.4f}")
    if args.figure:
        plot_predictions(test_images, test_masks, predicted, args.figure)
    return {"history": history.history, "pixel_accuracy": accuracy, "mean_iou": iou, "baseline": baseline,
            "predicted": predicted, "test": (test_images, test_masks), "model": model}


if __name__ == "__main__":
    main()
