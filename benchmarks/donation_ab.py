"""Donated optimizer state off against on (``minikeras.programs.donation``), fit epochs in one process.

Each case builds the same model twice (same seed, same weights) and traces its fit step once
with ``donation.ENABLED`` False and once with it True (a program keeps the choice it was
traced with), then times one epoch of each in alternating order for ``--rounds`` rounds and
prints the median wall and CPU (``time.process_time``) milliseconds per step of each and the
ratio off/on (above 1: donating is faster). On a shared machine the CPU time is the steadier
figure; compare ratios, not absolute times.

Cases: ``mnist``, the classic MNIST CNN (``train_step.classic_cnn``) with Adam, batch 128;
``vit``, keras.io's Vision Transformer (``keras_io_models``, AdamW); ``mlp_adamw_scan``, the
784-512-512-10 MLP with AdamW and ``steps_per_execution=4`` (the ``lax.scan`` of steps).

``--adamw-alias-ab`` times, both donating, AdamW's native kernel writing the new variable into
a temporary (``adam_native.DECAYED_VARIABLE_IN_PLACE`` False) against in the variable's own
buffer (True); the "off/on" line then compares those.

    python benchmarks/donation_ab.py --case mnist
    python benchmarks/donation_ab.py --case vit --batch-size 64 --steps 4 --rounds 7
    python benchmarks/donation_ab.py --case mlp_adamw_scan --steps 4 --rounds 1 --batch-size 16   # a smoke run
    python benchmarks/donation_ab.py --case mlp_adamw_scan --adamw-alias-ab
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import cpu_model, honour_default_malloc_flag  # noqa: E402

honour_default_malloc_flag()  # before minikeras is imported
import keras_io_models  # noqa: E402
import numpy as np  # noqa: E402
import train_step  # noqa: E402

import minikeras as mk  # noqa: E402
from minikeras import keras  # noqa: E402
from minikeras.programs import donation  # noqa: E402
from minikeras.xla_cpu import adam_native, low_precision  # noqa: E402

CASES = {"mnist": 128, "vit": 256, "mlp_adamw_scan": 128}  # the default batch sizes


def build(case, batch_size, steps):
    """(compiled model, x, y, steps_per_execution) of ``case`` with ``batch_size * steps`` samples."""
    if case == "mnist":
        mk.utils.set_random_seed(0)
        model = train_step.classic_cnn()
        model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
        rng = np.random.default_rng(0)
        n = batch_size * steps
        return model, rng.random((n, 28, 28, 1), dtype=np.float32), rng.integers(0, 10, n).astype("int32"), 1
    if case == "vit":
        model, x, y = keras_io_models.build("vit", keras, batch_size, steps)
        return model, x, y, 1
    model, x, y = keras_io_models.build("mlp_dense", keras, batch_size, steps)
    model.compile(optimizer=keras.optimizers.AdamW(1e-3, weight_decay=0.004),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), steps_per_execution=4)
    return model, x, y, 4


def traced(case, donate, in_place, batch_size, steps):
    """The case's model with its fit step traced (one epoch run) with donation ``donate`` and
    ``adam_native.DECAYED_VARIABLE_IN_PLACE`` ``in_place``."""
    saved = donation.ENABLED, adam_native.DECAYED_VARIABLE_IN_PLACE
    donation.ENABLED, adam_native.DECAYED_VARIABLE_IN_PLACE = donate, in_place
    try:
        model, x, y, _ = build(case, batch_size, steps)
        model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0, shuffle=False)
    finally:
        donation.ENABLED, adam_native.DECAYED_VARIABLE_IN_PLACE = saved
    return model, x, y


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(CASES), required=True)
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--steps", type=int, default=8, help="steps per timed epoch (a multiple of 4 for the scan)")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--adamw-alias-ab", action="store_true",
                        help="both donating: AdamW's variable in a temporary (off) against in place (on)")
    args = parser.parse_args(argv)
    batch_size = args.batch_size or CASES[args.case]
    if args.adamw_alias_ab:
        runs = {on: traced(args.case, True, on, batch_size, args.steps) for on in (False, True)}
        label = "AdamW variable in place"
    else:
        runs = {on: traced(args.case, on, True, batch_size, args.steps) for on in (False, True)}
        label = "donated"
    wall = {False: [], True: []}
    cpu = {False: [], True: []}
    for r in range(args.rounds):
        for donate in ((False, True) if r % 2 == 0 else (True, False)):
            model, x, y = runs[donate]
            start, start_cpu = time.perf_counter(), time.process_time()
            model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0, shuffle=False)
            wall[donate].append((time.perf_counter() - start) / args.steps * 1e3)
            cpu[donate].append((time.process_time() - start_cpu) / args.steps * 1e3)
    print(f"{cpu_model()}; CPU flags with bfloat16 instructions: "
          f"{' '.join(f for f in low_precision.BF16_FLAGS if f in low_precision.cpu_flags()) or 'none'}")
    print(f"{args.case} fit, batch {batch_size}, {args.steps} steps an epoch; {args.rounds} rounds, alternating; "
          "medians, ms per step")
    for donate in (False, True):
        print(f"  {label}={donate!s:5}  wall {statistics.median(wall[donate]):8.2f}  "
              f"CPU {statistics.median(cpu[donate]):8.2f}")
    print(f"  off/on: wall {statistics.median(wall[False]) / statistics.median(wall[True]):.3f}x, "
          f"CPU {statistics.median(cpu[False]) / statistics.median(cpu[True]):.3f}x "
          f"(on faster in {sum(a > b for a, b in zip(cpu[False], cpu[True]))} of {args.rounds} rounds by CPU time)")


if __name__ == "__main__":
    main()
