"""A small Transformer learns to reverse sequences (the TensorFlow tutorial's model, renamed).

After the tutorial *Neural machine translation with a Transformer and Keras*
(tensorflow/text docs/tutorials/transformer.ipynb), with ``tf.keras.X -> mk.X``: an encoder and a
decoder of ``MultiHeadAttention`` + feed-forward blocks (post-LayerNorm residuals), sinusoidal
positional encodings, the warm-up learning-rate schedule, Adam(0.9, 0.98, 1e-9), and the
masked loss and accuracy. The translation data is replaced by a task that needs attention: the
output is the input sequence reversed (token ids 3..12, lengths 3..10, 0 pads).

Masks: padding masks from the token ids (``attention_mask``, shape (batch, 1, source)) in every
attention layer, and ``use_causal_mask=True`` in the decoder's self-attention; the loss and the
accuracy count the target tokens only (``label != 0``).

    python examples/transformer.py                 # the full run (>= 99% masked token accuracy)
    python examples/transformer.py --quick         # a short run (the tests)
"""
import argparse
import math
import os
import time

import numpy as np

import minikeras as mk
from minikeras import layers

PAD, START, END = 0, 1, 2
FIRST_SYMBOL, VOCAB = 3, 13  # symbols 3..12
MIN_LENGTH, MAX_LENGTH = 3, 10


# -- the data ------------------------------------------------------------------------------
def make_data(n, seed=0):
    """``(source, decoder_input, labels)``: ``source`` a padded sequence of symbols,
    ``labels`` the sequence reversed then END, ``decoder_input`` START then the reversed sequence
    (the labels shifted right: teacher forcing). All int32, 0 where padded."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(MIN_LENGTH, MAX_LENGTH + 1, size=n)
    source = np.zeros((n, MAX_LENGTH), np.int32)
    decoder_input = np.zeros((n, MAX_LENGTH + 1), np.int32)
    labels = np.zeros((n, MAX_LENGTH + 1), np.int32)
    for i, length in enumerate(lengths):
        symbols = rng.integers(FIRST_SYMBOL, VOCAB, size=length)
        source[i, :length] = symbols
        decoder_input[i, 0] = START
        decoder_input[i, 1:length + 1] = symbols[::-1]
        labels[i, :length] = symbols[::-1]
        labels[i, length] = END
    return source, decoder_input, labels


# -- the model (the tutorial's, with explicit padding masks) -------------------------------
def positional_encoding(length, depth):
    """The sinusoidal encoding, (length, depth): sines in the first half of the channels,
    cosines in the second (the tutorial's layout)."""
    half = depth / 2
    positions = np.arange(length)[:, None]
    rates = 1 / (10000 ** (np.arange(half)[None, :] / half))
    angles = positions * rates
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=-1).astype(np.float32)


class PositionalEmbedding(layers.Layer):
    def __init__(self, vocab_size, d_model, max_length=64, **kwargs):
        super().__init__(**kwargs)
        self.d_model = d_model
        self.embedding = layers.Embedding(vocab_size, d_model, mask_zero=True)
        self.pos_encoding = positional_encoding(max_length, d_model)

    def call(self, x):
        length = x.shape[1]
        x = self.embedding(x) * math.sqrt(self.d_model)  # the scale keeps the embeddings above the encoding
        return x + self.pos_encoding[None, :length, :]


