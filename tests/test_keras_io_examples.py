"""keras.io examples (keras-team/keras-io, ``examples/``, Apache 2.0) run under
``from minikeras import keras``.

Each test is the example's Keras 3 code with only the imports renamed
(``import keras`` -> ``from minikeras import keras``, ``from keras import layers`` ->
``from minikeras.keras import layers``, ``import tensorflow as tf`` -> ``import minikeras as tf``),
its sizes shrunk (fewer samples, epochs and units) and its dataset replaced by arrays made here
with the same shapes and dtypes: there is no internet on the machines that run the tests. Plots,
``print``s of whole arrays and downloads are left out. Each asserts what the example shows: the
model trains (finite loss that goes down) and its outputs have the shapes it prints.
"""
import numpy as np
import pytest

from minikeras import keras
from minikeras.keras import layers, ops


def assert_trains(losses, drop=1.0):
    """Every loss is finite and the last is below the first (times ``drop``)."""
    losses = np.asarray(losses, dtype=float)
    assert np.all(np.isfinite(losses)), losses
    assert losses[-1] < drop * losses[0], losses


def class_images(rng, n, shape, num_classes):
    """uint8 images whose class lights one horizontal band: a learnable stand-in for MNIST/CIFAR."""
    labels = rng.integers(0, num_classes, n).astype("uint8")
    images = rng.integers(0, 60, (n,) + shape).astype("uint8")
    band = shape[0] // num_classes
    for i, label in enumerate(labels):
        images[i, label * band:(label + 1) * band] = 255
    return images, labels


# -- vision/mnist_convnet.py -----------------------------------------------------------------
def test_mnist_convnet():
    rng = np.random.default_rng(0)
    num_classes = 10
    input_shape = (28, 28, 1)
    # keras.datasets.mnist.load_data() -> generated uint8 (n, 28, 28) images and uint8 labels
    x_train, y_train = class_images(rng, 256, (28, 28), num_classes)
    x_test, y_test = class_images(rng, 64, (28, 28), num_classes)

    x_train = x_train.astype("float32") / 255
    x_test = x_test.astype("float32") / 255
    x_train = np.expand_dims(x_train, -1)
    x_test = np.expand_dims(x_test, -1)
    assert x_train.shape == (256, 28, 28, 1)

    y_train = keras.utils.to_categorical(y_train, num_classes)
    y_test = keras.utils.to_categorical(y_test, num_classes)

    model = keras.Sequential(
        [
            keras.Input(shape=input_shape),
            layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
            layers.MaxPooling2D(pool_size=(2, 2)),
            layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
            layers.MaxPooling2D(pool_size=(2, 2)),
            layers.Flatten(),
            layers.Dropout(0.5),
            layers.Dense(num_classes, activation="softmax"),
        ]
    )
    model.summary()

    batch_size = 64  # 128 in the example
    epochs = 3  # 15 in the example
    model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
    history = model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs,
                        validation_split=0.1, verbose=0)
    score = model.evaluate(x_test, y_test, verbose=0)
    assert_trains(history.history["loss"])
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert len(score) == 2 and np.isfinite(score[0])
    assert model.output_shape == (None, 10)


# -- generative/vae.py -----------------------------------------------------------------------
@pytest.mark.xfail(strict=True, raises=Exception, reason=(
    "fit(x) with no y hands train_step the 1-tuple (x,) (trainers/step_runner.as_tensors); Keras 3 "
    "hands it x itself, so the example's self.encoder(data) and binary_crossentropy(data, ...) "
    "receive a tuple"))
