"""The tutorial's linear regression step: minikeras vs hand-written JAX, per step and per loop.

Per step (a Python loop calling a compiled step):
  * jax:  ``jax.jit`` of a step that takes ``jax.grad`` of the MSE and returns new (a, b),
  * mk:   the tutorial's step (two Variables, GradientTape, ``assign_sub(grad * 0.001)``)
          under ``mk.function``. Target: <= 2x jax.
Compiled loop (N steps in one call):
  * jax:  ``lax.fori_loop`` over the same step inside one ``jax.jit``, on x and y already on
          the device (uploaded once, outside the timing),
  * mk:   ``model.fit(x, y, steps_per_execution=N)`` on NumPy x and y with a two-Variable model
          and SGD(0.001) (the same update). Timed per fit call, so it includes all of fit: the
          data's way to the device, callbacks, metric resets, the logs. As in Keras, fit takes
          no more steps than the data has batches, so its x and y are the samples repeated N
          times (N full batches; made once, outside the timing, but uploaded by each fit call).
          Its step also computes the loss and updates the loss metric, which the jax step does
          not. Target: within 1.2x of jax.

Medians of interleaved runs (the machine's load moves the ratios by several percent).

    python benchmarks/linear_regression.py [--steps 2000] [--repeats 5]
"""
import argparse
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from common import block, interleaved  # noqa: E402

import minikeras as mk  # noqa: E402


def data(n=1000):
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, n).astype(np.float32)
    return x, (10 * x + 5 + rng.normal(0, 0.5, n)).astype(np.float32)


def loss(a, b, x, y):
    return jnp.mean(jnp.square(a * x + b - y))


@jax.jit
def jax_step(a, b, x, y):
    ga, gb = jax.grad(loss, (0, 1))(a, b, x, y)
    return a - ga * 0.001, b - gb * 0.001


def jax_loop(steps):
    @jax.jit
    def run(a, b, x, y):
        return jax.lax.fori_loop(0, steps, lambda _, ab: jax_step(ab[0], ab[1], x, y), (a, b))
    return run


class Line(mk.Model):
    """y = a * x + b."""

    def __init__(self):
        super().__init__()
        self.a = mk.Variable(0.5, name="a")
        self.b = mk.Variable(0.5, name="b")

    def call(self, x, training=None):
        return self.a * x + self.b


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    x_np, y_np = data()
    x, y = jnp.asarray(x_np), jnp.asarray(y_np)
    steps = args.steps

    state = [jnp.float32(0.5), jnp.float32(0.5)]

    def run_jax_steps():
        for _ in range(steps):
            state[0], state[1] = jax_step(state[0], state[1], x, y)
        block(state)

    a, b = mk.Variable(0.5), mk.Variable(0.5)

    @mk.function
    def mk_step(real_x, real_y):
        with mk.GradientTape() as tape:
            reg_loss = mk.reduce_mean(mk.square(a * real_x + b - real_y))
        grad_a, grad_b = tape.gradient(reg_loss, (a, b))
        a.assign_sub(grad_a * 0.001)
        b.assign_sub(grad_b * 0.001)
        return reg_loss

    xt, yt = mk.constant(x_np), mk.constant(y_np)

    def run_mk_steps():
        for _ in range(steps):
            out = mk_step(xt, yt)
        block(out)

    loop = jax_loop(steps)

    def run_jax_loop():
        block(loop(jnp.float32(0.5), jnp.float32(0.5), x, y))

    model = Line()
    model.compile(optimizer=mk.optimizers.SGD(0.001), loss="mse")
    x_fit, y_fit = np.tile(x_np, steps), np.tile(y_np, steps)  # one full batch for each step

    def run_mk_loop():
        model.fit(x_fit, y_fit, batch_size=len(x_np), epochs=1, steps_per_epoch=steps, steps_per_execution=steps,
                  shuffle=False, verbose=0)
        block(model.a.value())

    for warm in (run_jax_steps, run_mk_steps, run_jax_loop, run_mk_loop):
        warm()
    times = interleaved({"jax step": run_jax_steps, "mk step": run_mk_steps,
                         "jax fori_loop": run_jax_loop, "mk fit loop": run_mk_loop}, args.repeats)
    per_step = {name: t / steps * 1e6 for name, t in times.items()}
    print(f"jax {jax.__version__} on {jax.default_backend()}, {steps} steps, median of {args.repeats}")
    print(f"  per-step calls:  jax {per_step['jax step']:.1f} µs, mk.function {per_step['mk step']:.1f} µs "
          f"-> {per_step['mk step'] / per_step['jax step']:.2f}x (target <= 2x)")
    print(f"  compiled loop:   jax fori_loop {per_step['jax fori_loop']:.2f} µs/step, mk fit(steps_per_execution) "
          f"{per_step['mk fit loop']:.2f} µs/step -> {per_step['mk fit loop'] / per_step['jax fori_loop']:.2f}x "
          "(target <= 1.2x)")
    print(f"  fitted: a={float(model.a.numpy()):.3f}, b={float(model.b.numpy()):.3f} (mk fit loop, all runs)")


if __name__ == "__main__":
    main()
