"""The exercises at the end of TensorFlow's GradientTape tutorials, each a program with a check.

1. Binary classification (two moons) with a GradientTape loop and with ``model.fit``: the same
   model, seed, batches and optimizer, so the same loss curve and accuracy.
2. A Hessian with nested tapes (``jacobian`` of ``gradient``), equal to ``jax.hessian``; then
   the Hessian of a small MLP's loss with respect to its last layer, and its eigenvalues.
3. Momentum written from scratch with ``assign``/``assign_sub``, step for step equal to
   ``mk.optimizers.SGD(momentum=0.9)``.
4. A custom layer with its own ``add_weight`` (learnable radial basis functions), trained with a
   tape, saved to a ``.keras`` file and loaded back.

(The fifth, gradient checkpointing, is ``mk.recompute_grad``: ``benchmarks/recompute.py``.)

    python examples/tape_exercises.py            # ~20 s
    MINIKERAS_QUICK=1 python examples/tape_exercises.py
"""
import argparse
import os
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np

import minikeras as mk


# -- data ---------------------------------------------------------------------------------
def two_moons(n=1024, noise=0.15, seed=0):
    """``n`` points of scikit-learn's two interleaving half circles, labels 0/1 (float32)."""
    rng = np.random.default_rng(seed)
    half = n // 2
    angle = rng.uniform(0, np.pi, n)
    upper = np.stack([np.cos(angle[:half]), np.sin(angle[:half])], axis=1)
    lower = np.stack([1 - np.cos(angle[half:]), 0.5 - np.sin(angle[half:])], axis=1)
    x = np.concatenate([upper, lower]) + rng.normal(0, noise, (n, 2))
    y = np.concatenate([np.zeros(half), np.ones(n - half)])
    order = rng.permutation(n)
    return x[order].astype(np.float32), y[order, None].astype(np.float32)


def mlp(seed=0):
    """2 -> 16 -> 16 -> 1 (a logit)."""
    mk.random.set_seed(seed)
    return mk.Sequential([mk.Input((2,)), mk.layers.Dense(16, activation="tanh"),
                          mk.layers.Dense(16, activation="tanh"), mk.layers.Dense(1)])


# -- 1. tape loop vs fit --------------------------------------------------------------------
def tape_vs_fit(epochs=20, batch_size=32, n=1024):
    """Trains the same MLP (same seed) on two moons with a tape loop and with ``fit``.

    Returns {"tape": per-epoch mean losses, "fit": ..., "tape_accuracy", "fit_accuracy"}.
    Both see the batches in file order (``shuffle=False``) with Adam(1e-2)."""
    x, y = two_moons(n)
    loss_fn = mk.losses.BinaryCrossentropy(from_logits=True)

    model = mlp()
    optimizer = mk.optimizers.Adam(1e-2)

    @mk.function
    def train_step(xb, yb):
        with mk.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    tape_losses = []
    for _ in range(epochs):
        losses = [float(train_step(x[i:i + batch_size], y[i:i + batch_size])) for i in range(0, n, batch_size)]
        tape_losses.append(float(np.mean(losses)))
    tape_accuracy = accuracy(model, x, y)

    fit_model = mlp()
    fit_model.compile(optimizer=mk.optimizers.Adam(1e-2), loss=mk.losses.BinaryCrossentropy(from_logits=True))
    history = fit_model.fit(x, y, batch_size=batch_size, epochs=epochs, shuffle=False, verbose=0)
    return {"tape": tape_losses, "fit": history.history["loss"], "tape_accuracy": tape_accuracy,
            "fit_accuracy": accuracy(fit_model, x, y), "model": fit_model, "data": (x, y)}


def accuracy(model, x, y):
    return float(np.mean((np.asarray(model(x)) > 0) == (y > 0.5)))


# -- 2. Hessians ------------------------------------------------------------------------------
A = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, -0.3], [0.0, -0.3, 3.0]], np.float32)