def test_vae_custom_train_step():
    import minikeras as tf  # the example: import tensorflow as tf

    class Sampling(layers.Layer):
        """Uses (z_mean, z_log_var) to sample z, the vector encoding a digit."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.seed_generator = keras.random.SeedGenerator(1337)

        def call(self, inputs):
            z_mean, z_log_var = inputs
            batch = ops.shape(z_mean)[0]
            dim = ops.shape(z_mean)[1]
            epsilon = keras.random.normal(shape=(batch, dim), seed=self.seed_generator)
            return z_mean + ops.exp(0.5 * z_log_var) * epsilon

    latent_dim = 2

    encoder_inputs = keras.Input(shape=(28, 28, 1))
    x = layers.Conv2D(32, 3, activation="relu", strides=2, padding="same")(encoder_inputs)
    x = layers.Conv2D(64, 3, activation="relu", strides=2, padding="same")(x)
    x = layers.Flatten()(x)
    x = layers.Dense(16, activation="relu")(x)
    z_mean = layers.Dense(latent_dim, name="z_mean")(x)
    z_log_var = layers.Dense(latent_dim, name="z_log_var")(x)
    z = Sampling()([z_mean, z_log_var])
    encoder = keras.Model(encoder_inputs, [z_mean, z_log_var, z], name="encoder")
    encoder.summary()

    latent_inputs = keras.Input(shape=(latent_dim,))
    x = layers.Dense(7 * 7 * 64, activation="relu")(latent_inputs)
    x = layers.Reshape((7, 7, 64))(x)
    x = layers.Conv2DTranspose(64, 3, activation="relu", strides=2, padding="same")(x)
    x = layers.Conv2DTranspose(32, 3, activation="relu", strides=2, padding="same")(x)
    decoder_outputs = layers.Conv2DTranspose(1, 3, activation="sigmoid", padding="same")(x)
    decoder = keras.Model(latent_inputs, decoder_outputs, name="decoder")
    decoder.summary()

    class VAE(keras.Model):
        def __init__(self, encoder, decoder, **kwargs):
            super().__init__(**kwargs)
            self.encoder = encoder
            self.decoder = decoder
            self.total_loss_tracker = keras.metrics.Mean(name="total_loss")
            self.reconstruction_loss_tracker = keras.metrics.Mean(name="reconstruction_loss")
            self.kl_loss_tracker = keras.metrics.Mean(name="kl_loss")

        @property
        def metrics(self):
            return [
                self.total_loss_tracker,
                self.reconstruction_loss_tracker,
                self.kl_loss_tracker,
            ]

        def train_step(self, data):
            with tf.GradientTape() as tape:
                z_mean, z_log_var, z = self.encoder(data)
                reconstruction = self.decoder(z)
                reconstruction_loss = ops.mean(
                    ops.sum(
                        keras.losses.binary_crossentropy(data, reconstruction),
                        axis=(1, 2),
                    )
                )
                kl_loss = -0.5 * (1 + z_log_var - ops.square(z_mean) - ops.exp(z_log_var))
                kl_loss = ops.mean(ops.sum(kl_loss, axis=1))
                total_loss = reconstruction_loss + kl_loss
            grads = tape.gradient(total_loss, self.trainable_weights)
            self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
            self.total_loss_tracker.update_state(total_loss)
            self.reconstruction_loss_tracker.update_state(reconstruction_loss)
            self.kl_loss_tracker.update_state(kl_loss)
            return {
                "loss": self.total_loss_tracker.result(),
                "reconstruction_loss": self.reconstruction_loss_tracker.result(),
                "kl_loss": self.kl_loss_tracker.result(),
            }

    # keras.datasets.mnist.load_data() -> generated uint8 (n, 28, 28) images
    x_train, _ = class_images(np.random.default_rng(1), 192, (28, 28), 10)
    x_test, _ = class_images(np.random.default_rng(2), 64, (28, 28), 10)
    mnist_digits = np.concatenate([x_train, x_test], axis=0)
    mnist_digits = np.expand_dims(mnist_digits, -1).astype("float32") / 255

    vae = VAE(encoder, decoder)
    vae.compile(optimizer=keras.optimizers.Adam())
    history = vae.fit(mnist_digits, epochs=3, batch_size=64, verbose=0)  # 30 epochs of 128
    assert set(history.history) == {"loss", "reconstruction_loss", "kl_loss"}
    assert_trains(history.history["loss"])
    assert_trains(history.history["reconstruction_loss"])

    z_sample = np.array([[0.5, -0.5]])
    x_decoded = vae.decoder.predict(z_sample, verbose=0)
    assert x_decoded[0].reshape(28, 28).shape == (28, 28)
    z_mean, _, _ = vae.encoder.predict(mnist_digits[:10], verbose=0)
    assert z_mean.shape == (10, 2)


# -- nlp/text_classification_with_transformer.py --------------------------------------------
def test_text_classification_with_transformer():
    class TransformerBlock(layers.Layer):
        def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1):
            super().__init__()
            self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
            self.ffn = keras.Sequential(
                [
                    layers.Dense(ff_dim, activation="relu"),
                    layers.Dense(embed_dim),
                ]
            )
            self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
            self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
            self.dropout1 = layers.Dropout(rate)
            self.dropout2 = layers.Dropout(rate)

        def call(self, inputs):
            attn_output = self.att(inputs, inputs)
            attn_output = self.dropout1(attn_output)
            out1 = self.layernorm1(inputs + attn_output)
            ffn_output = self.ffn(out1)
            ffn_output = self.dropout2(ffn_output)
            return self.layernorm2(out1 + ffn_output)

    class TokenAndPositionEmbedding(layers.Layer):
        def __init__(self, maxlen, vocab_size, embed_dim):
            super().__init__()
            self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
            self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

        def call(self, x):
            maxlen = ops.shape(x)[-1]
            positions = ops.arange(start=0, stop=maxlen, step=1)
            positions = self.pos_emb(positions)
            x = self.token_emb(x)
            return x + positions

    vocab_size = 200  # 20000 in the example
    maxlen = 20  # 200 in the example
    # keras.datasets.imdb.load_data(num_words=vocab_size) -> generated lists of word ids of
    # varying length; a review is positive when it holds word 7
    rng = np.random.default_rng(3)

    def reviews(n):
        x = [list(rng.integers(10, vocab_size, rng.integers(5, 30))) for _ in range(n)]
        y = rng.integers(0, 2, n)
        for words, label in zip(x, y):
            if label:
                words[-1] = 7
        return x, y

    (x_train, y_train), (x_val, y_val) = reviews(256), reviews(64)
    x_train = keras.utils.pad_sequences(x_train, maxlen=maxlen)
    x_val = keras.utils.pad_sequences(x_val, maxlen=maxlen)
    assert x_train.shape == (256, maxlen)

    embed_dim = 32  # Embedding size for each token
    num_heads = 2  # Number of attention heads
    ff_dim = 32  # Hidden layer size in feed forward network inside transformer

    inputs = layers.Input(shape=(maxlen,))
    embedding_layer = TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)
    x = embedding_layer(inputs)
    transformer_block = TransformerBlock(embed_dim, num_heads, ff_dim)
    x = transformer_block(x)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dropout(0.1)(x)
    x = layers.Dense(20, activation="relu")(x)
    x = layers.Dropout(0.1)(x)
    outputs = layers.Dense(2, activation="softmax")(x)

    model = keras.Model(inputs=inputs, outputs=outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x_train, y_train, batch_size=32, epochs=3, validation_data=(x_val, y_val),
                        verbose=0)
    assert_trains(history.history["loss"])
    assert history.history["accuracy"][-1] > 0.6, history.history
    assert model.predict(x_val[:4], verbose=0).shape == (4, 2)


# -- keras_recipes/antirectifier.py ----------------------------------------------------------
def test_antirectifier_custom_layer():
    class Antirectifier(layers.Layer):
        def __init__(self, initializer="he_normal", **kwargs):
            super().__init__(**kwargs)
            self.initializer = keras.initializers.get(initializer)

        def build(self, input_shape):
            output_dim = input_shape[-1]
            self.kernel = self.add_weight(
                shape=(output_dim * 2, output_dim),
                initializer=self.initializer,
                name="kernel",
                trainable=True,
            )

        def call(self, inputs):
            inputs -= ops.mean(inputs, axis=-1, keepdims=True)
            pos = ops.relu(inputs)
            neg = ops.relu(-inputs)
            concatenated = ops.concatenate([pos, neg], axis=-1)
            mixed = ops.matmul(concatenated, self.kernel)
            return mixed

        def get_config(self):
            # Implement get_config to enable serialization. This is optional.
            base_config = super().get_config()
            config = {"initializer": keras.initializers.serialize(self.initializer)}
            return dict(list(base_config.items()) + list(config.items()))

    # keras.datasets.mnist.load_data() -> generated images
    x_train, y_train = class_images(np.random.default_rng(4), 256, (28, 28), 10)
    x_test, y_test = class_images(np.random.default_rng(5), 64, (28, 28), 10)
    x_train = x_train.reshape(-1, 784)
    x_test = x_test.reshape(-1, 784)
    x_train = x_train.astype("float32")
    x_test = x_test.astype("float32")
    x_train /= 255
    x_test /= 255

    model = keras.Sequential(
        [
            keras.Input(shape=(784,)),
            layers.Dense(64),  # 256 in the example
            Antirectifier(),
            layers.Dense(64),
            Antirectifier(),
            layers.Dropout(0.5),
            layers.Dense(10),
        ]
    )
    model.compile(
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        optimizer=keras.optimizers.RMSprop(),
        metrics=[keras.metrics.SparseCategoricalAccuracy()],
    )
    history = model.fit(x_train, y_train, batch_size=64, epochs=3, validation_split=0.15,
                        verbose=0)
    model.evaluate(x_test, y_test, verbose=0)
    assert_trains(history.history["loss"])
    config = model.layers[1].get_config()
    assert config["initializer"]["class_name"] == "HeNormal"
    assert Antirectifier.from_config(config).initializer.__class__.__name__ == "HeNormal"
