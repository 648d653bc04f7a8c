"""Text classification from a folder of text files: the TensorFlow tutorial "Basic text
classification", renamed ``tf.* -> mk.*``.

The tutorial downloads the IMDB reviews (aclImdb); this example writes a folder of the same layout
in the script (train/pos, train/neg, test/pos, test/neg): short synthetic reviews whose sentiment
shows in a few words among many neutral ones, with the HTML line breaks (``<br />``), capitals and
punctuation that the tutorial's custom standardization removes. Then, as in the tutorial:

1. ``mk.utils.text_dataset_from_directory`` loads it (a validation split with a seed);
2. a ``TextVectorization`` layer with a custom ``standardize`` (``mk.strings`` functions) is
   adapted to the training texts and maps them to padded sequences of token ids;
3. ``Embedding`` + ``GlobalAveragePooling1D`` + ``Dense(1)`` learns from the vectorized data;
4. the "export model" ``Sequential([vectorize_layer, model])`` takes raw strings: ``evaluate``
   on the raw test set and ``predict`` on new sentences. Its first layer runs on the host; the
   rest is the compiled program.

    python examples/text_classification.py
    python examples/text_classification.py --reviews 200 --epochs 3
"""
import argparse
import os
import re
import string
import tempfile

import numpy as np

import minikeras as mk
from minikeras import layers

POSITIVE = ["great", "wonderful", "excellent", "loved", "brilliant", "moving", "superb", "enjoyable", "beautiful",
            "fun", "masterpiece", "touching"]
NEGATIVE = ["awful", "boring", "terrible", "waste", "worst", "dull", "poor", "hated", "mess", "stupid",
            "disappointing", "predictable"]
NEUTRAL = ("the a an this that movie film story plot actor actress director scene scenes ending music camera "
           "character characters script was is were it and but or of in on with to for as at by from watched "
           "saw think thought felt really quite very some more most time year people man woman friend night "
           "first second last two three long short old new big small").split()

MAX_FEATURES = 10_000
SEQUENCE_LENGTH = 100  # the tutorial pads IMDB reviews to 250; these are shorter


def review(rng, positive):
    """One review: mostly neutral words, a few words of its sentiment, one of the other."""
    own, other = (POSITIVE, NEGATIVE) if positive else (NEGATIVE, POSITIVE)
    words = list(rng.choice(NEUTRAL, size=rng.integers(20, 60)))
    for _ in range(rng.integers(2, 5)):
        words.insert(rng.integers(len(words)), rng.choice(own))
    if rng.random() < 0.6:
        words.insert(rng.integers(len(words)), rng.choice(other))
    sentences, start = [], 0
    while start < len(words):
        end = start + int(rng.integers(6, 14))
        sentence = " ".join(words[start:end])
        sentences.append(sentence[:1].upper() + sentence[1:] + rng.choice([".", "!", "...", "?"]))
        start = end
    return " ".join(sentences).replace(". ", ".<br /><br />", 1)


def write_reviews(root, reviews_per_class, seed=0):
    """Writes ``root/{train,test}/{pos,neg}/<i>.txt`` (the aclImdb layout); returns ``root``."""
    rng = np.random.default_rng(seed)
    for split in ("train", "test"):
        for label in ("pos", "neg"):
            folder = os.path.join(root, split, label)
            os.makedirs(folder, exist_ok=True)
            for i in range(reviews_per_class):
                with open(os.path.join(folder, f"{i}_{label}.txt"), "w") as f:
                    f.write(review(rng, label == "pos"))
    return root