def scalar_function(x):
    """f(x) = sum(sin(x) * x^2) + x^T A x / 2 + log(1 + |x|^2), in minikeras ops."""
    return (mk.reduce_sum(mk.sin(x) * x ** 2)
            + 0.5 * mk.reduce_sum(x * mk.reshape(mk.matmul(A, mk.reshape(x, (3, 1))), (3,)))
            + mk.math.log(1.0 + mk.reduce_sum(x ** 2)))


def scalar_function_jax(x):
    return jnp.sum(jnp.sin(x) * x ** 2) + 0.5 * x @ A @ x + jnp.log(1.0 + jnp.sum(x ** 2))


def nested_hessian(f, x):
    """The Hessian of scalar ``f`` at ``x`` with two tapes: the jacobian of the gradient."""
    x = mk.constant(x)
    with mk.GradientTape() as outer:
        outer.watch(x)
        with mk.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    return outer.jacobian(g, x).numpy()


def last_layer_hessian(model, x, y):
    """The Hessian of the mean binary cross-entropy w.r.t. the last Dense kernel (flattened),
    with nested tapes, and the same with ``jax.hessian`` of a hand-written jax loss."""
    kernel = model.layers[-1].kernel
    loss_fn = mk.losses.BinaryCrossentropy(from_logits=True)
    with mk.GradientTape() as outer:
        with mk.GradientTape() as inner:
            loss = loss_fn(y, model(x))
        g = inner.gradient(loss, kernel)
    hessian = outer.jacobian(g, kernel).numpy()
    n = int(np.prod(kernel.shape))
    hessian = hessian.reshape(n, n)

    features = np.asarray(mk.Sequential(model.layers[:-1])(x))  # the last layer's inputs
    bias = np.asarray(model.layers[-1].bias)

    def jax_loss(k):
        logits = features @ k.reshape(kernel.shape) + bias
        return jnp.mean(jnp.maximum(logits, 0) - logits * y + jnp.log1p(jnp.exp(-jnp.abs(logits))))

    reference = jax.hessian(jax_loss)(np.asarray(kernel).reshape(-1))
    return hessian, np.asarray(reference)


# -- 3. momentum from scratch -------------------------------------------------------------------
def momentum_from_scratch(steps=50, learning_rate=0.1, momentum=0.9, batch_size=64):
    """Trains two copies of the MLP, one with a hand-written momentum update and one with
    ``SGD(momentum=0.9)``; asserts their weights agree after every step. Returns the max
    absolute difference seen and the per-step losses of the hand-written one."""
    x, y = two_moons(1024)
    loss_fn = mk.losses.BinaryCrossentropy(from_logits=True)
    mine, theirs = mlp(seed=1), mlp(seed=1)
    velocities = [mk.Variable(np.zeros(v.shape, np.float32), trainable=False) for v in mine.trainable_variables]
    sgd = mk.optimizers.SGD(learning_rate, momentum=momentum)

    @mk.function
    def my_step(xb, yb):
        with mk.GradientTape() as tape:
            loss = loss_fn(yb, mine(xb, training=True))
        for variable, velocity, grad in zip(mine.trainable_variables, velocities,
                                            tape.gradient(loss, mine.trainable_variables)):
            # Keras's form: v <- momentum * v - lr * g; w <- w + v
            velocity.assign(momentum * velocity - learning_rate * grad)
            variable.assign_sub(-velocity)
        return loss

    @mk.function
    def sgd_step(xb, yb):
        with mk.GradientTape() as tape:
            loss = loss_fn(yb, theirs(xb, training=True))
        sgd.apply_gradients(zip(tape.gradient(loss, theirs.trainable_variables), theirs.trainable_variables))
        return loss

    worst, losses = 0.0, []
    for step in range(steps):
        i = (step * batch_size) % len(x)
        losses.append(float(my_step(x[i:i + batch_size], y[i:i + batch_size])))
        sgd_step(x[i:i + batch_size], y[i:i + batch_size])
        for a, b in zip(mine.trainable_variables, theirs.trainable_variables):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"step {step + 1}: {a.name} differs")
            worst = max(worst, float(np.max(np.abs(a.numpy() - b.numpy()))))
    return worst, losses


