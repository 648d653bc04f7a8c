"""The classic MNIST CNN trained by TensorFlow: a ``@tf.function`` GradientTape step on Keras
layers (the TF 2 tutorial idiom), for ``train_step.py``'s optional TensorFlow row.

Only imported when TensorFlow is installed (``pip install -e ".[bench]"``).
"""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # keep TF's start-up chatter out of the table

import tensorflow as tf  # noqa: E402


def classic_cnn():
    return tf.keras.Sequential([
        tf.keras.Input((28, 28, 1)),
        tf.keras.layers.Conv2D(32, 3, activation="relu"), tf.keras.layers.Conv2D(64, 3, activation="relu"),
        tf.keras.layers.MaxPooling2D(), tf.keras.layers.Dropout(0.25), tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(128, activation="relu"), tf.keras.layers.Dropout(0.5),
        tf.keras.layers.Dense(10, activation="softmax")])


def simple_cnn():
    return tf.keras.Sequential([
        tf.keras.Input((28, 28, 1)),
        tf.keras.layers.Conv2D(32, 3, activation="relu"), tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Conv2D(64, 3, activation="relu"), tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(), tf.keras.layers.Dropout(0.5), tf.keras.layers.Dense(10, activation="softmax")])


def tape_step(kind):
    """A compiled TF step for ``kind`` ('classic' or 'simple'); returns ``step(x, y) -> loss``."""
    tf.keras.utils.set_random_seed(0)
    model = classic_cnn() if kind == "classic" else simple_cnn()
    optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()

    @tf.function
    def step(images, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return step


def as_tensors(batches):
    """The benchmark's (x, y) batches as TF tensors (made once, outside the timing)."""
    return [(tf.constant(x), tf.constant(y)) for x, y in batches]
