"""The models ``keras_io_step.py`` times, written once in Keras 3's vocabulary against whichever
``keras`` module is passed in: ``from minikeras import keras`` in minikeras's worker, ``import
keras`` (on JAX or on TensorFlow) in Keras's. Nothing here imports a framework, so Keras's worker
never loads minikeras (whose import changes the process's malloc setting).

* ``vit``: keras.io's "Image classification with Vision Transformer" model at the example's
  sizes (CIFAR-100 shaped 32x32x3 inputs resized to 72, patches of 6, projection 64, 4 heads, 8
  transformer layers, head [2048, 1024], AdamW), its data augmentation inside the model;
* ``gpt``: keras.io's "Text generation with a miniature GPT" model at the example's sizes
  (vocabulary 20,000, length 80, embedding 256, 2 heads, feed-forward 256, Adam), the loss on the
  logits only; the causal mask as ``use_causal_mask=True`` (the example builds it with
  ``ops.tile`` over the batch size, which Keras 3 cannot trace in a functional model on a symbolic
  batch dimension; the mask is the same);
* ``mlp_dense`` and ``mlp_ops``: a 784-512-512-10 MLP on ``layers.Dense``, and the same with a
  Dense written as a custom layer with ``keras.ops.matmul`` + bias + activation (Keras's "making
  new layers" guide's ``Linear``), to show that a layer written with ``keras.ops`` compiles into
  the same program.

``build(kind, keras, batch_size, steps)`` returns ``(model, x, y)``: a compiled model and
``batch_size * steps`` generated samples (fixed seed; same shapes and dtypes as the examples'
data, which cannot be downloaded here).
"""
import numpy as np


def build(kind, keras, batch_size, steps):
    keras.utils.set_random_seed(7)
    n = batch_size * steps
    return {"vit": _vit, "gpt": _gpt, "mlp_dense": _mlp, "mlp_ops": _mlp}[kind](keras, n, kind)