# -- 4. a custom layer ----------------------------------------------------------------------------
@mk.saving.register_keras_serializable(package="tape_exercises")
class RBF(mk.layers.Layer):
    """``units`` Gaussian bumps exp(-|x - c_j|^2 / (2 s_j^2)) with learnable centres c_j and
    widths s_j (kept positive as exp of a learnable log)."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = int(units)

    def build(self, input_shape):
        self.centers = self.add_weight(name="centers", shape=(self.units, input_shape[-1]),
                                       initializer=mk.initializers.RandomUniform(-1.0, 2.0))
        self.log_widths = self.add_weight(name="log_widths", shape=(self.units,), initializer="zeros")

    def call(self, x):
        squared = mk.reduce_sum((x[:, None, :] - self.centers[None]) ** 2, axis=-1)
        return mk.exp(-squared / (2.0 * mk.exp(2.0 * self.log_widths)))

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def custom_layer(steps=300, directory=None):
    """Trains RBF(16) -> Dense(1) on two moons with a tape, saves it to a .keras file and loads it
    back. Returns (accuracy, accuracy of the loaded model, largest prediction difference)."""
    x, y = two_moons(1024)
    mk.random.set_seed(2)
    model = mk.Sequential([mk.Input((2,)), RBF(16), mk.layers.Dense(1)])
    optimizer = mk.optimizers.Adam(0.05)
    loss_fn = mk.losses.BinaryCrossentropy(from_logits=True)

    @mk.function
    def step(xb, yb):
        with mk.GradientTape() as tape:
            loss = loss_fn(yb, model(xb))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    for i in range(steps):
        j = (i * 128) % len(x)
        step(x[j:j + 128], y[j:j + 128])
    with tempfile.TemporaryDirectory(dir=directory) as folder:
        path = os.path.join(folder, "rbf.keras")
        model.save(path)
        loaded = mk.models.load_model(path)
    difference = float(np.max(np.abs(np.asarray(loaded(x)) - np.asarray(model(x)))))
    return accuracy(model, x, y), accuracy(loaded, x, y), difference, model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", default=os.environ.get("MINIKERAS_QUICK") == "1")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    results = {}

    both = tape_vs_fit(epochs=5 if args.quick else 30)
    gap = max(abs(a - b) for a, b in zip(both["tape"], both["fit"]))
    print(f"1. two moons: tape loop accuracy {both['tape_accuracy']:.4f}, fit accuracy {both['fit_accuracy']:.4f}; "
          f"final loss tape {both['tape'][-1]:.4f}, fit {both['fit'][-1]:.4f} (largest per-epoch gap {gap:.1e})")
    results["tape_vs_fit"] = both

    x0 = np.array([0.3, -1.2, 0.7], np.float32)
    ours, reference = nested_hessian(scalar_function, x0), np.asarray(jax.hessian(scalar_function_jax)(x0))
    print(f"2. Hessian by nested tapes vs jax.hessian: max |difference| {np.max(np.abs(ours - reference)):.1e}")
    x, y = both["data"]
    hessian, hessian_reference = last_layer_hessian(both["model"], x[:256], y[:256])
    eigenvalues = np.linalg.eigvalsh(0.5 * (hessian + hessian.T))
    print(f"   MLP last layer (16 weights): max |difference| {np.max(np.abs(hessian - hessian_reference)):.1e}, "
          f"eigenvalues from {eigenvalues[0]:.2e} to {eigenvalues[-1]:.2e}")
    results.update(hessian=(ours, reference), last_layer=(hessian, hessian_reference, eigenvalues))

    worst, losses = momentum_from_scratch(steps=20 if args.quick else 100)
    print(f"3. momentum from scratch = SGD(momentum=0.9) for {len(losses)} steps: max |weight difference| "
          f"{worst:.1e}; loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    results["momentum"] = (worst, losses)

    acc, acc_loaded, difference, _ = custom_layer(steps=60 if args.quick else 300)
    print(f"4. RBF layer: accuracy {acc:.4f}; saved and loaded: accuracy {acc_loaded:.4f}, "
          f"max |prediction difference| {difference:.1e}")
    results["custom_layer"] = (acc, acc_loaded, difference)
    print(f"wall time {time.perf_counter() - start:.1f} s")
    return results


if __name__ == "__main__":
    main()
