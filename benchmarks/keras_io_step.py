"""keras.io models' ``fit`` throughput: minikeras against Keras 3 on JAX and on TensorFlow, each in
a process of its own (``keras_io_worker.py``), timed in turn in interleaved rounds.

Kinds (``keras_io_models.py`` has the code, written once in Keras 3's vocabulary):
  * ``vit``: the "Image classification with Vision Transformer" example's model and sizes;
  * ``gpt``: the "Text generation with a miniature GPT" example's model and sizes;
  * ``mlp``: a 784-512-512-10 MLP with ``layers.Dense`` against the same MLP with a Dense written
    with ``keras.ops.matmul`` + bias + activation; both minikeras (the ratio shows whether a layer
    written with ``keras.ops`` compiles into the same program as the built-in one).

Each row: samples/s of ``fit`` over ``--steps`` batches (median of ``--rounds``), the first call
(``fit`` on one batch, compile included) and the ratio to minikeras's row. Keras runs from
``--keras-python`` (``$MINIKERAS_KERAS_PYTHON``; a Python with ``keras`` and ``jax`` and/or
``tensorflow`` installed, never minikeras's dependency); '' leaves its rows out.

    python benchmarks/keras_io_step.py --kinds vit gpt mlp --keras-python /path/to/python
    python benchmarks/keras_io_step.py --kinds mlp --steps 50 --rounds 5
    python benchmarks/keras_io_step.py --quick       # tiny sizes: checks the script runs
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import CpuSteal, cpu_model, print_rates, time_workers  # noqa: E402

DEFAULT_BATCH = {"vit": 64, "gpt": 32, "mlp": 256}


def contenders(kind, keras_python):
    """(row name, python, framework, model kind, env) for one kind."""
    if kind == "mlp":
        return [("mk Dense", sys.executable, "minikeras", "mlp_dense", None),
                ("mk keras.ops Dense", sys.executable, "minikeras", "mlp_ops", None)]
    rows = [("minikeras", sys.executable, "minikeras", kind, None)]
    if keras_python:
        rows += [("keras-jax", keras_python, "keras", kind, {"KERAS_BACKEND": "jax"}),
                 ("keras-tf", keras_python, "keras", kind, {"KERAS_BACKEND": "tensorflow"})]
    return rows


def measure(kind, batch, steps, rounds, keras_python):
    """Starts each contender, times its first call, then ``rounds`` interleaved runs; prints the
    table and returns {row: samples/s}."""
    rows = [(name, python, ["--framework", framework, "--kind", model_kind, "--batch-size", str(batch),
                            "--steps", str(steps)], env)
            for name, python, framework, model_kind, env in contenders(kind, keras_python)]
    first, medians, notes = time_workers("keras_io_worker.py", rows, rounds)
    rates = {name: batch * steps / seconds for name, seconds in medians.items()}
    print_rates(f"{kind}: batch {batch}, {steps} steps per fit, median of {rounds} rounds", notes, rates, first,
                "samples/s", 22)
    return rates


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="+", default=["mlp", "vit", "gpt"], choices=["mlp", "vit", "gpt"])
    parser.add_argument("--batch-size", type=int, default=None, help=f"default per kind: {DEFAULT_BATCH}")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keras-python", default=os.environ.get("MINIKERAS_KERAS_PYTHON", ""))
    parser.add_argument("--quick", action="store_true", help="batch 4, 2 steps, 1 round")
    args = parser.parse_args(argv)
    if args.quick:
        args.batch_size, args.steps, args.rounds = 4, 2, 1
    print(f"CPU: {cpu_model()}, {os.cpu_count()} CPUs")
    with CpuSteal() as steal:
        for kind in args.kinds:
            measure(kind, args.batch_size or DEFAULT_BATCH[kind], args.steps, args.rounds, args.keras_python)
    print(steal.describe())


if __name__ == "__main__":
    main()
