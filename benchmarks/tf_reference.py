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


def tape_step(kind, policy=None):
    """A compiled TF step for ``kind`` ('classic' or 'simple'); returns ``step(x, y) -> loss``.
    Under a dtype ``policy`` (TF's mixed precision guide): the model is built under it as the
    global policy with a float32 softmax layer, and under 'mixed_float16' the loss is scaled."""
    tf.keras.utils.set_random_seed(0)
    if policy is not None:
        tf.keras.mixed_precision.set_global_policy(policy)
    try:
        model = classic_cnn() if kind == "classic" else simple_cnn()
        if policy is not None:
            model = tf.keras.Sequential(model.layers[:-1] + [tf.keras.layers.Dense(10),
                                                             tf.keras.layers.Activation("softmax", dtype="float32")])
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")
    optimizer = tf.keras.optimizers.Adam(1e-3)
    if policy == "mixed_float16":
        optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()

    @tf.function
    def step(images, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
            scaled = optimizer.scale_loss(loss)  # the loss itself unless loss scaling is on
        grads = tape.gradient(scaled, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return step


def as_tensors(batches):
    """The benchmark's (x, y) batches as TF tensors (made once, outside the timing)."""
    return [(tf.constant(x), tf.constant(y)) for x, y in batches]
