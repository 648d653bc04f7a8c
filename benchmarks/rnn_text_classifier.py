"""The "text classification with an RNN" tutorial's model: ``fit`` samples/s of minikeras
against TensorFlow (Keras 3 layers, in a process of its own), on the same padded sequences, and
the CPUs each process kept busy over the timed epochs (its CPU time over the wall time, median).

    python benchmarks/rnn_text_classifier.py --tf-python /work/tfvenv/bin/python
    python benchmarks/rnn_text_classifier.py --samples 64 --length 20 --batch 16 --epochs 1   # smoke run

The model: ``Embedding(1000, 64, mask_zero=True)``, ``Bidirectional(LSTM(64))``,
``Dense(64, relu)``, ``Dense(1)``; ``BinaryCrossentropy(from_logits=True)``, Adam(1e-4). The
data: ``--samples`` sequences of token ids 1..999 of random lengths (from 10 to ``--length``),
zero-padded at the end to ``--length`` (the mask skips the padding), and 0/1 labels, made by
NumPy from one seed in each process. Each framework runs one ``fit`` epoch first (trace and
compile: its time is the first call), one more untimed (minikeras's second ``fit`` traces its step
again), then ``--epochs`` timed epochs; the median epoch gives samples/s.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
DEFAULT_TF_PYTHON = os.environ.get("MINIKERAS_TF_PYTHON", "")


def data(args, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(min(10, args.length), args.length + 1, size=args.samples)
    x = rng.integers(1, 1000, size=(args.samples, args.length)).astype("int32")
    x[np.arange(args.length)[None, :] >= lengths[:, None]] = 0
    y = rng.integers(0, 2, size=(args.samples, 1)).astype("float32")
    return x, y


def build(keras):
    """The tutorial's model in ``keras`` (minikeras, or tf.keras)."""
    layers = keras.layers
    model = keras.Sequential([layers.Embedding(1000, 64, mask_zero=True), layers.Bidirectional(layers.LSTM(64)),
                              layers.Dense(64, activation="relu"), layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(1e-4), loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return model


def time_fit(model, args):
    x, y = data(args)
    start = time.perf_counter()
    model.fit(x, y, batch_size=args.batch, epochs=1, verbose=0, shuffle=False)
    first = time.perf_counter() - start
    model.fit(x, y, batch_size=args.batch, epochs=1, verbose=0, shuffle=False)  # minikeras compiles again here
    epochs, busy = [], []
    for _ in range(args.epochs):
        start, start_cpu = time.perf_counter(), time.process_time()
        model.fit(x, y, batch_size=args.batch, epochs=1, verbose=0, shuffle=False)
        epochs.append(time.perf_counter() - start)
        busy.append((time.process_time() - start_cpu) / epochs[-1])  # the CPUs the process kept busy
    epoch = statistics.median(epochs)
    return {"samples_per_s": args.samples / epoch, "epoch_s": epoch, "first_epoch_s": first,
            "cpus_busy": statistics.median(busy)}


def minikeras(args):
    import minikeras as mk
    mk.random.set_seed(0)
    return time_fit(build(mk), args)


def tf_child(args):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    tf.keras.utils.set_random_seed(0)
    return time_fit(build(tf.keras), args)


def tensorflow(args):
    python = args.tf_python or DEFAULT_TF_PYTHON or sys.executable
    command = [python, __file__, "--tf-child", "--samples", str(args.samples), "--length", str(args.length),
               "--batch", str(args.batch), "--epochs", str(args.epochs)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=2048)
    parser.add_argument("--length", type=int, default=200)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=3, help="timed epochs after the first (median)")
    parser.add_argument("--tf-python", default=None,
                        help="a Python with TensorFlow (default: $MINIKERAS_TF_PYTHON, else this interpreter)")
    parser.add_argument("--no-tf", action="store_true")
    parser.add_argument("--tf-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.tf_child:
        print(json.dumps(tf_child(args)))
        return
    from common import CpuSteal, cpu_model
    with CpuSteal() as steal:
        rows = {"minikeras fit": minikeras(args)}
        if not args.no_tf:
            rows["TensorFlow fit"] = tensorflow(args)
    print(f"Embedding(1000, 64, mask_zero) + Bidirectional(LSTM(64)) + Dense(64) + Dense(1), length {args.length}, "
          f"batch {args.batch}, {args.samples} samples")
    tf_rate = rows.get("TensorFlow fit", {}).get("samples_per_s")
    print(f"  {'contender':16s} {'samples/s':>10s} {'epoch s':>8s} {'first epoch s':>13s} {'vs TF':>6s} "
          f"{'CPUs busy':>9s}")
    for name, row in rows.items():
        if "error" in row:
            print(f"  {name:16s} unavailable: {row['error']}")
            continue
        vs_tf = f"{row['samples_per_s'] / tf_rate:6.2f}" if tf_rate else "     -"
        print(f"  {name:16s} {row['samples_per_s']:10.0f} {row['epoch_s']:8.2f} {row['first_epoch_s']:13.2f} {vs_tf} "
              f"{row['cpus_busy']:9.2f}")
    print(f"{cpu_model()}; {steal.describe()}")


if __name__ == "__main__":
    main()