class FeedForward(layers.Layer):
    def __init__(self, d_model, dff, dropout_rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.dense1 = layers.Dense(dff, activation="relu")
        self.dense2 = layers.Dense(d_model)
        self.dropout = layers.Dropout(dropout_rate)
        self.add = layers.Add()
        self.layer_norm = layers.LayerNormalization()

    def call(self, x):
        return self.layer_norm(self.add([x, self.dropout(self.dense2(self.dense1(x)))]))


class EncoderLayer(layers.Layer):
    def __init__(self, d_model, num_heads, dff, dropout_rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.self_attention = layers.MultiHeadAttention(num_heads, d_model // num_heads, dropout=dropout_rate)
        self.add = layers.Add()
        self.layer_norm = layers.LayerNormalization()
        self.ffn = FeedForward(d_model, dff, dropout_rate)

    def call(self, x, padding_mask=None):
        attended = self.self_attention(query=x, value=x, key=x, attention_mask=padding_mask)
        return self.ffn(self.layer_norm(self.add([x, attended])))


class DecoderLayer(layers.Layer):
    def __init__(self, d_model, num_heads, dff, dropout_rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.causal_self_attention = layers.MultiHeadAttention(num_heads, d_model // num_heads, dropout=dropout_rate)
        self.cross_attention = layers.MultiHeadAttention(num_heads, d_model // num_heads, dropout=dropout_rate)
        self.add1, self.add2 = layers.Add(), layers.Add()
        self.norm1, self.norm2 = layers.LayerNormalization(), layers.LayerNormalization()
        self.ffn = FeedForward(d_model, dff, dropout_rate)

    def call(self, x, context, target_mask=None, source_mask=None, return_scores=False):
        attended = self.causal_self_attention(query=x, value=x, key=x, attention_mask=target_mask,
                                              use_causal_mask=True)
        x = self.norm1(self.add1([x, attended]))
        attended, scores = self.cross_attention(query=x, value=context, key=context, attention_mask=source_mask,
                                                return_attention_scores=True)
        x = self.ffn(self.norm2(self.add2([x, attended])))
        return (x, scores) if return_scores else x


class Transformer(mk.Model):
    """``model((source, decoder_input))`` -> logits (batch, target length, vocab)."""

    def __init__(self, num_layers=2, d_model=64, num_heads=4, dff=128, vocab_size=VOCAB, dropout_rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.source_embedding = PositionalEmbedding(vocab_size, d_model)
        self.target_embedding = PositionalEmbedding(vocab_size, d_model)
        self.encoder_layers = [EncoderLayer(d_model, num_heads, dff, dropout_rate) for _ in range(num_layers)]
        self.decoder_layers = [DecoderLayer(d_model, num_heads, dff, dropout_rate) for _ in range(num_layers)]
        self.dropout = layers.Dropout(dropout_rate)
        self.final_layer = layers.Dense(vocab_size)

    def call(self, inputs, training=None):
        return self.run(inputs)[0]

    def run(self, inputs):
        """The logits and the last decoder layer's cross-attention weights (batch, heads, target, source)."""
        source, target = inputs
        source_mask = mk.expand_dims(mk.not_equal(source, PAD), 1)  # (batch, 1, source): attend to tokens only
        target_mask = mk.expand_dims(mk.not_equal(target, PAD), 1)
        context = self.dropout(self.source_embedding(source))
        for layer in self.encoder_layers:
            context = layer(context, padding_mask=source_mask)
        x = self.dropout(self.target_embedding(target))
        scores = None
        for layer in self.decoder_layers:
            x, scores = layer(x, context, target_mask=target_mask, source_mask=source_mask, return_scores=True)
        return self.final_layer(x), scores


class CustomSchedule(mk.optimizers.schedules.LearningRateSchedule):
    """The tutorial's: ``d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)``."""

    def __init__(self, d_model, warmup_steps=4000):
        self.d_model = d_model
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        step = mk.cast(step, "float32") + 1.0  # the tutorial's step counts from 1 (Keras 3's iterations from 0)
        return mk.math.rsqrt(float(self.d_model)) * mk.minimum(mk.math.rsqrt(step), step * self.warmup_steps ** -1.5)

    def get_config(self):
        return {"d_model": self.d_model, "warmup_steps": self.warmup_steps}


def masked_loss(label, pred):
    mask = mk.not_equal(label, PAD)
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")(label, pred)
    mask = mk.cast(mask, loss.dtype)
    return mk.reduce_sum(loss * mask) / mk.reduce_sum(mask)


def masked_accuracy(label, pred):
    pred = mk.argmax(pred, axis=2)
    label = mk.cast(label, pred.dtype)
    match = mk.math.logical_and(mk.equal(label, pred), mk.not_equal(label, PAD))
    return mk.reduce_sum(mk.cast(match, "float32")) / mk.reduce_sum(mk.cast(mk.not_equal(label, PAD), "float32"))


def token_accuracy(model, source, decoder_input, labels, batch_size=500):
    """The share of target tokens (labels != 0) predicted right, with teacher forcing, over all of them."""
    right = total = 0
    for start in range(0, len(source), batch_size):
        part = slice(start, start + batch_size)
        predicted = np.argmax(model.predict_on_batch((source[part], decoder_input[part])), axis=-1)
        keep = labels[part] != PAD
        right += int(np.sum((predicted == labels[part]) & keep))
        total += int(np.sum(keep))
    return right / total


def reverse(model, source):
    """Greedy decoding, one token per step (the tutorial's Translator), for a batch of sources."""
    output = np.zeros((len(source), MAX_LENGTH + 2), np.int32)  # START, then up to MAX_LENGTH tokens and END
    output[:, 0] = START
    step = mk.function(lambda s, t: model((s, t), training=False))
    for i in range(MAX_LENGTH + 1):
        logits = step(source, output[:, :MAX_LENGTH + 1]).numpy()
        output[:, i + 1] = np.argmax(logits[:, i], axis=-1)
    return output[:, 1:]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", default=os.environ.get("MINIKERAS_QUICK") == "1",
                        help="a short run (the tests)")
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--samples", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--warmup-steps", type=int, default=None)
    parser.add_argument("--layers", type=int, default=None, help="encoder and decoder layers (default 2; quick: 1)")
    parser.add_argument("--figure", default=None, help="where to save the attention map (a .png)")
    return parser.parse_args(argv)


def build(warmup_steps, seed=0, **sizes):
    mk.random.set_seed(seed)
    model = Transformer(**sizes)
    d_model = sizes.get("d_model", 64)
    optimizer = mk.optimizers.Adam(CustomSchedule(d_model, warmup_steps), beta_1=0.9, beta_2=0.98, epsilon=1e-9)
    model.compile(optimizer=optimizer, loss=masked_loss, metrics=[masked_accuracy])
    return model


def main(argv=None, log=print):
    args = parse_args(argv)
    epochs = args.epochs or (2 if args.quick else 12)
    samples = args.samples or (1024 if args.quick else 16384)
    warmup = args.warmup_steps or (50 if args.quick else 1000)
    train, test = make_data(samples, seed=0), make_data(1000, seed=1)
    model = build(warmup, num_layers=args.layers or (1 if args.quick else 2))
    batches = mk.data.Dataset.from_tensor_slices(((train[0], train[1]), train[2])).shuffle(samples, seed=0)
    log(f"Training on {samples} sequences, {epochs} epochs of {math.ceil(samples / args.batch_size)} steps")
    start = time.perf_counter()
    report = mk.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: log(
        f"epoch {epoch + 1}: loss {logs['loss']:.4f}, masked accuracy {logs['masked_accuracy']:.4f} "
        f"({time.perf_counter() - start:.0f} s)"))
    history = model.fit(batches.batch(args.batch_size), epochs=epochs, verbose=0, callbacks=[report])
    log(f"trained in {time.perf_counter() - start:.1f} s")
    accuracy = token_accuracy(model, *test)
    reversed_ = reverse(model, test[0][:200])
    lengths = np.sum(test[0][:200] != PAD, axis=1)
    exact = np.mean([np.array_equal(reversed_[i, :n + 1], test[2][i, :n + 1]) for i, n in enumerate(lengths)])
    log(f"masked token accuracy on 1000 test sequences: {accuracy:.4f}; greedy decoding reverses {exact:.1%} of 200")
    _, scores = mk.function(model.run)((test[0][:1], test[1][:1]))
    if args.figure:
        plot_attention(test[0][0], test[2][0], scores.numpy()[0], args.figure)
    return {"history": history.history, "token_accuracy": accuracy, "exact": exact, "scores": scores.numpy()[0],
            "model": model, "test": test}


def plot_attention(source, labels, scores, path=None):
    """The cross-attention weights of each head (target token vs source token)."""
    import matplotlib.pyplot as plt

    n_source, n_target = int(np.sum(source != PAD)), int(np.sum(labels != PAD))
    names = {START: "<s>", END: "</s>"}
    fig, axes = plt.subplots(1, scores.shape[0], figsize=(3 * scores.shape[0], 3))
    for head, ax in enumerate(np.atleast_1d(axes)):
        ax.matshow(scores[head, :n_target, :n_source], cmap="viridis")
        ax.set_xticks(range(n_source), [str(t) for t in source[:n_source]])
        ax.set_yticks(range(n_target), [names.get(int(t), str(t)) for t in labels[:n_target]])
        ax.set_title(f"head {head + 1}")
    fig.tight_layout()
    if path:
        fig.savefig(path, dpi=60)
    return fig


if __name__ == "__main__":
    main()
