"""Gradient checkpointing (``mk.recompute_grad``): memory of activations and step time, with and
without, on a deep stack of Dense layers trained by a tape step in ``mk.function``.

The model is ``--layers`` Dense(``--width``, relu) layers and a Dense(1) head, batch
``--batch``, mean squared error, plain SGD. "checkpointed" wraps each segment of ``--segment``
consecutive layers in ``mk.recompute_grad``: the backward pass keeps only the segments'
inputs and recomputes the rest, one segment at a time.

Memory is XLA's memory analysis of the compiled step (``temp_size_in_bytes``: every buffer
that is neither an argument nor an output, i.e. the activations kept for the backward pass
and the backward pass's own temporaries). It is computed by the compiler, so it does not
depend on the machine's load; the weights, the batch and the new weights are arguments and
outputs, the same on both sides, and not counted. Step time is the median of interleaved
rounds (on a shared machine, compare the ratio rather than the absolute figures).

    python benchmarks/recompute.py [--layers 24] [--width 2048] [--batch 256] [--segment 4]
    python benchmarks/recompute.py --quick      # small sizes, to check that it runs
"""
import argparse
import sys
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CpuSteal, block, interleaved

import minikeras as mk


def make_step(layers, width, segment, checkpointed):
    """A compiled SGD step on a fresh stack; returns (step, model variables)."""
    mk.random.set_seed(0)
    dense = [mk.layers.Dense(width, activation="relu") for _ in range(layers)]
    head = mk.layers.Dense(1)
    segments = []
    for start in range(0, layers, segment):
        part = dense[start:start + segment]

        def run(h, part=part):
            for layer in part:
                h = layer(h)
            return h

        segments.append(mk.recompute_grad(run) if checkpointed else run)
    optimizer = mk.optimizers.SGD(1e-3)

    @mk.function
    def step(x, y):
        with mk.GradientTape() as tape:
            h = x
            for run in segments:
                h = run(h)
            loss = mk.reduce_mean((head(h) - y) ** 2)
        variables = [v for layer in dense + [head] for v in layer.trainable_variables]
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    return step


def temp_bytes(step, x, y):
    """XLA's temporary buffer bytes of ``step``'s compiled program for (x, y)."""
    (program,) = step.programs()
    compiled = jax.jit(program.pure).lower(program.state(), [x, y]).compile()
    return compiled.memory_analysis().temp_size_in_bytes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--segment", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="8 layers of 256, batch 64, 2 repeats")
    args = parser.parse_args(argv)
    if args.quick:
        args.layers, args.width, args.batch, args.segment, args.repeats = 8, 256, 64, 2, 2
    rng = np.random.default_rng(0)
    x = rng.normal(size=(args.batch, args.width)).astype(np.float32)
    y = rng.normal(size=(args.batch, 1)).astype(np.float32)
    steps, memory, losses = {}, {}, {}
    for name, checkpointed in (("plain", False), ("checkpointed", True)):
        step = make_step(args.layers, args.width, args.segment, checkpointed)
        losses[name] = float(block(step(x, y)))  # traces and compiles
        memory[name] = temp_bytes(step, x, y)
        steps[name] = step
    # both start from the same weights (same seed), so their first losses agree
    assert abs(losses["plain"] - losses["checkpointed"]) <= 1e-4 * max(1.0, abs(losses["plain"])), losses
    with CpuSteal() as steal:
        seconds = interleaved({name: (lambda s=s: block(s(x, y))) for name, s in steps.items()}, args.repeats)
    print(f"{args.layers} x Dense({args.width}, relu), batch {args.batch}, segments of {args.segment} "
          f"layers checkpointed; jax {jax.__version__} on {jax.devices()[0].platform}")
    print(f"{'':14s}{'activation memory (XLA temp)':>30s}{'step time':>12s}")
    for name in steps:
        print(f"{name:14s}{memory[name] / 2 ** 20:26.1f} MiB{seconds[name] * 1e3:9.1f} ms")
    print(f"checkpointed / plain: memory {memory['checkpointed'] / memory['plain']:.2f}x, "
          f"step time {seconds['checkpointed'] / seconds['plain']:.2f}x (targets: <= 0.33x, <= 1.5x)")
    print(steal.describe())
    return memory, seconds


if __name__ == "__main__":
    main()
