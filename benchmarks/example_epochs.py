"""Epoch times of the two recurrent examples' ``fit``: ``examples/time_series.py`` (the TensorFlow
tutorial "Time series forecasting": ``LSTM(32) -> Dense(1)`` on 24-hour windows of 6 features,
batch 32) and ``examples/text_generation.py`` (the tutorial "Text generation with an RNN":
``Embedding -> GRU(256, return_sequences, return_state) -> Dense(vocabulary)`` on 100
characters, batch 64), each built by the example's own functions on the example's data.

Each example's model runs one ``fit`` epoch first (its time: the first epoch, trace and compile
included), then ``--epochs`` timed epochs; the median gives the epoch time and ms per step.
The examples are imported from the tree this script is in and use only minikeras's public API,
while ``minikeras`` is imported from wherever Python finds it, so the same script times an
older tree (before/after):

    python benchmarks/example_epochs.py
    PYTHONPATH=/path/to/old/worktree python benchmarks/example_epochs.py    # the older minikeras
    python benchmarks/example_epochs.py --hours 1000 --chars 3000 --units 16 --epochs 1   # smoke run

Two processes are two machines on a shared host: run before and after in turn, several times,
and compare the ratios of runs next to each other.
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(HERE, "..", "examples"))


def time_epochs(model, x, y, batch, epochs, **fit_options):
    """(first epoch seconds, median of ``epochs`` further epochs in seconds)."""
    start = time.perf_counter()
    model.fit(x, y, batch_size=batch, epochs=1, verbose=0, **fit_options)
    first = time.perf_counter() - start
    times = []
    for _ in range(epochs):
        start = time.perf_counter()
        model.fit(x, y, batch_size=batch, epochs=1, verbose=0, **fit_options)
        times.append(time.perf_counter() - start)
    return first, statistics.median(times)


def time_series(args):
    import time_series as example

    import minikeras as mk
    mk.random.set_seed(args.seed)
    train, _, _ = example.split_and_normalize(example.make_series(args.hours, args.seed)[0])
    x, y = example.windows(train, 1, args.stride)
    model = example.lstm_model(1)
    model.compile(loss="mse", optimizer=mk.optimizers.Adam(1e-3), metrics=["mae"])
    return {"samples": len(x), "batch": 32,
            **dict(zip(("first_s", "epoch_s"), time_epochs(model, x, y, 32, args.epochs)))}


def text_generation(args):
    import text_generation as example

    import minikeras as mk
    mk.random.set_seed(args.seed)
    text = example.load_text()[:args.chars or None]
    vocabulary = example.Vocabulary(text)
    x, y = example.make_examples(vocabulary.encode(text), 100)
    model = example.CharModel(len(vocabulary), 64, args.units)
    model.compile(optimizer="adam", loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    return {"samples": len(x), "batch": 64,
            **dict(zip(("first_s", "epoch_s"), time_epochs(model, x, y, 64, args.epochs, shuffle=False)))}


EXAMPLES = {"time_series": time_series, "text_generation": text_generation}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", nargs="+", default=list(EXAMPLES), choices=list(EXAMPLES))
    parser.add_argument("--epochs", type=int, default=3, help="timed epochs after the first (median)")
    parser.add_argument("--hours", type=int, default=3 * 8766, help="time series: hours in the series (the example's)")
    parser.add_argument("--stride", type=int, default=1, help="time series: hours between two windows' starts")
    parser.add_argument("--chars", type=int, default=0, help="text generation: the first N characters (0: all)")
    parser.add_argument("--units", type=int, default=256, help="text generation: the GRU's units")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    from common import CpuSteal, cpu_model

    import minikeras as mk
    print(f"minikeras from {os.path.dirname(os.path.dirname(os.path.abspath(mk.__file__)))}")
    print(f"  {'example':16s} {'samples':>8s} {'batch':>5s} {'epoch s':>8s} {'ms/step':>8s} {'first epoch s':>13s}")
    rows = {}
    with CpuSteal() as steal:
        for name in args.examples:
            row = rows[name] = EXAMPLES[name](args)
            steps = -(-row["samples"] // row["batch"])
            print(f"  {name:16s} {row['samples']:8d} {row['batch']:5d} {row['epoch_s']:8.2f} "
                  f"{1e3 * row['epoch_s'] / steps:8.2f} {row['first_s']:13.2f}")
    print(f"{cpu_model()}; {steal.describe()}")
    return rows


if __name__ == "__main__":
    main()
