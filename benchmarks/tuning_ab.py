"""One ``xla_cpu.tuning`` switch off against on, in the classic CNN's (or ResNet-20's) tape step, or the
keras.io miniature GPT's ``fit``, in one process.

A change behind a ``tuning`` switch (a native kernel for one product, a formulation) is read when
the step is traced. This traces the same step twice (``train_step.mk_tape_step`` on the classic
MNIST CNN, optionally under a dtype policy, batch 128; or ``--model resnet``, ``resnet20_model.py``'s
ResNet-20 on 32x32x3 images; or ``--model lstm`` / ``gru``, ``rnn_step.py``'s classifier
(``LSTM(128)`` or ``GRU(128)`` -> ``Dense(10, softmax)``, batch 64, length 100, 32 features); or
``--model gpt``, ``keras_io_models.py``'s miniature GPT, one ``fit`` epoch of ``--steps`` batches of
32 per call), once with each value of the switch
(``jax.clear_caches()`` between the traces, so that no jitted piece of the first is reused), then
times the two compiled steps in alternating order for ``--rounds`` rounds of ``--steps`` steps
(``common.alternating_rounds``) and prints each one's median wall and CPU (``time.process_time``)
milliseconds per step and the ratio off/on (above 1: the switch on is faster): of the medians,
the median of the rounds' ratios, their range and quartiles (``common.print_off_on``). On a
shared machine the CPU time is the steadier figure.

    python benchmarks/tuning_ab.py --switch BF16_MATMUL_NT_NATIVE --policy mixed_bfloat16
    python benchmarks/tuning_ab.py --switch BF16_MATMUL_NT_NATIVE --policy mixed_bfloat16 --steps 1 --rounds 1
    python benchmarks/tuning_ab.py --switch BATCH_MOMENTS_NATIVE --model resnet --batch-size 32
    python benchmarks/tuning_ab.py --switch LOGITS_CROSSENTROPY_NATIVE --model gpt
    python benchmarks/tuning_ab.py --switch LSTM_NATIVE --model lstm
    python benchmarks/tuning_ab.py --switch BF16_WEIGHT_GRADIENT_WIDENED,BF16_CONV_BIAS_SUMS_IN_KERNEL \
        --policy mixed_bfloat16 --rounds 61     # several switches at once
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import alternating_rounds, block, cpu_model, honour_default_malloc_flag, print_off_on  # noqa: E402

honour_default_malloc_flag()  # before minikeras is imported
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import keras_io_models  # noqa: E402
import numpy as np  # noqa: E402
import train_step  # noqa: E402
from resnet20_model import resnet20  # noqa: E402

import minikeras as mk  # noqa: E402
from minikeras.xla_cpu import low_precision, tuning  # noqa: E402


def traced_step(switch, value, policy, x, y, model="classic", steps=4):
    """The tape step traced and compiled with ``tuning.<switch>`` set to ``value`` (restored after);
    ``switch`` may name several, separated by commas, all set to ``value``. For ``model="gpt"``, a
    function of (x, y) that ignores them and runs one ``fit`` epoch of ``steps`` batches of its own."""
    names = switch.split(",")
    saved = [getattr(tuning, name) for name in names]
    for name in names:
        setattr(tuning, name, value)
    try:
        jax.clear_caches()
        mk.random.set_seed(0)
        if model == "gpt":
            step = _gpt_epoch(steps)
        elif model == "resnet":
            step = train_step.mk_tape_step(resnet20(mk), from_logits=True)
        elif model in ("lstm", "gru"):
            step = train_step.mk_tape_step(_recurrent_classifier(model))
        else:
            step = train_step.mk_tape_step(train_step.classic_cnn(policy))
        block(step(x, y))
    finally:
        for name, old in zip(names, saved):
            setattr(tuning, name, old)
        jax.clear_caches()
    return step


def _recurrent_classifier(kind, units=128, features=32):
    recurrent = (mk.layers.LSTM if kind == "lstm" else mk.layers.GRU)(units)
    model = mk.Sequential([recurrent, mk.layers.Dense(10, activation="softmax")])
    model.build((None, None, features))
    return model


def _gpt_epoch(steps, batch_size=32):
    gpt, x, y = keras_io_models.build("gpt", mk.keras, batch_size, steps)

    def epoch(*_):
        return gpt.fit(x, y, batch_size=batch_size, epochs=1, verbose=0, shuffle=False).history["loss"]
    return epoch


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--switch", required=True,
                        help="a boolean in minikeras.xla_cpu.tuning, or several separated by commas (set together)")
    parser.add_argument("--policy", default=None, help="a dtype policy (mixed_bfloat16)")
    parser.add_argument("--model", choices=("classic", "resnet", "lstm", "gru", "gpt"), default="classic")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="the CNNs' batch (default 128) or the recurrent models' (64); the GPT's is 32")
    parser.add_argument("--steps", type=int, default=4, help="steps per timed round (gpt: batches per fit epoch)")
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args(argv)
    for name in args.switch.split(","):
        if not isinstance(getattr(tuning, name, None), bool):
            parser.error(f"--switch: expected the name of a boolean in minikeras.xla_cpu.tuning, got {name!r}")
    rng = np.random.default_rng(0)
    recurrent = args.model in ("lstm", "gru")
    args.batch_size = args.batch_size or (64 if recurrent else 128)
    image_shape = {"resnet": (32, 32, 3), "lstm": (100, 32), "gru": (100, 32)}.get(args.model, (28, 28, 1))
    x = jnp.asarray(rng.random((args.batch_size, *image_shape), dtype=np.float32))
    y = jnp.asarray(rng.integers(0, 10, args.batch_size).astype(np.int32))
    steps = {value: traced_step(args.switch, value, args.policy, x, y, args.model, args.steps)
             for value in (False, True)}
    for step in steps.values():  # warm both before timing
        block(step(x, y))
    per_call = args.steps if args.model == "gpt" else 1
    times = alternating_rounds({value: (lambda step=step: step(x, y)) for value, step in steps.items()},
                               args.rounds, 1 if args.model == "gpt" else args.steps, per_call=per_call)
    print(f"{cpu_model()}; CPU flags with bfloat16 instructions: "
          f"{' '.join(f for f in low_precision.BF16_FLAGS if f in low_precision.cpu_flags()) or 'none'}")
    if args.model == "gpt":
        print(f"keras.io miniature GPT, fit, batch 32; {args.rounds} rounds of one epoch of {args.steps} batches, "
              f"alternating; medians, ms per step")
    else:
        model = {"resnet": "ResNet-20", "lstm": "LSTM(128)", "gru": "GRU(128)"}.get(args.model, "classic CNN")
        print(f"{model} tape step, batch {args.batch_size}, policy {args.policy}; {args.rounds} rounds of "
              f"{args.steps} steps, alternating; medians, ms per step")
    print_off_on(times, args.switch)


if __name__ == "__main__":
    main()
