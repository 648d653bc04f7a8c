"""The keras.io ViT's ``fit`` step with ``tuning.ATTENTION_OPERAND_ORDER`` off against on, in one process.

MultiHeadAttention reads the switch when the step is traced. This builds ``keras_io_models.py``'s
ViT (``--model gpt``: its miniature GPT; example sizes, batch ``--batch-size``) twice from the
same seed, traces each one's ``fit`` with one value of the switch (``jax.clear_caches()``
between, so that no jitted piece of the first is reused), then times one ``fit`` epoch of
``--steps`` batches of each, in alternating order, for ``--rounds`` rounds
(``common.alternating_rounds``), and prints the median wall and CPU (``time.process_time``)
milliseconds per step and the ratio off/on (above 1: the switch on is faster; of the medians, the
median of the rounds' ratios, their range). On a shared machine the CPU time is the steadier figure. ``--check`` first
compares one training step's loss and updated weights between the two orders.

    python benchmarks/vit_attention_ab.py
    python benchmarks/vit_attention_ab.py --rounds 3 --steps 1 --check
    python benchmarks/vit_attention_ab.py --model gpt --batch-size 32
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import alternating_rounds, cpu_model, honour_default_malloc_flag, print_off_on  # noqa: E402

honour_default_malloc_flag()  # before minikeras is imported
import jax  # noqa: E402
import keras_io_models  # noqa: E402
import numpy as np  # noqa: E402

import minikeras as mk  # noqa: E402
from minikeras.xla_cpu import tuning  # noqa: E402


def built(value, batch_size, steps, kind="vit"):
    """(fit, model): the ViT (or ``kind``) with its ``fit`` traced under ``ATTENTION_OPERAND_ORDER = value``."""
    saved = tuning.ATTENTION_OPERAND_ORDER
    tuning.ATTENTION_OPERAND_ORDER = value
    try:
        jax.clear_caches()
        model, x, y = keras_io_models.build(kind, mk.keras, batch_size, steps)

        def fit():
            return model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0, shuffle=False).history["loss"]

        fit()
    finally:
        tuning.ATTENTION_OPERAND_ORDER = saved
        jax.clear_caches()
    return fit, model


def check(batch_size, kind="vit"):
    """One step of each order from the same weights and data: the largest differences."""
    results = []
    for value in (False, True):
        saved = tuning.ATTENTION_OPERAND_ORDER
        tuning.ATTENTION_OPERAND_ORDER = value
        try:
            jax.clear_caches()
            model, x, y = keras_io_models.build(kind, mk.keras, batch_size, 1)
            loss = model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0, shuffle=False).history["loss"][0]
            results.append((loss, [np.asarray(w) for w in model.get_weights()]))
        finally:
            tuning.ATTENTION_OPERAND_ORDER = saved
            jax.clear_caches()
    (loss_a, w_a), (loss_b, w_b) = results
    worst = max(float(np.max(np.abs(a - b))) for a, b in zip(w_a, w_b))
    print(f"one step, off against on: loss {loss_a:.7f} / {loss_b:.7f}, largest weight difference {worst:.3g}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("vit", "gpt"), default="vit")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--steps", type=int, default=2, help="batches per timed fit")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--check", action="store_true", help="first compare one step's results")
    args = parser.parse_args(argv)
    if args.check:
        check(args.batch_size, args.model)
    fits = {value: built(value, args.batch_size, args.steps, args.model)[0] for value in (False, True)}
    for fit in fits.values():  # warm both before timing
        fit()
    times = alternating_rounds(fits, args.rounds, per_call=args.steps)
    print(cpu_model())
    print(f"keras.io {args.model} fit, batch {args.batch_size}; {args.rounds} rounds of one epoch of "
          f"{args.steps} batches, alternating; medians, ms per step")
    print_off_on(times, "ATTENTION_OPERAND_ORDER", digits="8.1f")


if __name__ == "__main__":
    main()
