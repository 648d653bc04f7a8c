"""keras.io models' ``fit`` throughput: minikeras against Keras 3 on JAX and on TensorFlow, each in
a process of its own (``keras_io_worker.py``), timed in turn in interleaved rounds.

Kinds (``keras_io_models.py`` has the code, written once in Keras 3's vocabulary):
  * ``vit``: the "Image classification with Vision Transformer" example's model and sizes;
  * ``gpt``: the "Text generation with a miniature GPT" example's model and sizes;
  * ``mlp``: a 784-512-512-10 MLP with ``layers.Dense`` against the same MLP with a Dense written
    with ``keras.ops.matmul`` + bias + activation; both minikeras (the ratio shows whether a layer
    written with ``keras.ops`` compiles into the same program as the built-in one), so both run
    in this process, in alternating order (``common.alternating_rounds``): two processes' speeds
    differ by more than the two programs' (the ratio swung 0.90x..1.02x from run to run).

Each row: samples/s of ``fit`` over ``--steps`` batches (median of ``--rounds``; default 3, 15 for
``mlp``), the slowest and fastest round, the first call (``fit`` on one batch, compile included)
and the ratio to the first row. Under the table, minikeras's speed over each other row's: the
ratio of the medians, and the median and range of the rounds' ratios (round r's minikeras against
round r's other row: the rounds are interleaved, so a load that slows one round slows both).
``mlp`` also prints the wall and CPU (``time.process_time``) ms per step and the rounds' ratios of
both. Keras runs from ``--keras-python`` (``$MINIKERAS_KERAS_PYTHON``; a Python with ``keras``
and ``jax`` and/or ``tensorflow`` installed, never minikeras's dependency); '' leaves its rows out.

    python benchmarks/keras_io_step.py --kinds vit gpt mlp --keras-python /path/to/python
    python benchmarks/keras_io_step.py --kinds mlp --steps 50 --rounds 15
    python benchmarks/keras_io_step.py --quick       # tiny sizes: checks the script runs
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import CpuSteal, alternating_rounds, cpu_model, print_busy, print_rates, print_ratio_lines, time_workers  # noqa: E402

DEFAULT_BATCH = {"vit": 64, "gpt": 32, "mlp": 256}
DEFAULT_ROUNDS = {"vit": 3, "gpt": 3, "mlp": 15}
MLP_ROWS = {"mk Dense": "mlp_dense", "mk keras.ops Dense": "mlp_ops"}


def contenders(kind, keras_python):
    """(row name, python, framework, model kind, env) for ``vit`` or ``gpt``."""
    rows = [("minikeras", sys.executable, "minikeras", kind, None)]
    if keras_python:
        rows += [("keras-jax", keras_python, "keras", kind, {"KERAS_BACKEND": "jax"}),
                 ("keras-tf", keras_python, "keras", kind, {"KERAS_BACKEND": "tensorflow"})]
    return rows


def measure(kind, batch, steps, rounds, keras_python):
    """Starts each contender, times its first call, then ``rounds`` interleaved runs; prints the
    table and returns {row: samples/s}."""
    if kind == "mlp":
        return measure_mlp(batch, steps, rounds)
    rows = [(name, python, ["--framework", framework, "--kind", model_kind, "--batch-size", str(batch),
                            "--steps", str(steps)], env)
            for name, python, framework, model_kind, env in contenders(kind, keras_python)]
    samples, busy = {}, {}
    first, medians, notes = time_workers("keras_io_worker.py", rows, rounds, samples, busy)
    rates = {name: batch * steps / seconds for name, seconds in medians.items()}
    round_rates = {name: [batch * steps / seconds for seconds in values] for name, values in samples.items()}
    print_rates(f"{kind}: batch {batch}, {steps} steps per fit, median of {rounds} rounds", notes, rates, first,
                "samples/s", 22, round_rates)
    print_busy(busy)
    return rates


def measure_mlp(batch, steps, rounds):
    """The two minikeras MLPs in this process: each one's first call, one warm-up epoch, then
    ``rounds`` alternating rounds of one ``fit`` epoch each; prints the table and the ratio lines
    and returns {row: samples/s}."""
    import keras_io_models

    import minikeras as mk  # here, not at the top: the vit and gpt rows run in processes of their own

    runs, first = {}, {}
    for name, kind in MLP_ROWS.items():
        model, x, y = keras_io_models.build(kind, mk.keras, batch, steps)
        start = time.perf_counter()
        model.fit(x[:batch], y[:batch], batch_size=batch, epochs=1, verbose=0, shuffle=False)
        first[name] = time.perf_counter() - start
        runs[name] = lambda model=model, x=x, y=y: model.fit(x, y, batch_size=batch, epochs=1, verbose=0,
                                                             shuffle=False)
        runs[name]()  # warm: one whole epoch before timing
    times = alternating_rounds(runs, rounds, per_call=steps)
    rates = {name: batch * 1e3 / statistics.median(t["wall"]) for name, t in times.items()}
    print(f"\nmlp: batch {batch}, {steps} steps per fit, {rounds} rounds, alternating, both in this process "
          f"(minikeras); medians")
    print(f"  {'':22s} {'samples/s':>10s} {'min..max':>17s} {'wall ms/step':>13s} {'CPU ms/step':>12s} "
          f"{'first call s':>12s}")
    for name, t in times.items():
        low, high = batch * 1e3 / max(t["wall"]), batch * 1e3 / min(t["wall"])
        print(f"  {name:22s} {rates[name]:10.1f} {low:8.1f}..{high:<7.1f} {statistics.median(t['wall']):13.3f} "
              f"{statistics.median(t['cpu']):12.3f} {first[name]:12.1f}")
    dense, ops = MLP_ROWS
    print_ratio_lines(times, dense, ops, name="Dense/keras.ops Dense time", faster="the keras.ops Dense",
                      wins_by="wall")
    return rates


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="+", default=["mlp", "vit", "gpt"], choices=["mlp", "vit", "gpt"])
    parser.add_argument("--batch-size", type=int, default=None, help=f"default per kind: {DEFAULT_BATCH}")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=None, help=f"default per kind: {DEFAULT_ROUNDS}")
    parser.add_argument("--keras-python", default=os.environ.get("MINIKERAS_KERAS_PYTHON", ""))
    parser.add_argument("--quick", action="store_true", help="batch 4, 2 steps, 1 round")
    args = parser.parse_args(argv)
    if args.quick:
        args.batch_size, args.steps, args.rounds = 4, 2, 1
    print(f"CPU: {cpu_model()}, {os.cpu_count()} CPUs")
    with CpuSteal() as steal:
        for kind in args.kinds:
            measure(kind, args.batch_size or DEFAULT_BATCH[kind], args.steps, args.rounds or DEFAULT_ROUNDS[kind],
                    args.keras_python)
    print(steal.describe())


if __name__ == "__main__":
    main()