def custom_standardization(input_data):
    """The tutorial's: lower case, HTML line breaks to spaces, punctuation removed."""
    lowercase = mk.strings.lower(input_data)
    stripped_html = mk.strings.regex_replace(lowercase, "<br />", " ")
    return mk.strings.regex_replace(stripped_html, "[%s]" % re.escape(string.punctuation), "")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviews", type=int, default=1000, help="reviews per class and split")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--folder", default=None, help="where to write the reviews (a temporary folder by default)")
    args = parser.parse_args(argv)
    mk.utils.set_random_seed(0)
    root = write_reviews(args.folder or tempfile.mkdtemp(prefix="reviews_"), args.reviews)
    batch_size, seed = 32, 42

    raw_train_ds = mk.utils.text_dataset_from_directory(os.path.join(root, "train"), batch_size=batch_size,
                                                        validation_split=0.2, subset="training", seed=seed)
    raw_val_ds = mk.utils.text_dataset_from_directory(os.path.join(root, "train"), batch_size=batch_size,
                                                      validation_split=0.2, subset="validation", seed=seed)
    raw_test_ds = mk.utils.text_dataset_from_directory(os.path.join(root, "test"), batch_size=batch_size)
    print("Label 0 corresponds to", raw_train_ds.class_names[0], "and label 1 to", raw_train_ds.class_names[1])
    text_batch, label_batch = next(iter(raw_train_ds))
    print("Review:", text_batch.numpy()[0][:120], "... Label:", int(label_batch.numpy()[0]))

    vectorize_layer = layers.TextVectorization(standardize=custom_standardization, max_tokens=MAX_FEATURES,
                                               output_mode="int", output_sequence_length=SEQUENCE_LENGTH)
    train_text = raw_train_ds.map(lambda x, y: x)
    vectorize_layer.adapt(train_text)
    print("Vocabulary size:", vectorize_layer.vocabulary_size(),
          "- first tokens:", vectorize_layer.get_vocabulary()[:6])

    def vectorize_text(text, label):
        text = mk.expand_dims(text, -1)
        return vectorize_layer(text), label

    train_ds = raw_train_ds.map(vectorize_text).cache().prefetch(buffer_size=mk.data.AUTOTUNE)
    val_ds = raw_val_ds.map(vectorize_text).cache().prefetch(buffer_size=mk.data.AUTOTUNE)
    test_ds = raw_test_ds.map(vectorize_text).cache().prefetch(buffer_size=mk.data.AUTOTUNE)

    model = mk.Sequential([
        layers.Embedding(MAX_FEATURES, 16),
        layers.Dropout(0.2),
        layers.GlobalAveragePooling1D(),
        layers.Dropout(0.2),
        layers.Dense(1, activation="sigmoid")])
    # The tutorial trains logits with BinaryAccuracy(threshold=0.0); Keras 3 (and minikeras) take
    # thresholds in (0, 1) only, so this model ends with a sigmoid and uses the default 0.5.
    # The tutorial's 25,000 reviews make 625 steps an epoch; this folder makes 50, so Adam's step
    # size is 10x its default (0.001) to learn in as many epochs.
    model.compile(loss=mk.losses.BinaryCrossentropy(), optimizer=mk.optimizers.Adam(0.01),
                  metrics=[mk.metrics.BinaryAccuracy(threshold=0.5)])
    history = model.fit(train_ds, validation_data=val_ds, epochs=args.epochs, verbose=2)
    loss, accuracy = model.evaluate(test_ds, verbose=0)
    print(f"Test loss {loss:.4f}, test accuracy {accuracy:.4f}")

    export_model = mk.Sequential([vectorize_layer, model])  # the tutorial's, whose model already ends in a sigmoid
    export_model.compile(loss=mk.losses.BinaryCrossentropy(from_logits=False), optimizer="adam",
                         metrics=["accuracy"])
    _, export_accuracy = export_model.evaluate(raw_test_ds, verbose=0)
    print(f"Export model on the raw test texts: accuracy {export_accuracy:.4f}")
    examples = np.array(["The movie was great, a masterpiece!", "The movie was okay.",
                         "The movie was terrible, a waste of time..."])
    scores = export_model.predict(examples, verbose=0)[:, 0]
    for text, score in zip(examples, scores):
        print(f"  {score:.3f}  {text}")
    return history.history, accuracy, export_accuracy, scores


if __name__ == "__main__":
    main()
