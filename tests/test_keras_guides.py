"""The Keras 3 developer guides of keras.io (keras-team/keras-io, ``guides/``, Apache 2.0) run
under ``from minikeras import keras``.

Each test is one guide's code with its imports renamed (``import keras`` -> ``from minikeras
import keras``, ``from keras import layers`` -> ``from minikeras.keras import layers``,
``import tensorflow as tf`` -> ``import minikeras as tf``) and its data shrunk to seconds: MNIST
is sliced to a few hundred images (read from ``MINIKERAS_DATASETS``), other downloads become
generated arrays of the same shapes and dtypes, epochs and widths are cut. Everything else is
the guide's code as written; the parts left out (another backend's API, plots, downloads) are
named in each docstring. Each test asserts what the guide prints or shows: shapes, weight counts,
finite losses, reloaded models that predict as the saved ones.
"""
import os

import numpy as np
import pytest

import minikeras as tf
from minikeras import keras
from minikeras.keras import layers

needs_mnist = pytest.mark.skipif(
    not os.path.exists(os.path.join(os.environ.get("MINIKERAS_DATASETS", ""), "mnist")),
    reason="MNIST is read from MINIKERAS_DATASETS, which does not hold it here")


@pytest.fixture(autouse=True)
def seeded():
    keras.utils.set_random_seed(1337)


