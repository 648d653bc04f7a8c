"""Data augmentation on a folder of images: Fashion-MNIST written as PNG files, loaded with
``image_dataset_from_directory``, a small CNN trained with and without augmentation layers
inside the model (the TF "data augmentation" and "image classification" tutorials, renamed).

The training set is kept small (3,000 images by default): the model with ``RandomFlip`` +
``RandomRotation`` + ``RandomZoom`` + ``RandomTranslation`` layers sees a new variant of each
image every epoch. Those layers act only in ``fit`` (training=True); ``evaluate`` and
``predict`` see the images as they are. On Fashion-MNIST, whose images are centred and aligned
like the test images, augmentation did not raise test accuracy in the runs made: 0.8153 without
and 0.7176 with (3,000 images, 10 epochs, the notebook), 0.7990 and 0.7677 with milder layers
(1,000 images, 30 epochs): the augmented model trains on a harder task than the test asks.

    python examples/image_augmentation.py                       # 3,000 training images, 10 epochs
    python examples/image_augmentation.py --train 512 --test 500 --epochs 1   # a quick run

Needs Pillow (``pip install 'minikeras[images]'``) and Fashion-MNIST (``MINIKERAS_DATASETS``,
the cache, or a download).
"""
import argparse
import os
import tempfile
import time

import numpy as np

import minikeras as mk

# folders sort in label order (labels are inferred from the sorted folder names): 0_T-shirt_top, 1_Trouser, ...
CLASS_FOLDERS = [f"{i}_{name.replace('/', '_').replace(' ', '_')}"
                 for i, name in enumerate(mk.datasets.fashion_mnist.CLASS_NAMES)]


def write_image_folder(root, images, labels):
    """Writes ``root/<class>/<i>.png`` for each image (uint8, 28x28) with mk.io; returns root."""
    for name in CLASS_FOLDERS:
        os.makedirs(os.path.join(root, name), exist_ok=True)
    for i, (image, label) in enumerate(zip(images, labels)):
        mk.io.write_file(os.path.join(root, CLASS_FOLDERS[label], f"{i:05d}.png"), mk.io.encode_png(image[:, :, None]))
    return root


def make_folders(root, n_train, n_test, seed=0):
    """A class-balanced random subset of Fashion-MNIST as root/train and root/test image folders."""
    (x_train, y_train), (x_test, y_test) = mk.datasets.fashion_mnist.load_data()
    rng = np.random.default_rng(seed)
    train = rng.permutation(len(x_train))[:n_train]
    test = rng.permutation(len(x_test))[:n_test]
    write_image_folder(os.path.join(root, "train"), x_train[train], y_train[train])
    write_image_folder(os.path.join(root, "test"), x_test[test], y_test[test])
    return os.path.join(root, "train"), os.path.join(root, "test")


def load_folders(train_dir, test_dir, batch_size=64, seed=0):
    """(train, validation, test) Datasets of (28, 28, 1) float images in [0, 255]."""
    options = dict(color_mode="grayscale", image_size=(28, 28), batch_size=batch_size, verbose=False)
    train, val = mk.utils.image_dataset_from_directory(train_dir, validation_split=0.1, subset="both", seed=seed,
                                                       **options)
    test = mk.utils.image_dataset_from_directory(test_dir, shuffle=False, **options)
    assert train.class_names == CLASS_FOLDERS == test.class_names
    return train.cache(), val.cache(), test.cache()


def augmentation():
    """The augmentation block: active in fit, the identity in evaluate/predict."""
    return mk.Sequential([
        mk.layers.RandomFlip("horizontal"),
        mk.layers.RandomRotation(0.05),
        mk.layers.RandomZoom(0.1),
        mk.layers.RandomTranslation(0.1, 0.1),
    ], name="augmentation")


def build_model(augment):
    """Rescaling -> [augmentation] -> two conv blocks -> dropout -> Dense(10) logits."""
    layers = [mk.Input((28, 28, 1)), mk.layers.Rescaling(1 / 255)]
    if augment:
        layers.append(augmentation())
    layers += [mk.layers.Conv2D(32, 3, activation="relu"), mk.layers.MaxPooling2D(),
               mk.layers.Conv2D(64, 3, activation="relu"), mk.layers.MaxPooling2D(),
               mk.layers.Flatten(), mk.layers.Dropout(0.3), mk.layers.Dense(10)]
    model = mk.Sequential(layers, name="augmented" if augment else "plain")
    model.compile(optimizer=mk.optimizers.Adam(1e-3),
                  loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model


def train_and_test(augment, train, val, test, epochs, seed=0, log=print):
    """Fits one model; returns its test accuracy and the fit history."""
    mk.random.set_seed(seed)
    model = build_model(augment)
    start = time.perf_counter()
    history = model.fit(train, validation_data=val, epochs=epochs, verbose=0)
    _, accuracy = model.evaluate(test, verbose=0)
    log(f"{model.name:9s}: test accuracy {accuracy:.4f} (val {history.history['val_accuracy'][-1]:.4f}, "
        f"{time.perf_counter() - start:.1f} s)")
    return accuracy, history.history


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=int, default=3000, help="training images written to the folder")
    parser.add_argument("--test", type=int, default=10000, help="test images written to the folder")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as root:
        start = time.perf_counter()
        train_dir, test_dir = make_folders(root, args.train, args.test, args.seed)
        print(f"wrote {args.train + args.test} PNG files in {time.perf_counter() - start:.1f} s")
        train, val, test = load_folders(train_dir, test_dir, args.batch_size, args.seed)
        results = {augment: train_and_test(augment, train, val, test, args.epochs, args.seed)[0]
                   for augment in (False, True)}
    print(f"test accuracy without augmentation {results[False]:.4f}, with augmentation {results[True]:.4f}")
    return results


if __name__ == "__main__":
    main()
