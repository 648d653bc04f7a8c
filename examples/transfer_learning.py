"""Transfer learning and fine-tuning a MobileNetV2 on a small image folder (the TensorFlow tutorial, renamed).

After the tutorial *Transfer learning and fine-tuning* (tensorflow/docs
site/en/tutorials/images/transfer_learning.ipynb), with ``tf.keras.X -> mk.keras.X``: images read
with ``image_dataset_from_directory`` (a fifth of the validation batches kept as the test set),
RandomFlip + RandomRotation, MobileNetV2's ``preprocess_input``, the MobileNetV2 base frozen and
called with ``training=False`` (BatchNormalization stays in inference mode), a new head
(global average pooling, dropout, and a softmax over the three classes here) trained with Adam(1e-4), then
the base unfrozen from layer 100 on and everything recompiled with RMSprop at a tenth of the rate.

The cats-and-dogs archive cannot be downloaded here, so the script writes its own folder of PNG
files (``synthetic_shapes.py``): three classes, ``ellipse``, ``rectangle`` and ``triangle``,
each image one such shape of a random colour, size and place on a noisy two-colour background.
The base gets ImageNet weights when they are cached or can be downloaded (``--weights auto``,
the default, or ``imagenet``; ``MINIKERAS_WEIGHTS_MIRROR`` names a mirror), and random weights
otherwise (``--weights none``, or ``auto`` offline: the script says which it used). A random
base first gets its BatchNormalization statistics from one batch of training images
(``batchnorm_calibration.py``: otherwise its activations vanish block by block); it is then a
random feature extractor, and the accuracies show the two phases' mechanics rather than the gain
of pretrained features.

    python examples/transfer_learning.py             # 96x96 images, 3 + 3 epochs
    python examples/transfer_learning.py --quick     # a short run (the tests), random weights
"""
import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import minikeras as mk

sys.path.insert(0, str(Path(__file__).resolve().parent))
from batchnorm_calibration import calibrate_batchnorm  # noqa: E402
from synthetic_shapes import KINDS, draw  # noqa: E402

keras = mk.keras
CLASSES = KINDS  # ellipse, rectangle, triangle: the folders' names, in label order


# -- the image folder ------------------------------------------------------------------------
def write_image_folder(root, per_class, size=96, seed=0):
    """``root/<split>/<class>/<i>.png`` for each split and count in ``per_class``; returns root."""
    rng = np.random.default_rng(seed)
    for split, count in per_class.items():
        for kind, name in enumerate(CLASSES):
            folder = os.path.join(root, split, name)
            os.makedirs(folder, exist_ok=True)
            for i in range(count):
                image = np.round(draw(kind, size, rng)[0] * 255).astype(np.uint8)
                mk.io.write_file(os.path.join(folder, f"{i:04d}.png"), mk.io.encode_png(image))
    return root