def mnist_slice(n_train=384, n_test=128):
    """keras.datasets.mnist.load_data(), cut to its first n_train / n_test images."""
    (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
    return (x_train[:n_train], y_train[:n_train]), (x_test[:n_test], y_test[:n_test])


# -- guides/intro_to_keras_for_engineers.py -------------------------------------------------
@needs_mnist
def test_intro_to_keras_for_engineers(tmp_path, monkeypatch):
    """Introduction to Keras for engineers. Shrunk: 384/128 MNIST images, convolutions 64/128
    wide become 8/16, 2 epochs instead of 20, batch 64. Left out: the PyTorch DataLoader part
    (torch is another backend's data source); the tf.data part runs on minikeras.data."""
    monkeypatch.chdir(tmp_path)
    (x_train, y_train), (x_test, y_test) = mnist_slice()
    x_train = x_train.astype("float32") / 255
    x_test = x_test.astype("float32") / 255
    x_train = np.expand_dims(x_train, -1)
    x_test = np.expand_dims(x_test, -1)
    assert x_train.shape == (384, 28, 28, 1)

    num_classes = 10
    input_shape = (28, 28, 1)
    model = keras.Sequential(
        [
            keras.layers.Input(shape=input_shape),
            keras.layers.Conv2D(8, kernel_size=(3, 3), activation="relu"),
            keras.layers.Conv2D(8, kernel_size=(3, 3), activation="relu"),
            keras.layers.MaxPooling2D(pool_size=(2, 2)),
            keras.layers.Conv2D(16, kernel_size=(3, 3), activation="relu"),
            keras.layers.Conv2D(16, kernel_size=(3, 3), activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dropout(0.5),
            keras.layers.Dense(num_classes, activation="softmax"),
        ]
    )
    model.summary()
    model.compile(
        loss=keras.losses.SparseCategoricalCrossentropy(),
        optimizer=keras.optimizers.Adam(learning_rate=1e-3),
        metrics=[keras.metrics.SparseCategoricalAccuracy(name="acc")],
    )
    batch_size = 64
    epochs = 2
    callbacks = [
        keras.callbacks.ModelCheckpoint(filepath="model_at_epoch_{epoch}.keras"),
        keras.callbacks.EarlyStopping(monitor="val_loss", patience=2),
    ]
    history = model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs,
                        validation_split=0.15, callbacks=callbacks, verbose=0)
    assert set(history.history) >= {"loss", "acc", "val_loss", "val_acc"}
    assert os.path.exists("model_at_epoch_1.keras") and os.path.exists("model_at_epoch_2.keras")
    score = model.evaluate(x_test, y_test, verbose=0)
    assert np.all(np.isfinite(score))
    saved_predictions = model.predict(x_test, verbose=0)
    model.save("final_model.keras")
    model = keras.saving.load_model("final_model.keras")
    predictions = model.predict(x_test, verbose=0)
    assert predictions.shape == (128, 10)
    np.testing.assert_allclose(predictions, saved_predictions, rtol=1e-5, atol=1e-6)

    class MyDense(keras.layers.Layer):
        def __init__(self, units, activation=None, name=None):
            super().__init__(name=name)
            self.units = units
            self.activation = keras.activations.get(activation)

        def build(self, input_shape):
            input_dim = input_shape[-1]
            self.w = self.add_weight(shape=(input_dim, self.units),
                                     initializer=keras.initializers.GlorotNormal(),
                                     name="kernel", trainable=True)
            self.b = self.add_weight(shape=(self.units,), initializer=keras.initializers.Zeros(),
                                     name="bias", trainable=True)

        def call(self, inputs):
            x = keras.ops.matmul(inputs, self.w) + self.b
            return self.activation(x)

    class MyDropout(keras.layers.Layer):
        def __init__(self, rate, name=None):
            super().__init__(name=name)
            self.rate = rate
            self.seed_generator = keras.random.SeedGenerator(1337)

        def call(self, inputs):
            return keras.random.dropout(inputs, self.rate, seed=self.seed_generator)

    class MyModel(keras.Model):
        def __init__(self, num_classes):
            super().__init__()
            self.conv_base = keras.Sequential(
                [
                    keras.layers.Conv2D(8, kernel_size=(3, 3), activation="relu"),
                    keras.layers.Conv2D(8, kernel_size=(3, 3), activation="relu"),
                    keras.layers.MaxPooling2D(pool_size=(2, 2)),
                    keras.layers.Conv2D(16, kernel_size=(3, 3), activation="relu"),
                    keras.layers.Conv2D(16, kernel_size=(3, 3), activation="relu"),
                    keras.layers.GlobalAveragePooling2D(),
                ]
            )
            self.dp = MyDropout(0.5)
            self.dense = MyDense(num_classes, activation="softmax")

        def call(self, x):
            x = self.conv_base(x)
            x = self.dp(x)
            return self.dense(x)

    def compiled_model():
        model = MyModel(num_classes=10)
        model.compile(
            loss=keras.losses.SparseCategoricalCrossentropy(),
            optimizer=keras.optimizers.Adam(learning_rate=1e-3),
            metrics=[keras.metrics.SparseCategoricalAccuracy(name="acc")],
        )
        return model

    model = compiled_model()
    history = model.fit(x_train, y_train, batch_size=batch_size, epochs=1, validation_split=0.15,
                        verbose=0)
    assert np.isfinite(history.history["val_loss"][0])
    # The seed generator's state is one of the model's variables, as the guide says.
    assert any(v is model.dp.seed_generator.state for v in model.variables)

    train_dataset = (
        tf.data.Dataset.from_tensor_slices((x_train, y_train))
        .batch(batch_size)
        .prefetch(tf.data.AUTOTUNE)
    )
    test_dataset = (
        tf.data.Dataset.from_tensor_slices((x_test, y_test))
        .batch(batch_size)
        .prefetch(tf.data.AUTOTUNE)
    )
    model = compiled_model()
    history = model.fit(train_dataset, epochs=1, validation_data=test_dataset, verbose=0)
    assert np.isfinite(history.history["val_loss"][0])


# -- guides/sequential_model.py -------------------------------------------------------------
def test_sequential_model():
    """The Sequential model. Shrunk: the 250x250 RGB inputs become 100x100 (the guide's
    downsampling arithmetic still ends in 4x4 maps at 250; at 100 it ends in 1x1). Left out:
    the transfer-learning blueprints, which the guide shows as text, not code."""
    model = keras.Sequential(
        [
            layers.Dense(2, activation="relu", name="layer1"),
            layers.Dense(3, activation="relu", name="layer2"),
            layers.Dense(4, name="layer3"),
        ]
    )
    x = tf.ones((3, 3))
    y = model(x)
    assert tuple(y.shape) == (3, 4)

    layer1 = layers.Dense(2, activation="relu", name="layer1")
    layer2 = layers.Dense(3, activation="relu", name="layer2")
    layer3 = layers.Dense(4, name="layer3")
    x = tf.ones((3, 3))
    y = layer3(layer2(layer1(x)))
    assert tuple(y.shape) == (3, 4)

    model = keras.Sequential(
        [
            layers.Dense(2, activation="relu"),
            layers.Dense(3, activation="relu"),
            layers.Dense(4),
        ]
    )
    assert len(model.layers) == 3

    model = keras.Sequential()
    model.add(layers.Dense(2, activation="relu"))
    model.add(layers.Dense(3, activation="relu"))
    model.add(layers.Dense(4))
    model.pop()
    assert len(model.layers) == 2

    model = keras.Sequential(name="my_sequential")
    model.add(layers.Dense(2, activation="relu", name="layer1"))
    model.add(layers.Dense(3, activation="relu", name="layer2"))
    model.add(layers.Dense(4, name="layer3"))
    assert model.name == "my_sequential"

    layer = layers.Dense(3)
    assert layer.weights == []
    x = tf.ones((1, 4))
    y = layer(x)
    assert [tuple(w.shape) for w in layer.weights] == [(4, 3), (3,)]

    model = keras.Sequential(
        [
            layers.Dense(2, activation="relu"),
            layers.Dense(3, activation="relu"),
            layers.Dense(4),
        ]
    )
    x = tf.ones((1, 4))
    y = model(x)
    assert len(model.weights) == 6
    model.summary()

    model = keras.Sequential()
    model.add(keras.Input(shape=(4,)))
    model.add(layers.Dense(2, activation="relu"))
    model.summary()
    assert len(model.layers) == 1  # the Input is not a layer of the model

    model = keras.Sequential()
    model.add(layers.Dense(2, activation="relu", input_shape=(4,)))
    model.summary()
    assert len(model.weights) == 2

    model = keras.Sequential()
    model.add(keras.Input(shape=(100, 100, 3)))
    model.add(layers.Conv2D(32, 5, strides=2, activation="relu"))
    model.add(layers.Conv2D(32, 3, activation="relu"))
    model.add(layers.MaxPooling2D(3))
    model.summary()
    assert tuple(model.output_shape) == (None, 15, 15, 32)
    model.add(layers.Conv2D(32, 3, activation="relu"))
    model.add(layers.Conv2D(32, 3, activation="relu"))
    model.add(layers.MaxPooling2D(3))
    model.add(layers.Conv2D(32, 3, activation="relu"))
    model.summary()
    model.add(layers.GlobalMaxPooling2D())
    model.add(layers.Dense(10))
    assert tuple(model.output_shape) == (None, 10)

    initial_model = keras.Sequential(
        [
            keras.Input(shape=(100, 100, 3)),
            layers.Conv2D(32, 5, strides=2, activation="relu"),
            layers.Conv2D(32, 3, activation="relu"),
            layers.Conv2D(32, 3, activation="relu"),
        ]
    )
    feature_extractor = keras.Model(
        inputs=initial_model.inputs,
        outputs=[layer.output for layer in initial_model.layers],
    )
    x = tf.ones((1, 100, 100, 3))
    features = feature_extractor(x)
    assert [tuple(f.shape) for f in features] == [(1, 48, 48, 32), (1, 46, 46, 32), (1, 44, 44, 32)]

    initial_model = keras.Sequential(
        [
            keras.Input(shape=(100, 100, 3)),
            layers.Conv2D(32, 5, strides=2, activation="relu"),
            layers.Conv2D(32, 3, activation="relu", name="my_intermediate_layer"),
            layers.Conv2D(32, 3, activation="relu"),
        ]
    )
    feature_extractor = keras.Model(
        inputs=initial_model.inputs,
        outputs=initial_model.get_layer(name="my_intermediate_layer").output,
    )
    x = tf.ones((1, 100, 100, 3))
    features = feature_extractor(x)
    assert tuple(features.shape) == (1, 46, 46, 32)
