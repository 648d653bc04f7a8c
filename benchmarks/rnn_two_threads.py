"""A recurrent layer's per-step products on one thread against two (``xla_cpu.rnn_step_native``),
in the LSTM/GRU classifier's tape step, in one process.

``tuning.RNN_STEP_TWO_THREADS`` is read when the step is traced: this traces ``rnn_step.py``'s
model (``[LSTM|GRU](units)`` -> ``Dense(10, softmax)``, Adam, the same initial weights) twice, once
with the switch off (the one-thread kernels and XLA's dot, as before) and once on, then times the
two compiled steps in alternating order for ``--rounds`` rounds of ``--steps`` steps and prints
the median wall and CPU (``time.process_time``) milliseconds per step and the ratios off/on (above
1: two threads faster). Two threads can only win wall time: their CPU time is higher (the helper
spins between steps), and on a machine whose other core is busy with other processes they lose.

    python benchmarks/rnn_two_threads.py --kind lstm
    python benchmarks/rnn_two_threads.py --kind gru --batch 256
    python benchmarks/rnn_two_threads.py --kind lstm --bidirectional
    python benchmarks/rnn_two_threads.py --units 16 --length 4 --batch 4 --steps 1 --rounds 1   # smoke
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import block, cpu_model, honour_default_malloc_flag  # noqa: E402

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
    wall = {False: [], True: []}
    cpu = {False: [], True: []}
    for r in range(args.rounds):
        for value in ((False, True) if r % 2 == 0 else (True, False)):
            start, start_cpu = time.perf_counter(), time.process_time()
            for _ in range(args.steps):
                loss = steps[value](x, y)
            block(loss)
            wall[value].append((time.perf_counter() - start) / args.steps * 1e3)
            cpu[value].append((time.process_time() - start_cpu) / args.steps * 1e3)
    rnn_step_native.supported = supported
    if len(traces) != traced or set(traces) != {False, True}:
        sys.exit(f"the steps were traced again or not under both settings: {traces}")
    print(f"{cpu_model()}; avx512f: {'avx512f' in low_precision.cpu_flags()}; usable CPUs: "
          f"{len(os.sched_getaffinity(0))}; load average {os.getloadavg()[0]:.1f}")
    layer = ("Bidirectional " if args.bidirectional else "") + f"{args.kind.upper()}({args.units})"
    print(f"{layer} tape step, batch {args.batch}, length {args.length}; first losses "
          f"{first_losses[False]:.6f} / {first_losses[True]:.6f}; {args.rounds} rounds of {args.steps} steps, "
          f"alternating; medians, ms per step")
    for value in (False, True):
        print(f"  RNN_STEP_TWO_THREADS={value!s:5}  wall {statistics.median(wall[value]):7.2f}  "
              f"CPU {statistics.median(cpu[value]):7.2f}")
    print(f"  off/on: wall {statistics.median(wall[False]) / statistics.median(wall[True]):.3f}x "
          f"(on faster in {sum(a > b for a, b in zip(wall[False], wall[True]))} of {args.rounds} rounds), "
          f"CPU {statistics.median(cpu[False]) / statistics.median(cpu[True]):.3f}x")


if __name__ == "__main__":
    main()