def load_folder(path, image_size, batch_size):
    """The tutorial's datasets: (train, validation, test), the test set a fifth of the
    validation batches."""
    train_dataset = keras.utils.image_dataset_from_directory(os.path.join(path, "train"), shuffle=True,
                                                             batch_size=batch_size, image_size=image_size,
                                                             label_mode="categorical", seed=0, verbose=False)
    validation_dataset = keras.utils.image_dataset_from_directory(os.path.join(path, "validation"), shuffle=True,
                                                                  batch_size=batch_size, image_size=image_size,
                                                                  label_mode="categorical", seed=0, verbose=False)
    val_batches = mk.data.experimental.cardinality(validation_dataset)
    test_dataset = validation_dataset.take(val_batches // 5)
    validation_dataset = validation_dataset.skip(val_batches // 5)
    AUTOTUNE = mk.data.AUTOTUNE
    return (train_dataset.cache().prefetch(buffer_size=AUTOTUNE), validation_dataset.cache().prefetch(AUTOTUNE),
            test_dataset.cache().prefetch(AUTOTUNE))


# -- the model -------------------------------------------------------------------------------
def base_model_with(weights, image_shape, alpha, log=print):
    """MobileNetV2 without its top: ImageNet weights for 'imagenet', random ones for None, and for
    'auto' ImageNet's if the cache has them or they can be downloaded, else random ones.
    Returns (model, 'imagenet' or None)."""
    if weights == "auto":
        try:
            return base_model_with("imagenet", image_shape, alpha, log)
        except OSError as error:
            log(f"No ImageNet weights ({error}); continuing with weights=None: a randomly initialized base")
            return base_model_with(None, image_shape, alpha, log)
    base_model = keras.applications.MobileNetV2(input_shape=image_shape, include_top=False, weights=weights,
                                                alpha=alpha)
    log(f"MobileNetV2 (alpha {alpha}) with {'ImageNet' if weights else 'random'} weights: "
        f"{len(base_model.layers)} layers")
    return base_model, weights


def build(base_model, image_shape, classes):
    """The tutorial's model: augmentation, preprocess_input, the base with training=False, pooling,
    dropout and a sigmoid Dense per class (the tutorial's one unit, for two classes)."""
    data_augmentation = keras.Sequential([keras.layers.RandomFlip("horizontal"), keras.layers.RandomRotation(0.2)])
    preprocess_input = keras.applications.mobilenet_v2.preprocess_input
    inputs = keras.Input(shape=image_shape)
    x = data_augmentation(inputs)
    x = preprocess_input(x)
    x = base_model(x, training=False)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    outputs = keras.layers.Dense(classes, activation="softmax")(x)
    return keras.Model(inputs, outputs)


def compile_with(model, optimizer):
    model.compile(optimizer=optimizer, loss=keras.losses.CategoricalCrossentropy(),
                  metrics=[keras.metrics.CategoricalAccuracy(name="accuracy")])


# -- the run ---------------------------------------------------------------------------------
def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run: 32x32 images, 1 + 1 epochs, random weights")
    parser.add_argument("--size", type=int, help="image size (default 96, quick 32)")
    parser.add_argument("--train", type=int, help="training images per class (default 100, quick 16)")
    parser.add_argument("--validation", type=int, help="validation images per class (default 60, quick 14)")
    parser.add_argument("--epochs", type=int, help="epochs of each phase (default 3, quick 1)")
    parser.add_argument("--batch-size", type=int, help="default 16, quick 8")
    parser.add_argument("--alpha", type=float, default=0.35, help="MobileNetV2's width (default 0.35)")
    parser.add_argument("--fine-tune-at", type=int, default=100, help="unfreeze the base from this layer on")
    parser.add_argument("--weights", choices=["auto", "imagenet", "none"],
                        help="the base's weights (default auto; quick: none)")
    parser.add_argument("--folder", help="write the images here (default: a temporary folder)")
    return parser.parse_args(argv)


def main(argv=None, log=print):
    args = parse_args(argv)
    size = args.size or (32 if args.quick else 96)
    per_class = {"train": args.train or (16 if args.quick else 100),
                 "validation": args.validation or (14 if args.quick else 60)}
    epochs = args.epochs or (1 if args.quick else 3)
    batch_size = args.batch_size or (8 if args.quick else 16)
    weights = args.weights or ("none" if args.quick else "auto")
    image_shape = (size, size, 3)
    with tempfile.TemporaryDirectory() as scratch:
        folder = write_image_folder(args.folder or scratch, per_class, size)
        log(f"wrote {sum(per_class.values()) * len(CLASSES)} PNG files ({per_class} per class of {CLASSES}) "
            f"under {folder}")
        train_dataset, validation_dataset, test_dataset = load_folder(folder, (size, size), batch_size)
        mk.random.set_seed(0)
        base_model, used = base_model_with(None if weights == "none" else weights, image_shape, args.alpha, log)
        if used is None:
            images, _ = next(iter(train_dataset))
            calibrate_batchnorm(base_model, keras.applications.mobilenet_v2.preprocess_input(images))
            log("random weights: BatchNormalization statistics set from one batch of training images")
        base_model.trainable = False
        model = build(base_model, image_shape, len(CLASSES))
        base_learning_rate = 0.0001 if used else 0.001
        compile_with(model, keras.optimizers.Adam(learning_rate=base_learning_rate))
        log(f"head: {len(model.trainable_variables)} trainable variables, learning rate {base_learning_rate}")
        start = time.perf_counter()
        history = model.fit(train_dataset, epochs=epochs, validation_data=validation_dataset, verbose=0)
        _, head_accuracy = model.evaluate(test_dataset, verbose=0)
        log(f"after training the head: test accuracy {head_accuracy:.4f} (chance {1 / len(CLASSES):.2f}), "
            f"validation {history.history['val_accuracy'][-1]:.4f} ({time.perf_counter() - start:.0f} s)")

        base_model.trainable = True
        for layer in base_model.layers[:args.fine_tune_at]:
            layer.trainable = False
        compile_with(model, keras.optimizers.RMSprop(learning_rate=base_learning_rate / 10))
        log(f"fine-tuning layers {args.fine_tune_at}..{len(base_model.layers) - 1} of the base: "
            f"{len(model.trainable_variables)} trainable variables, learning rate {base_learning_rate / 10}")
        history_fine = model.fit(train_dataset, epochs=2 * epochs, initial_epoch=len(history.epoch),
                                 validation_data=validation_dataset, verbose=0)
        _, fine_accuracy = model.evaluate(test_dataset, verbose=0)
        log(f"after fine-tuning: test accuracy {fine_accuracy:.4f}, validation "
            f"{history_fine.history['val_accuracy'][-1]:.4f} ({time.perf_counter() - start:.0f} s in all)")
        test_images, test_labels = next(iter(test_dataset.as_numpy_iterator()))
    return {"weights": used, "head_accuracy": float(head_accuracy), "fine_tuned_accuracy": float(fine_accuracy),
            "history": history.history, "history_fine": history_fine.history, "model": model,
            "base_model": base_model, "test_batch": (test_images, test_labels)}


if __name__ == "__main__":
    main()
