"""The functional API: a two-input, two-output model trained with ``fit``.

After the Keras guide "The Functional API" (its ticket-triage model): a support ticket's
title (a sequence of word ids) and its tags (a multi-hot vector) go in; a priority score
(the probability that the ticket is urgent) and a department (one of 4) come out. The two inputs are
merged with ``concatenate``; the two outputs have their own loss, loss weight and metric,
given as dicts keyed by the output layers' names. The data are synthetic: a ticket is urgent
when its title holds one of the "urgent" words, and its department follows its tags.

More epochs only overfit: the titles are random words, which the embedding soon memorizes
(the validation department accuracy falls while the training one rises).

    python examples/functional_api.py
    python examples/functional_api.py --epochs 2 --samples 512
"""
import argparse

import numpy as np

import minikeras as mk
from minikeras import layers

NUM_WORDS = 1000       # the title vocabulary
NUM_TAGS = 12          # tags 0-2 belong to department 0, 3-5 to department 1, ...
NUM_DEPARTMENTS = 4
TITLE_LENGTH = 10
URGENT_WORDS = 20      # word ids below this make a ticket urgent


def make_data(n, seed=0):
    """``({"title", "tags"}, {"priority", "department"})`` for ``n`` synthetic tickets."""
    rng = np.random.default_rng(seed)
    title = rng.integers(URGENT_WORDS, NUM_WORDS, size=(n, TITLE_LENGTH))
    urgent = rng.random(n) < 0.5
    title[urgent, rng.integers(0, TITLE_LENGTH, urgent.sum())] = rng.integers(0, URGENT_WORDS, urgent.sum())
    department = rng.integers(0, NUM_DEPARTMENTS, n)
    tags = (rng.random((n, NUM_TAGS)) < 0.05).astype("float32")
    per_department = NUM_TAGS // NUM_DEPARTMENTS
    tags[np.arange(n), department * per_department + rng.integers(0, per_department, n)] = 1.0
    inputs = {"title": title.astype("int32"), "tags": tags}
    targets = {"priority": urgent.astype("float32")[:, None],
               "department": np.eye(NUM_DEPARTMENTS, dtype="float32")[department]}
    return inputs, targets


def build_model():
    """Two inputs (title, tags), two outputs (priority, department)."""
    title_input = mk.Input(shape=(None,), dtype="int32", name="title")  # titles of any length
    tags_input = mk.Input(shape=(NUM_TAGS,), name="tags")
    title_features = layers.Embedding(NUM_WORDS, 32)(title_input)
    title_features = layers.GlobalAveragePooling1D()(title_features)
    x = layers.concatenate([title_features, tags_input])
    x = layers.Dense(32, activation="relu")(x)
    priority = layers.Dense(1, activation="sigmoid", name="priority")(x)
    department = layers.Dense(NUM_DEPARTMENTS, activation="softmax", name="department")(x)
    return mk.Model(inputs=[title_input, tags_input], outputs={"priority": priority, "department": department},
                    name="ticket_triage")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--samples", type=int, default=4096)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args(argv)
    mk.random.set_seed(0)
    model = build_model()
    model.summary()
    model.compile(
        optimizer=mk.optimizers.Adam(1e-2),
        loss={"priority": "binary_crossentropy", "department": "categorical_crossentropy"},
        loss_weights={"priority": 1.0, "department": 0.5},
        metrics={"priority": ["accuracy"], "department": ["accuracy"]},
    )
    x, y = make_data(args.samples)
    history = model.fit(x, y, epochs=args.epochs, batch_size=args.batch_size, validation_split=0.2, verbose=2)
    x_test, y_test = make_data(1024, seed=1)
    results = model.evaluate(x_test, y_test, verbose=0, return_dict=True)
    print("test: " + ", ".join(f"{name} {value:.4f}" for name, value in results.items()))
    return history.history, results


if __name__ == "__main__":
    main()
