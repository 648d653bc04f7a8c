"""Linear regression with a GradientTape: learn y = 10x + 5 from noisy samples.

The TF 2 tutorial's program, renamed to minikeras: two Variables, a step that takes
gradients with GradientTape and applies them with ``assign_sub(grad * 0.001)``, run for
100,000 steps. A few steps run eagerly (to show the tape at work), then the full run is
compiled with ``mk.function``.

    python examples/linear_regression.py            # 100,000 steps
    python examples/linear_regression.py --steps 2000
"""
import argparse
import time

import numpy as np

import minikeras as mk


def make_data(n=1000, seed=0):
    """Samples of y = 10x + 5 + noise."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, n).astype(np.float32)
    y = (10.0 * x + 5.0 + rng.normal(0.0, 0.5, n)).astype(np.float32)
    return mk.constant(x), mk.constant(y)


a = mk.Variable(np.random.default_rng(1).random(), name="a", dtype=mk.float32)
b = mk.Variable(np.random.default_rng(2).random(), name="b", dtype=mk.float32)


def step(real_x, real_y):
    with mk.GradientTape(persistent=True) as tape:
        pred_y = a * real_x + b
        reg_loss = mk.reduce_mean(mk.square(pred_y - real_y))
    a_gradients, b_gradients = tape.gradient(reg_loss, (a, b))
    a.assign_sub(a_gradients * 0.001)
    b.assign_sub(b_gradients * 0.001)
    return reg_loss


compiled_step = mk.function(step)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000, help="compiled steps (default 100,000)")
    parser.add_argument("--eager-steps", type=int, default=100, help="eager steps shown first (default 100)")
    args = parser.parse_args(argv)
    x, y = make_data()

    for _ in range(2):  # call 1 compiles each op once, call 2 the repeated backward pass: time the steady state
        step(x, y)
    start = time.perf_counter()
    for _ in range(args.eager_steps):
        loss = step(x, y)
    eager_seconds = time.perf_counter() - start
    print(f"eager:    2 + {args.eager_steps} steps in {eager_seconds:.3f} s "
          f"({eager_seconds / max(args.eager_steps, 1) * 1e6:.0f} µs/step), loss {float(loss):.4f}")

    start = time.perf_counter()
    for _ in range(args.steps):
        loss = compiled_step(x, y)
    float(loss)
    compiled_seconds = time.perf_counter() - start
    print(f"compiled: {args.steps} steps in {compiled_seconds:.3f} s "
          f"({compiled_seconds / max(args.steps, 1) * 1e6:.0f} µs/step, compile included), loss {float(loss):.4f}")
    print(f"y ≈ {a.numpy()}x + {b.numpy()}")
    return float(a.numpy()), float(b.numpy())


if __name__ == "__main__":
    main()
