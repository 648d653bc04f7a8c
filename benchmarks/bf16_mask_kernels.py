"""The classic CNN's two ReLU masks in the bfloat16 backward pass, XLA's passes against the kernels'.

(a) the 32 -> 64 Conv2D(relu)'s output y (128x24x24x64) max-pooled 2x2: its gradient with the
ReLU mask, ``keep_where(y > 0, max_pool2d_grad(y, dy))``, as XLA computes it (each window's
index in a pass, then dx with the mask) against ``conv_bf16_native.max_pool_grad(..., positive=True)``
(``tuning.BF16_MAX_POOL_GRAD_NATIVE``);
(b) the first Conv2D(relu)'s output y1 (128x26x26x32): the input gradient of the second layer
masked, ``keep_where(y1 > 0, input_grad(dy, w))`` (the kernel, then XLA's pass) against the
kernel's masked epilogue (``input_grad(..., relu_mask=y1)``, ``tuning.BF16_CONV_INPUT_GRAD_RELU_MASK``).

Each pair is timed in alternating order, ``--rounds`` rounds of ``--calls`` calls; medians of
wall and CPU (``time.process_time``) milliseconds per call, and the median of the rounds' ratios.

    python benchmarks/bf16_mask_kernels.py --rounds 21
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from common import cpu_model  # noqa: E402

from minikeras.xla_cpu import conv_bf16_native, pool, tuning  # noqa: E402
from minikeras.xla_cpu.low_precision import keep_where  # noqa: E402


def timed(pair, args, rounds, calls):
    """{name: [(wall ms, CPU ms) per call, one per round]} of the two jitted functions, alternating."""
    results = {name: [] for name in pair}
    for f in pair.values():
        jax.block_until_ready(f(*args))
    for r in range(rounds):
        for name in (list(pair) if r % 2 == 0 else list(pair)[::-1]):
            start, start_cpu = time.perf_counter(), time.process_time()
            for _ in range(calls):
                out = pair[name](*args)
            jax.block_until_ready(out)
            results[name].append(((time.perf_counter() - start) / calls * 1e3,
                                  (time.process_time() - start_cpu) / calls * 1e3))
    return results


def report(title, results):
    (a, ra), (b, rb) = results.items()
    print(title)
    for name, r in results.items():
        wall, cpu = statistics.median(t[0] for t in r), statistics.median(t[1] for t in r)
        print(f"  {name:8} wall {wall:6.3f}  CPU {cpu:6.3f} ms")
    wall = statistics.median(x[0] / y[0] for x, y in zip(ra, rb))
    cpu = statistics.median(x[1] / y[1] for x, y in zip(ra, rb))
    print(f"  {a}/{b}: median of the rounds' ratios wall {wall:.3f}x, CPU {cpu:.3f}x")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args(argv)
    if not conv_bf16_native.available():
        sys.exit(f"the bfloat16 kernels are unavailable: {conv_bf16_native.unavailable_reason()}")
    print(cpu_model())
    rng = np.random.default_rng(0)
    bf16 = jnp.bfloat16
    y = jnp.maximum(jnp.asarray(rng.standard_normal((128, 24, 24, 64)), bf16), 0)
    dy = jnp.asarray(rng.standard_normal((128, 12, 12, 64)), bf16)
    tuning.BF16_MAX_POOL_GRAD_NATIVE = False  # read when traced: the XLA path below
    xla_pool = jax.jit(lambda y, dy: keep_where(y > 0, pool.max_pool2d_grad(y, dy, 2, 2, "VALID")))
    jax.block_until_ready(xla_pool(y, dy))
    tuning.BF16_MAX_POOL_GRAD_NATIVE = True
    native_pool = jax.jit(lambda y, dy: conv_bf16_native.max_pool_grad(y, dy, (2, 2), positive=True))
    report("(a) max-pool gradient with the ReLU mask, 128x24x24x64",
           timed({"xla": xla_pool, "kernel": native_pool}, (y, dy), args.rounds, args.calls))

    y1 = jnp.maximum(jnp.asarray(rng.standard_normal((128, 26, 26, 32)), bf16), 0)
    w = jnp.asarray(rng.standard_normal((3, 3, 32, 64)) * 0.05, bf16)
    g = jnp.asarray(rng.standard_normal((128, 24, 24, 64)), bf16)
    pads = ((0, 0), (0, 0))
    then_mask = jax.jit(lambda g, w, y1: keep_where(y1 > 0, conv_bf16_native.input_grad(g, w, y1.shape, pads)))
    in_epilogue = jax.jit(lambda g, w, y1: conv_bf16_native.input_grad(g, w, y1.shape, pads, relu_mask=y1))
    report("(b) input gradient 24x24x64 -> 26x26x32 with the ReLU mask",
           timed({"pass": then_mask, "epilogue": in_epilogue}, (g, w, y1), args.rounds, args.calls))


if __name__ == "__main__":
    main()
