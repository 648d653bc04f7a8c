"""TextVectorization: ``adapt`` and vectorizing a corpus, minikeras against TensorFlow / Keras 3.

The corpus is ``--docs`` synthetic reviews of ~``--words`` words each (IMDB's training set has
25,000 reviews of ~230 words), with capitals, punctuation and ``<br />`` tags, drawn from a
Zipf-like vocabulary of ``--vocabulary`` words. Both sides get the same documents as a batched
dataset of strings and run the same layer: ``TextVectorization(max_tokens=10_000,
output_sequence_length=250)`` with the default standardization, then

- adapt: ``layer.adapt(dataset)`` (one pass: standardize, split, count the tokens);
- vectorize: every batch through the adapted layer (ids, padded to 250).

Each contender runs in a process of its own (``--only mk`` / ``--only tf``), so neither pays for
the other's threads or memory; the time of each phase is the median of ``--repeats`` runs after
a warm-up one. The vocabularies are compared afterwards (they must be equal: same counts, same
tie-breaking), and so are the first batch's ids.

    python benchmarks/text_vectorization.py                      # 25,000 docs of ~230 words
    python benchmarks/text_vectorization.py --docs 500 --words 50 --repeats 1   # a smoke run
    python benchmarks/text_vectorization.py --tf-python /path/to/tf/bin/python  # TF in another env
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

MAX_TOKENS = 10_000
SEQUENCE_LENGTH = 250
BATCH = 32


def corpus(docs, words, vocabulary, seed=0):
    """``docs`` strings of about ``words`` words (Zipf-distributed word ids, some punctuation)."""
    rng = np.random.default_rng(seed)
    lexicon = np.array([f"w{i}" for i in range(vocabulary)])
    ranks = np.arange(1, vocabulary + 1)
    p = 1.0 / ranks
    p /= p.sum()
    texts = []
    for _ in range(docs):
        n = int(rng.integers(words // 2, words * 3 // 2 + 1))
        tokens = lexicon[rng.choice(vocabulary, size=n, p=p)]
        text = " ".join(tokens)
        texts.append(text.capitalize().replace(" w1 ", ", W1 ").replace(" w2 ", ". w2! ") + ".<br /><br />")
    return np.array(texts)


def _timed(run, repeats):
    run()  # warm-up (compiles what the contender compiles, fills caches)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run_minikeras(texts, repeats):
    import minikeras as mk
    ds = mk.data.Dataset.from_tensor_slices(texts).batch(BATCH)
    layer = mk.layers.TextVectorization(max_tokens=MAX_TOKENS, output_sequence_length=SEQUENCE_LENGTH)
    adapt = _timed(lambda: layer.adapt(ds), repeats)
    batches = [b for b in ds]

    def vectorize():
        for batch in batches:
            layer(batch)
    vectorize_time = _timed(vectorize, repeats)
    return {"adapt": adapt, "vectorize": vectorize_time, "vocabulary": layer.get_vocabulary(),
            "first": np.asarray(layer(batches[0]).numpy()).tolist()}


def run_tensorflow(texts, repeats):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    ds = tf.data.Dataset.from_tensor_slices(texts).batch(BATCH)
    layer = tf.keras.layers.TextVectorization(max_tokens=MAX_TOKENS, output_sequence_length=SEQUENCE_LENGTH)
    adapt = _timed(lambda: layer.adapt(ds), repeats)
    batches = [b for b in ds]

    def vectorize():
        for batch in batches:
            layer(batch)
    vectorize_time = _timed(vectorize, repeats)
    return {"adapt": adapt, "vectorize": vectorize_time, "vocabulary": [str(v) for v in layer.get_vocabulary()],
            "first": np.asarray(layer(batches[0])).tolist()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=25_000)
    parser.add_argument("--words", type=int, default=230)
    parser.add_argument("--vocabulary", type=int, default=30_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", choices=("mk", "tf"), help="run one contender in this process (JSON out)")
    parser.add_argument("--tf-python", default=sys.executable,
                        help="the Python that has TensorFlow, if not this one (the TF process imports no minikeras)")
    args = parser.parse_args(argv)
    if args.only:
        texts = corpus(args.docs, args.words, args.vocabulary)
        result = (run_minikeras if args.only == "mk" else run_tensorflow)(texts, args.repeats)
        print(json.dumps(result))
        return result
    results = {}
    for who in ("mk", "tf"):
        python = args.tf_python if who == "tf" else sys.executable
        command = [python, __file__, "--only", who, "--docs", str(args.docs), "--words", str(args.words),
                   "--vocabulary", str(args.vocabulary), "--repeats", str(args.repeats)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            print(f"{who}: failed\n{done.stderr[-2000:]}")
            continue
        results[who] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"{args.docs} documents of ~{args.words} words, batches of {BATCH}, median of {args.repeats}")
    print(f"{'':12s}{'adapt (s)':>12s}{'vectorize (s)':>16s}")
    for who, name in (("mk", "minikeras"), ("tf", "TensorFlow")):
        if who in results:
            print(f"{name:12s}{results[who]['adapt']:12.3f}{results[who]['vectorize']:16.3f}")
    if len(results) == 2:
        same_vocabulary = results["mk"]["vocabulary"] == results["tf"]["vocabulary"]
        same_ids = results["mk"]["first"] == results["tf"]["first"]
        print(f"same vocabulary: {same_vocabulary}; same ids for the first batch: {same_ids}")
        for phase in ("adapt", "vectorize"):
            print(f"{phase}: minikeras takes {results['mk'][phase] / results['tf'][phase]:.2f}x TensorFlow's time")
    return results


if __name__ == "__main__":
    main()
