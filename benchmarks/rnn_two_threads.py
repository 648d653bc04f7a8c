"""A recurrent layer's per-step products on one thread against two (``xla_cpu.rnn_step_native``),
in the LSTM/GRU classifier's tape step, in one process.

``tuning.RNN_STEP_TWO_THREADS`` is read when the step is traced: this traces ``rnn_step.py``'s
model (``[LSTM|GRU](units)`` -> ``Dense(10, softmax)``, Adam, the same initial weights) twice, once
with the switch off (the one-thread kernels and XLA's dot, as before) and once on, then times the
two compiled steps in alternating order for ``--rounds`` rounds of ``--steps`` steps
(``common.alternating_rounds``) and prints the median wall and CPU (``time.process_time``)
milliseconds per step and the ratios off/on (above 1: two threads faster; of the medians, the
median of the rounds' ratios, their range; the rounds won counted by wall time). Two threads can
only win wall time: their CPU time is higher (the helper spins between steps), and on a machine
whose other core is busy with other processes they lose.

    python benchmarks/rnn_two_threads.py --kind lstm
    python benchmarks/rnn_two_threads.py --kind gru --batch 256
    python benchmarks/rnn_two_threads.py --kind lstm --bidirectional
    python benchmarks/rnn_two_threads.py --units 16 --length 4 --batch 4 --steps 1 --rounds 1   # smoke
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import alternating_rounds, block, cpu_model, honour_default_malloc_flag, print_off_on  # noqa: E402

honour_default_malloc_flag()  # before minikeras is imported
import numpy as np  # noqa: E402

import minikeras as mk  # noqa: E402
from minikeras.xla_cpu import low_precision, rnn_step_native, tuning  # noqa: E402


def build_model(kind, args):
    recurrent = (mk.layers.LSTM if kind == "lstm" else mk.layers.GRU)(args.units)
    if args.bidirectional:
        recurrent = mk.layers.Bidirectional(recurrent)
    model = mk.Sequential([recurrent, mk.layers.Dense(10, activation="softmax")])
    model.build((None, None, args.features))
    return model


def traced_step(kind, value, weights, args, x, y):
    """The tape step traced and compiled with ``tuning.RNN_STEP_TWO_THREADS`` = ``value`` (restored after)."""
    saved = tuning.RNN_STEP_TWO_THREADS
    tuning.RNN_STEP_TWO_THREADS = value
    try:
        model = build_model(kind, args)
        model.set_weights(weights)
        optimizer = mk.optimizers.Adam(1e-3)
        loss_fn = mk.losses.SparseCategoricalCrossentropy()

        @mk.function
        def step(x, y):
            with mk.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        first = float(step(x, y))
    finally:
        tuning.RNN_STEP_TWO_THREADS = saved
    return step, first


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=("lstm", "gru"), default="lstm")
    parser.add_argument("--units", type=int, default=128)
    parser.add_argument("--features", type=int, default=32)
    parser.add_argument("--length", type=int, default=100)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=3, help="steps per timed round")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--bidirectional", action="store_true",
                        help="the layer in Bidirectional (its two loops may run at once, one with the helper)")
    args = parser.parse_args(argv)
    if not rnn_step_native.available():
        sys.exit("rnn_step_native.cc could not be built here")
    rng = np.random.default_rng(0)
    x = mk.constant(rng.normal(size=(args.batch, args.length, args.features)).astype("float32"))
    y = mk.constant(rng.integers(0, 10, size=(args.batch,)).astype("int32"))
    mk.random.set_seed(0)
    weights = build_model(args.kind, args).get_weights()
    steps, first_losses = {}, {}
    traces = []  # the switch's value each time a step product is traced: the two traces, no later one
    supported = rnn_step_native.supported
    rnn_step_native.supported = lambda *a: traces.append(tuning.RNN_STEP_TWO_THREADS) or supported(*a)
    for value in (False, True):
        steps[value], first_losses[value] = traced_step(args.kind, value, weights, args, x, y)
    for step in steps.values():
        block(step(x, y))
    traced = len(traces)
    times = alternating_rounds({value: (lambda step=step: step(x, y)) for value, step in steps.items()},
                               args.rounds, args.steps)
    rnn_step_native.supported = supported
    if len(traces) != traced or set(traces) != {False, True}:
        sys.exit(f"the steps were traced again or not under both settings: {traces}")
    print(f"{cpu_model()}; avx512f: {'avx512f' in low_precision.cpu_flags()}; usable CPUs: "
          f"{len(os.sched_getaffinity(0))}; load average {os.getloadavg()[0]:.1f}")
    layer = ("Bidirectional " if args.bidirectional else "") + f"{args.kind.upper()}({args.units})"
    print(f"{layer} tape step, batch {args.batch}, length {args.length}; first losses "
          f"{first_losses[False]:.6f} / {first_losses[True]:.6f}; {args.rounds} rounds of {args.steps} steps, "
          f"alternating; medians, ms per step")
    print_off_on(times, "RNN_STEP_TWO_THREADS", wins_by="wall")  # two threads can only win wall time


if __name__ == "__main__":
    main()
