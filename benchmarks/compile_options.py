"""XLA:CPU compile options against compile time and step time, measured in one process.

The tape step of ``train_step.py``'s classic (or simple) MNIST CNN is traced once by
``mk.function``; its program is then compiled once per option set (each set added to the
options minikeras compiles with) and the compiled steps are timed in interleaved rounds, so
that the drift of a shared machine hits every set alike. Per option set it prints the number
of loop kernels XLA:CPU generated code for (each fusion is its own LLVM module, and code
generation is most of the compile time), the XLA compile time, and the step's median and
best time per round.

    python benchmarks/compile_options.py                  # classic CNN
    python benchmarks/compile_options.py --model simple --rounds 30

Both option sets that compile faster make the step slower, which is why minikeras keeps
XLA's defaults (the table in benchmarks/README.md).
"""
import argparse
import os
import re
import statistics
import sys
import time

import jax
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_step  # noqa: E402
from common import cpu_model  # noqa: E402

from minikeras.xla_cpu import compiler  # noqa: E402

OPTION_SETS = {
    "XLA defaults": {},
    "LLVM -O1": {"xla_backend_optimization_level": 1},
    "legacy emitters": {"xla_cpu_use_fusion_emitters": False},
    "-O1 + legacy emitters": {"xla_backend_optimization_level": 1, "xla_cpu_use_fusion_emitters": False},
}


def traced_step(kind, batch=128):
    """(program, state, inputs): the mk.function tape step's program after one call."""
    model = train_step.classic_cnn() if kind == "classic" else train_step.simple_cnn()
    step = train_step.mk_tape_step(model)
    rng = np.random.default_rng(0)
    images = rng.random((batch, 28, 28, 1), dtype=np.float32)
    labels = rng.integers(0, 10, batch).astype(np.int32)
    float(step(images, labels))
    (program,) = step.programs()
    return program, program.state(), [jax.numpy.asarray(images), jax.numpy.asarray(labels)]


def loop_kernels(hlo_text):
    """Fusions XLA:CPU generates code for (loop and input fusions; library calls excluded)."""
    return len(re.findall(r"= [^=]*fusion\([^)]*\), kind=k(?:Loop|Input|Output)", hlo_text))


def compile_with(program, state, inputs, extra):
    """(compiled step, seconds XLA took, loop kernels) for the options minikeras uses plus ``extra``."""
    options = dict(compiler.cpu_options() or {}, **extra)
    lowered = jax.jit(program.pure, compiler_options=options).lower(state, inputs)
    start = time.perf_counter()
    compiled = lowered.compile()
    return compiled, time.perf_counter() - start, loop_kernels(compiled.as_text())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["classic", "simple"], default="classic")
    parser.add_argument("--rounds", type=int, default=20, help="interleaved timing rounds")
    parser.add_argument("--steps", type=int, default=10, help="steps per round")
    args = parser.parse_args(argv)
    print(f"{cpu_model()}, {os.cpu_count()} CPUs, jax {jax.__version__}; {args.model} CNN, batch 128")
    program, state, inputs = traced_step(args.model)
    compiled = {}
    for name, extra in OPTION_SETS.items():
        compile_with(program, state, inputs, extra)  # the first compile of a process pays one-time setup
        step, seconds, kernels = compile_with(program, state, inputs, extra)
        compiled[name] = (step, seconds, kernels)
    times = {name: [] for name in compiled}
    for _ in range(args.rounds):
        for name, (step, _, _) in compiled.items():
            start = time.perf_counter()
            for _ in range(args.steps):
                out = step(state, inputs)
            jax.block_until_ready(out)
            times[name].append((time.perf_counter() - start) / args.steps)
    base = statistics.median(times["XLA defaults"])
    print(f"{'options':<24}{'kernels':>8}{'compile s':>11}{'step ms':>9}{'best ms':>9}{'vs defaults':>13}")
    for name, (_, seconds, kernels) in compiled.items():
        median = statistics.median(times[name])
        print(f"{name:<24}{kernels:>8}{seconds:>11.2f}{1e3 * median:>9.1f}{1e3 * min(times[name]):>9.1f}"
              f"{median / base:>12.2f}x")


if __name__ == "__main__":
    main()
