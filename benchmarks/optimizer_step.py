"""Eager ``Adam.apply_gradients`` vs the same Adam update hand-written as one ``jax.jit`` function.

The variables have the shapes of the MNIST CNN's kernels and biases (two 3x3 convolutions and
two dense layers, 8 variables, ~225k parameters). Both sides run in the same process on the same
gradients; the figure of merit is the ratio of their per-step times (target <= 1.3).

    python benchmarks/optimizer_step.py [--steps 50] [--repeats 20]

Rounds are short and interleaved, and the best round of each counts, so that load from other
processes on a shared machine affects both sides alike.
"""
import argparse
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing
import minikeras as mk  # noqa: E402
from minikeras import optimizers  # noqa: E402

SHAPES = [(3, 3, 1, 32), (32,), (3, 3, 32, 64), (64,), (1600, 128), (128,), (128, 10), (10,)]
LR, BETA_1, BETA_2, EPSILON = 0.001, 0.9, 0.999, 1e-7


@jax.jit
def adam_step(params, ms, vs, t, lr, grads):
    """Keras 3's Adam update for a list of arrays, written directly in jax."""
    t = t + 1
    step = t.astype(jnp.float32)
    alpha = lr * jnp.sqrt(1 - BETA_2 ** step) / (1 - BETA_1 ** step)
    new_params, new_ms, new_vs = [], [], []
    for p, m, v, g in zip(params, ms, vs, grads):
        m = m + (g - m) * (1 - BETA_1)
        v = v + (g * g - v) * (1 - BETA_2)
        new_params.append(p - alpha * m / (jnp.sqrt(v) + EPSILON))
        new_ms.append(m)
        new_vs.append(v)
    return new_params, new_ms, new_vs, t


def time_per_step(run_step, sync, steps, repeats):
    run_step()
    sync()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            run_step()
        sync()
        best = min(best, (time.perf_counter() - start) / steps)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    init = [rng.normal(size=s).astype(np.float32) * 0.05 for s in SHAPES]
    grads = [jnp.asarray(rng.normal(size=s).astype(np.float32) * 0.01) for s in SHAPES]

    variables = [mk.Variable(w, name=f"w{i}") for i, w in enumerate(init)]
    optimizer = optimizers.Adam(learning_rate=LR)
    grad_tensors = [mk.constant(g) for g in grads]

    def mk_step():
        optimizer.apply_gradients(zip(grad_tensors, variables))

    def mk_sync():
        jax.block_until_ready([v._value for v in variables])

    state = {"params": [jnp.asarray(w) for w in init], "ms": [jnp.zeros(s) for s in SHAPES],
             "vs": [jnp.zeros(s) for s in SHAPES], "t": jnp.zeros((), jnp.int32)}
    lr = jnp.asarray(LR, jnp.float32)

    def jax_step():
        state["params"], state["ms"], state["vs"], state["t"] = adam_step(
            state["params"], state["ms"], state["vs"], state["t"], lr, grads)

    def jax_sync():
        jax.block_until_ready(state["params"])

    # Interleave the two so that load from other processes affects both alike.
    mk_times, jax_times = [], []
    for _ in range(args.repeats):
        mk_times.append(time_per_step(mk_step, mk_sync, args.steps, 1))
        jax_times.append(time_per_step(jax_step, jax_sync, args.steps, 1))
    mk_us, jax_us = min(mk_times) * 1e6, min(jax_times) * 1e6

    n_params = sum(int(np.prod(s)) for s in SHAPES)
    same = max(float(np.max(np.abs(v.numpy() - np.asarray(p)))) for v, p in zip(variables, state["params"]))
    print(f"Adam step on {len(SHAPES)} variables ({n_params} parameters), {jax.default_backend()}")
    print(f"  minikeras eager apply_gradients : {mk_us:9.1f} us/step")
    print(f"  hand-written jax.jit            : {jax_us:9.1f} us/step")
    print(f"  ratio                           : {mk_us / jax_us:9.2f}x  (target <= 1.3x)")
    print(f"  max |difference| of the weights : {same:.2e}  (both ran the same number of steps)")
    print(f"  compiled update traced {optimizer.update_function(variables).tracing_count} time(s)")


if __name__ == "__main__":
    main()
