"""``model.fit`` vs a hand-written ``jax.jit`` + optax training loop on the MNIST MLP.

The model is Flatten -> Dense(128, relu) -> Dense(10), trained with Adam (Keras defaults) on
sparse softmax cross-entropy from logits, batch 64, shuffled each epoch. Both sides start from
the same weights and see the same kind of data (MNIST when ``MINIKERAS_DATASETS`` points at it,
random images otherwise). The hand-written loop is what a JAX user writes: one jitted step
taking (params, opt_state, x, y), fed NumPy batches sliced from a permutation.

Printed: steady-state samples/s of each side and the ratios fit / jax for
``steps_per_execution=1`` (target >= 0.8) and ``steps_per_execution=50`` (target >= 0.95).

    python benchmarks/train_step_mlp.py [--samples 6400] [--repeats 7]

Rounds are short and interleaved, and the best round of each counts, so that load from other
processes on a shared machine affects all sides alike. On a busy machine wall-clock rates
swing with the load, so the process's CPU time per epoch (all threads, XLA's included) is
reported as well: it measures the work each side does, which the load does not change.
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

BATCH = 64
LR, BETA_1, BETA_2, EPSILON = 0.001, 0.9, 0.999, 1e-7


def load_images(samples):
    try:
        (x, y), _ = mk.datasets.mnist.load_data()
        source = "MNIST"
    except Exception as error:  # no dataset on this machine: random images of the same shape
        print(f"(MNIST not available: {error}; using random images)")
        rng = np.random.default_rng(0)
        x, y = rng.integers(0, 256, (samples, 28, 28), dtype=np.uint8), rng.integers(0, 10, samples)
        source = "random"
    return (x[:samples].astype(np.float32) / 255.0), y[:samples].astype(np.int32), source


def make_model(steps_per_execution):
    model = mk.Sequential([mk.layers.Flatten(input_shape=(28, 28)),
                           mk.layers.Dense(128, activation="relu"),
                           mk.layers.Dense(10)])
    model.compile(optimizer=mk.optimizers.Adam(learning_rate=LR, beta_1=BETA_1, beta_2=BETA_2, epsilon=EPSILON),
                  loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True),
                  steps_per_execution=steps_per_execution)
    return model


def jax_reference(weights):
    """The hand-written loop: params as a list of arrays, optax.adam, one jitted step."""
    optimizer = optax.adam(LR, b1=BETA_1, b2=BETA_2, eps=EPSILON)

    def loss_fn(params, x, y):
        k1, b1, k2, b2 = params
        hidden = jax.nn.relu(x.reshape(x.shape[0], -1) @ k1 + b1)
        logits = hidden @ k2 + b2
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    @jax.jit
    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    params = [jnp.asarray(w) for w in weights]
    state = {"params": params, "opt_state": optimizer.init(params)}

    def run_epoch(x, y, rng):
        order = rng.permutation(len(x))
        params, opt_state = state["params"], state["opt_state"]
        for start in range(0, len(x) - BATCH + 1, BATCH):
            index = order[start:start + BATCH]
            params, opt_state, loss = step(params, opt_state, x[index], y[index])
        jax.block_until_ready(params)
        state["params"], state["opt_state"] = params, opt_state

    return run_epoch


def fit_epoch(model):
    def run_epoch(x, y, rng):
        model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=True, verbose=0)
        jax.block_until_ready([v._value for v in model.variables])
    return run_epoch


def time_epoch(run_epoch, x, y, rng, wall, cpu):
    start, start_cpu = time.perf_counter(), time.process_time()
    run_epoch(x, y, rng)
    wall.append(time.perf_counter() - start)
    cpu.append(time.process_time() - start_cpu)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=6400, help="samples per epoch (a multiple of 64 * 50)")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    x, y, source = load_images(args.samples)
    mk.random.set_seed(0)
    single, grouped = make_model(1), make_model(50)
    grouped.set_weights(single.get_weights())
    sides = {"jax.jit + optax": jax_reference(single.get_weights()),
             "fit": fit_epoch(single),
             "fit, steps_per_execution=50": fit_epoch(grouped)}
    rng = np.random.default_rng(0)
    for run_epoch in sides.values():  # compile and warm up
        run_epoch(x, y, rng)
    wall = {name: [] for name in sides}
    cpu = {name: [] for name in sides}
    for _ in range(args.repeats):
        for name, run_epoch in sides.items():
            time_epoch(run_epoch, x, y, rng, wall[name], cpu[name])

    print(f"MLP 784-128-10, Adam, batch {BATCH}, {len(x)} {source} samples per epoch, "
          f"{jax.default_backend()} ({jax.devices()[0].device_kind}), best of {args.repeats}")
    print(f"  {'':30s} {'samples/s (wall)':>18s} {'median':>10s} {'samples per CPU-s':>18s}")
    for name in sides:
        print(f"  {name:30s} {len(x) / min(wall[name]):18,.0f} {len(x) / np.median(wall[name]):10,.0f} "
              f"{len(x) / min(cpu[name]):18,.0f}")
    for name, target in (("fit", 0.8), ("fit, steps_per_execution=50", 0.95)):
        by_wall = min(wall["jax.jit + optax"]) / min(wall[name])
        by_cpu = min(cpu["jax.jit + optax"]) / min(cpu[name])
        print(f"ratio {name + ' / jax':40s} wall {by_wall:.2f}   CPU {by_cpu:.2f}   (target >= {target})")


if __name__ == "__main__":
    main()
