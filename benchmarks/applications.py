"""mk.applications' speed: MobileNetV2 and ResNet50 at 224x224, inference at batch 32
(``predict_on_batch``) and one training step at batch 16 (``train_on_batch``, SGD with momentum),
minikeras against Keras 3 on JAX and TensorFlow 2.21 (Keras 3 on its TensorFlow backend), each in a
process of its own (``applications_worker.py``) so that TensorFlow keeps its default allocator;
timed in turn, in interleaved rounds.

Each row: images/s over ``--steps`` batches (median of ``--rounds``), the first call (compile
included) and the ratio to minikeras's row. Keras on JAX runs from ``--keras-python``
(``$MINIKERAS_KERAS_PYTHON``), TensorFlow from ``--tf-python`` (``$MINIKERAS_TF_PYTHON``): Pythons
with ``keras`` and ``jax`` / ``tensorflow`` installed, never minikeras's dependencies; '' leaves
a row out. Weights are random (``weights=None``): the speed does not depend on them.

    python benchmarks/applications.py --keras-python tfvenv/bin/python --tf-python tfvenv/bin/python
    python benchmarks/applications.py --models ResNet50 --phases train --rounds 5
    python benchmarks/applications.py --quick      # 32x32, batch 2, 1 step, 1 round: checks it runs
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import CpuSteal, cpu_model, print_busy, print_rates, time_workers  # noqa: E402

DEFAULT_BATCH = {"predict": 32, "train": 16}


def contenders(keras_python, tf_python):
    """(row name, python, framework, env to add)."""
    rows = [("minikeras", sys.executable, "minikeras", None)]
    if keras_python:
        rows.append(("keras-jax", keras_python, "keras", {"KERAS_BACKEND": "jax"}))
    if tf_python:
        rows.append(("tensorflow", tf_python, "keras", {"KERAS_BACKEND": "tensorflow"}))
    return rows


def measure(model, phase, batch, size, steps, rounds, keras_python, tf_python):
    """Starts each contender, times its first call, then ``rounds`` interleaved runs; prints the
    table and returns {row: images/s}."""
    options = ["--model", model, "--phase", phase, "--batch-size", str(batch), "--size", str(size),
               "--steps", str(steps)]
    rows = [(name, python, ["--framework", framework, *options], env)
            for name, python, framework, env in contenders(keras_python, tf_python)]
    busy = {}
    first, medians, notes = time_workers("applications_worker.py", rows, rounds, busy=busy)
    rates = {name: batch * steps / seconds for name, seconds in medians.items()}
    print_rates(f"{model} {phase}: {size}x{size}, batch {batch}, {steps} batches per run, median of {rounds} rounds",
                notes, rates, first, "images/s", 12)
    print_busy(busy)
    return rates


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["MobileNetV2", "ResNet50"], choices=["MobileNetV2", "ResNet50"])
    parser.add_argument("--phases", nargs="+", default=["predict", "train"], choices=["predict", "train"])
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--predict-batch", type=int, default=DEFAULT_BATCH["predict"])
    parser.add_argument("--train-batch", type=int, default=DEFAULT_BATCH["train"])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keras-python", default=os.environ.get("MINIKERAS_KERAS_PYTHON", ""))
    parser.add_argument("--tf-python", default=os.environ.get("MINIKERAS_TF_PYTHON", ""))
    parser.add_argument("--quick", action="store_true", help="32x32, batch 2, 1 step, 1 round")
    args = parser.parse_args(argv)
    if args.quick:
        args.size, args.predict_batch, args.train_batch, args.steps, args.rounds = 32, 2, 2, 1, 1
    batches = {"predict": args.predict_batch, "train": args.train_batch}
    print(f"CPU: {cpu_model()}, {os.cpu_count()} CPUs")
    with CpuSteal() as steal:
        for model in args.models:
            for phase in args.phases:
                measure(model, phase, batches[phase], args.size, args.steps, args.rounds, args.keras_python,
                        args.tf_python)
    print(steal.describe())


if __name__ == "__main__":
    main()
