"""Character-level text generation with a GRU, after the TensorFlow tutorial "Text generation
with an RNN", renamed ``tf.keras.X -> mk.X``.

The tutorial trains on Shakespeare, which cannot be downloaded here; the text is shipped with
Python: its license (``LICENSE.txt`` beside the standard library) followed by the help texts of
``pydoc`` (``pydoc_data.topics``), about 480,000 characters. Characters become ids with a
Python dict (the tutorial's ``StringLookup``). The model reads 100 characters and predicts
each next one: ``Embedding -> GRU(return_sequences, return_state) -> Dense(vocabulary)``,
trained with ``fit`` on sparse categorical cross-entropy of logits. Generation is the
tutorial's ``OneStep`` model: one character at a time, carrying the GRU's state from call to
call, sampled from the logits divided by a temperature, compiled with ``mk.function``.

    python examples/text_generation.py
    python examples/text_generation.py --chars 20000 --epochs 1 --units 128     # a quick run
"""
import argparse
import os
import time

import numpy as np

import minikeras as mk
from minikeras import layers


def load_text():
    """Python's license (where the installation has it) and the pydoc topics, as one text."""
    from pydoc_data.topics import topics
    parts = []
    path = os.path.join(os.path.dirname(os.__file__), "LICENSE.txt")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            parts.append(f.read())
    parts.extend(topics[k] for k in sorted(topics))
    return "\n".join(parts)


class Vocabulary:
    """Characters <-> ids with a dict; id 0 is kept for characters not in the text ('[UNK]')."""

    def __init__(self, text):
        self.chars = ["[UNK]"] + sorted(set(text))
        self.ids = {c: i for i, c in enumerate(self.chars)}

    def __len__(self):
        return len(self.chars)

    def encode(self, text):
        return np.array([self.ids.get(c, 0) for c in text], dtype="int32")

    def decode(self, ids):
        return "".join(self.chars[i] for i in np.asarray(ids).reshape(-1))


def make_examples(ids, seq_length):
    """(inputs, targets): chunks of ``seq_length + 1`` characters, targets shifted by one."""
    n = (len(ids) - 1) // seq_length
    chunks = ids[:n * seq_length + 1]
    inputs = np.stack([chunks[i * seq_length:(i + 1) * seq_length] for i in range(n)])
    targets = np.stack([chunks[i * seq_length + 1:(i + 1) * seq_length + 1] for i in range(n)])
    return inputs, targets


class CharModel(mk.Model):
    """The tutorial's model: it returns logits and, on request, the GRU's final state."""

    def __init__(self, vocab_size, embedding_dim, rnn_units):
        super().__init__()
        self.embedding = layers.Embedding(vocab_size, embedding_dim)
        self.gru = layers.GRU(rnn_units, return_sequences=True, return_state=True)
        self.dense = layers.Dense(vocab_size)

    def call(self, inputs, states=None, return_state=False, training=False):
        x = self.embedding(inputs, training=training)
        x, states = self.gru(x, initial_state=states, training=training)
        x = self.dense(x, training=training)
        return (x, states) if return_state else x


class OneStep(mk.Module):
    """Generates one character per call from the last one and the GRU's state; the unknown
    id is never drawn."""

    def __init__(self, model, vocabulary, temperature=1.0):
        super().__init__()
        self.model, self.vocabulary, self.temperature = model, vocabulary, temperature
        self.prediction_mask = np.zeros((1, len(vocabulary)), "float32")
        self.prediction_mask[0, 0] = -np.inf

    @mk.function
    def generate_one_step(self, input_ids, states):
        logits, states = self.model(input_ids, states=states, return_state=True)
        logits = logits[:, -1, :] / self.temperature + self.prediction_mask
        return mk.squeeze(mk.random.categorical(logits, num_samples=1), axis=-1), states

    def generate(self, start, length):
        states = mk.zeros((1, self.model.gru.units))
        ids = mk.constant(self.vocabulary.encode(start)[None, :])
        out = [start]
        for _ in range(length):
            next_id, states = self.generate_one_step(ids, states)
            ids = mk.reshape(mk.cast(next_id, "int32"), (1, 1))
            out.append(self.vocabulary.decode(ids.numpy()))
        return "".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chars", type=int, default=0, help="train on the first N characters (0: all)")
    parser.add_argument("--seq-length", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--units", type=int, default=256)
    parser.add_argument("--embedding-dim", type=int, default=64)
    parser.add_argument("--generate", type=int, default=400, help="characters to generate")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    mk.random.set_seed(args.seed)
    text = load_text()
    if args.chars:
        text = text[:args.chars]
    vocabulary = Vocabulary(text)
    inputs, targets = make_examples(vocabulary.encode(text), args.seq_length)
    print(f"{len(text)} characters, {len(vocabulary)} distinct, {len(inputs)} sequences of {args.seq_length}")
    model = CharModel(len(vocabulary), args.embedding_dim, args.units)
    model.compile(optimizer="adam", loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(inputs, targets, batch_size=64, epochs=args.epochs, shuffle=True, verbose=2)
    one_step = OneStep(model, vocabulary)
    start = time.perf_counter()
    sample = one_step.generate("Python ", args.generate)
    seconds = time.perf_counter() - start
    print(sample)
    print(f"\n{args.generate} characters in {seconds:.2f} s ({1e3 * seconds / max(args.generate, 1):.2f} ms each)")
    return history.history, sample


if __name__ == "__main__":
    main()