def _vit(keras, n, kind):
    from_example = dict(num_classes=100, image_size=72, patch_size=6, projection_dim=64, num_heads=4,
                        transformer_layers=8, mlp_head_units=[2048, 1024])
    layers, ops = keras.layers, keras.ops
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (n, 32, 32, 3)).astype("uint8")
    y = rng.integers(0, from_example["num_classes"], (n, 1)).astype("int64")
    image_size, patch_size = from_example["image_size"], from_example["patch_size"]
    num_patches = (image_size // patch_size) ** 2
    projection_dim = from_example["projection_dim"]
    transformer_units = [projection_dim * 2, projection_dim]

    data_augmentation = keras.Sequential([
        layers.Normalization(),
        layers.Resizing(image_size, image_size),
        layers.RandomFlip("horizontal"),
        layers.RandomRotation(factor=0.02),
        layers.RandomZoom(height_factor=0.2, width_factor=0.2),
    ], name="data_augmentation")
    data_augmentation.layers[0].adapt(x[:1024])

    def mlp(h, hidden_units, dropout_rate):
        for units in hidden_units:
            h = layers.Dense(units, activation=keras.activations.gelu)(h)
            h = layers.Dropout(dropout_rate)(h)
        return h

    class Patches(layers.Layer):
        def __init__(self, patch_size):
            super().__init__()
            self.patch_size = patch_size

        def call(self, images):
            shape = ops.shape(images)
            patches = keras.ops.image.extract_patches(images, size=self.patch_size)
            return ops.reshape(patches, (shape[0], (shape[1] // self.patch_size) * (shape[2] // self.patch_size),
                                         self.patch_size * self.patch_size * shape[3]))

    class PatchEncoder(layers.Layer):
        def __init__(self, num_patches, projection_dim):
            super().__init__()
            self.num_patches = num_patches
            self.projection = layers.Dense(units=projection_dim)
            self.position_embedding = layers.Embedding(input_dim=num_patches, output_dim=projection_dim)

        def call(self, patch):
            positions = ops.expand_dims(ops.arange(start=0, stop=self.num_patches, step=1), axis=0)
            return self.projection(patch) + self.position_embedding(positions)

    inputs = keras.Input(shape=(32, 32, 3))
    encoded = PatchEncoder(num_patches, projection_dim)(Patches(patch_size)(data_augmentation(inputs)))
    for _ in range(from_example["transformer_layers"]):
        x1 = layers.LayerNormalization(epsilon=1e-6)(encoded)
        attention = layers.MultiHeadAttention(num_heads=from_example["num_heads"], key_dim=projection_dim,
                                              dropout=0.1)(x1, x1)
        x2 = layers.Add()([attention, encoded])
        x3 = mlp(layers.LayerNormalization(epsilon=1e-6)(x2), hidden_units=transformer_units, dropout_rate=0.1)
        encoded = layers.Add()([x3, x2])
    representation = layers.Dropout(0.5)(layers.Flatten()(layers.LayerNormalization(epsilon=1e-6)(encoded)))
    logits = layers.Dense(from_example["num_classes"])(mlp(representation, from_example["mlp_head_units"], 0.5))
    model = keras.Model(inputs=inputs, outputs=logits)
    model.compile(optimizer=keras.optimizers.AdamW(learning_rate=0.001, weight_decay=0.0001),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")])
    return model, x.astype("float32"), y


def _gpt(keras, n, kind):
    vocab_size, maxlen, embed_dim, num_heads, feed_forward_dim = 20000, 80, 256, 2, 256
    layers, ops = keras.layers, keras.ops

    class TransformerBlock(layers.Layer):
        def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1):
            super().__init__()
            self.att = layers.MultiHeadAttention(num_heads, embed_dim)
            self.ffn = keras.Sequential([layers.Dense(ff_dim, activation="relu"), layers.Dense(embed_dim)])
            self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
            self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
            self.dropout1 = layers.Dropout(rate)
            self.dropout2 = layers.Dropout(rate)

        def call(self, inputs):
            attention_output = self.dropout1(self.att(inputs, inputs, use_causal_mask=True))
            out1 = self.layernorm1(inputs + attention_output)
            return self.layernorm2(out1 + self.dropout2(self.ffn(out1)))

    class TokenAndPositionEmbedding(layers.Layer):
        def __init__(self, maxlen, vocab_size, embed_dim):
            super().__init__()
            self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
            self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

        def call(self, x):
            positions = self.pos_emb(ops.arange(0, ops.shape(x)[-1], 1))
            return self.token_emb(x) + positions

    inputs = layers.Input(shape=(maxlen,), dtype="int32")
    h = TransformerBlock(embed_dim, num_heads, feed_forward_dim)(
        TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)(inputs))
    outputs = layers.Dense(vocab_size)(h)
    model = keras.Model(inputs=inputs, outputs=[outputs, h])
    model.compile("adam", loss=[keras.losses.SparseCategoricalCrossentropy(from_logits=True), None])
    rng = np.random.default_rng(0)
    tokens = rng.integers(1, vocab_size, (n, maxlen + 1)).astype("int32")
    return model, tokens[:, :-1], tokens[:, 1:]


def _mlp(keras, n, kind):
    layers, ops = keras.layers, keras.ops

    class Linear(layers.Layer):
        """The "making new layers" guide's Dense: ``activation(x @ w + b)`` with ``keras.ops``."""

        def __init__(self, units, activation=None):
            super().__init__()
            self.units = units
            self.activation = keras.activations.get(activation)

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="glorot_uniform",
                                     trainable=True)
            self.b = self.add_weight(shape=(self.units,), initializer="zeros", trainable=True)

        def call(self, inputs):
            return self.activation(ops.matmul(inputs, self.w) + self.b)

    dense = Linear if kind == "mlp_ops" else layers.Dense
    model = keras.Sequential([keras.Input(shape=(784,)), dense(512, activation="relu"),
                              dense(512, activation="relu"), dense(10)])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(0)
    return model, rng.random((n, 784), dtype="float32"), rng.integers(0, 10, (n,)).astype("int32")
