"""Eager ``apply_gradients`` vs the same update as one ``jax.jit`` function.

The variables have the shapes of the MNIST CNN's kernels and biases (two 3x3 convolutions and
two dense layers, 8 variables, ~225k parameters). Both sides run in the same process on the same
gradients; the figure of merit is the ratio of their per-step times (target <= 1.3).

Adam (the default) is compared with Keras 3's update hand-written in jax; the other optimizers
with optax's version of the same algorithm under one ``jax.jit`` (with epsilon = 0 where the two
place epsilon differently, so both compute the same weights). optax's Nadam is another algorithm
(no momentum schedule): its row is a timing only. ``adam_accumulate`` is
``gradient_accumulation_steps=4`` against ``optax.MultiSteps``; ``adam_ema`` is ``use_ema=True``
against optax.adam plus the moving average written in jax.

    python benchmarks/optimizer_step.py [--optimizer adam|adamw|...|all] [--steps 50] [--repeats 20]
    python benchmarks/optimizer_step.py --optimizer all --quick     # runs each once, no timing worth reading

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
import optax

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


def optax_step(transform, ema_momentum=None):
    """One jitted step of an optax transformation (and a moving average of the weights)."""

    @jax.jit
    def step(params, opt_state, averages, count, grads):
        updates, opt_state = transform.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        if ema_momentum is not None:
            momentum = jnp.where(count == 0, 0.0, ema_momentum)
            averages = [momentum * a + (1 - momentum) * p for a, p in zip(averages, params)]
        return params, opt_state, averages, count + 1
    return step


# name: (minikeras optimizer, optax transformation or None for the hand-written Adam, same weights?, EMA momentum)
CASES = {
    "adam": (lambda: optimizers.Adam(learning_rate=LR), None, True, None),
    "adamw": (lambda: optimizers.AdamW(learning_rate=LR, epsilon=0.0),
              lambda: optax.adamw(LR, eps=0.0, weight_decay=0.004), True, None),
    "adagrad": (lambda: optimizers.Adagrad(learning_rate=LR), lambda: optax.adagrad(LR), True, None),
    "adadelta": (lambda: optimizers.Adadelta(learning_rate=1.0), lambda: optax.adadelta(1.0, rho=0.95, eps=1e-7),
                 True, None),
    "adamax": (lambda: optimizers.Adamax(learning_rate=LR, epsilon=0.0), lambda: optax.adamax(LR, eps=0.0), True,
               None),
    "nadam": (lambda: optimizers.Nadam(learning_rate=LR), lambda: optax.nadam(LR), False, None),
    "sgd_nesterov": (lambda: optimizers.SGD(learning_rate=0.01, momentum=0.9, nesterov=True),
                     lambda: optax.sgd(0.01, momentum=0.9, nesterov=True), True, None),
    "adam_accumulate": (lambda: optimizers.Adam(learning_rate=LR, epsilon=0.0, gradient_accumulation_steps=4),
                        lambda: optax.MultiSteps(optax.adam(LR, eps=0.0), every_k_schedule=4), True, None),
    "adam_ema": (lambda: optimizers.Adam(learning_rate=LR, epsilon=0.0, use_ema=True),
                 lambda: optax.adam(LR, eps=0.0), True, 0.99),
}


def run_case(name, init, grads, steps, repeats):
    make_optimizer, make_transform, same_algorithm, ema_momentum = CASES[name]
    variables = [mk.Variable(w, name=f"w{i}") for i, w in enumerate(init)]
    optimizer = make_optimizer()
    grad_tensors = [mk.constant(g) for g in grads]

    def mk_step():
        optimizer.apply_gradients(zip(grad_tensors, variables))

    def mk_sync():
        jax.block_until_ready([v._value for v in variables])

    if make_transform is None:
        state = {"params": [jnp.asarray(w) for w in init], "ms": [jnp.zeros(s) for s in SHAPES],
                 "vs": [jnp.zeros(s) for s in SHAPES], "t": jnp.zeros((), jnp.int32)}
        lr = jnp.asarray(LR, jnp.float32)

        def jax_step():
            state["params"], state["ms"], state["vs"], state["t"] = adam_step(
                state["params"], state["ms"], state["vs"], state["t"], lr, grads)
        reference = "hand-written jax.jit"
    else:
        transform = make_transform()
        step = optax_step(transform, ema_momentum)
        params = [jnp.asarray(w) for w in init]
        state = {"params": params, "opt": transform.init(params), "avg": [jnp.zeros(s) for s in SHAPES],
                 "count": jnp.zeros((), jnp.int32)}

        def jax_step():
            state["params"], state["opt"], state["avg"], state["count"] = step(
                state["params"], state["opt"], state["avg"], state["count"], grads)
        reference = "optax under jax.jit"

    def jax_sync():
        jax.block_until_ready(state["params"])

    # Interleave the two so that load from other processes affects both alike.
    mk_times, jax_times = [], []
    for _ in range(repeats):
        mk_times.append(time_per_step(mk_step, mk_sync, steps, 1))
        jax_times.append(time_per_step(jax_step, jax_sync, steps, 1))
    mk_us, jax_us = min(mk_times) * 1e6, min(jax_times) * 1e6

    n_params = sum(int(np.prod(s)) for s in SHAPES)
    print(f"{name} step on {len(SHAPES)} variables ({n_params} parameters), {jax.default_backend()}")
    print(f"  minikeras eager apply_gradients : {mk_us:9.1f} us/step")
    print(f"  {reference:<32}: {jax_us:9.1f} us/step")
    print(f"  ratio                           : {mk_us / jax_us:9.2f}x  (target <= 1.3x)")
    if same_algorithm:
        same = max(float(np.max(np.abs(v.numpy() - np.asarray(p)))) for v, p in zip(variables, state["params"]))
        print(f"  max |difference| of the weights : {same:.2e}  (both ran the same number of steps)")
        if ema_momentum is not None:
            averages = optimizer._model_variables_moving_average
            same = max(float(np.max(np.abs(a.numpy() - np.asarray(b)))) for a, b in zip(averages, state["avg"]))
            print(f"  max |difference| of the averages: {same:.2e}")
    else:
        print("  max |difference| of the weights : n/a (optax's version is another algorithm)")
    print(f"  compiled update traced {optimizer.update_function(variables).tracing_count} time(s)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--optimizer", default="adam", choices=[*CASES, "all"])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="2 steps, 1 round: checks that it runs")
    args = parser.parse_args()
    if args.quick:
        args.steps, args.repeats = 2, 1

    rng = np.random.default_rng(0)
    init = [rng.normal(size=s).astype(np.float32) * 0.05 for s in SHAPES]
    grads = [jnp.asarray(rng.normal(size=s).astype(np.float32) * 0.01) for s in SHAPES]
    for name in (CASES if args.optimizer == "all" else [args.optimizer]):
        run_case(name, init, grads, args.steps, args.repeats)


if __name__ == "__main__":
    main()
