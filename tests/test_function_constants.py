"""Tracing a training step compiles the step, not its constants op by op.

mk.function computes constants eagerly while it traces (a layer builds its weights on the first
call), and every eager jax op compiles a program of its own per shape (~5-25 ms each). The
gradient's seed chain (a mean's 1 / n, the broadcast back to the batch), the rules' zeros, the
dropout counters and the pooling tap order must therefore be staged into the step or built with
NumPy. (The classic MNIST CNN's first call still compiles 7 small programs besides the step: the
random seed's, the gradient's seed, and the optimizer's slots.)
"""
import logging
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk

# jax primitives that the constants of the step below used to compile one by one
_CONSTANT_OPS = {"iota", "reshape", "broadcast_in_dim", "convert_element_type", "true_divide", "multiply",
                 "negative", "select_n", "eq", "max"}


@pytest.fixture
def compiled_programs(caplog):
    """The names of the programs XLA has compiled so far in the test (from jax's debug log)."""
    caplog.set_level(logging.DEBUG, logger="jax._src.dispatch")

    def names():
        return re.findall(r"Finished XLA compilation of jit\((\S+?)\)", caplog.text)
    return names


def test_tracing_a_cnn_step_compiles_no_constant_op_by_op(compiled_programs):
    mk.random.set_seed(3)
    mk.random.uniform((2,))  # the seed generator's own first-use compiles, out of the way
    # odd shapes that other tests do not use, so that no eager op is already compiled
    model = mk.Sequential([mk.Input((9, 9, 1)), mk.layers.Conv2D(5, 3, activation="relu"), mk.layers.MaxPooling2D(),
                           mk.layers.Dropout(0.3), mk.layers.Flatten(), mk.layers.Dense(3, activation="softmax")])
    optimizer = mk.optimizers.SGD(0.1)
    loss_fn = mk.losses.SparseCategoricalCrossentropy()
    optimizer.build(model.trainable_variables)

    @mk.function
    def step(x, y):
        with mk.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    x = np.random.default_rng(0).random((3, 9, 9, 1), dtype=np.float32)
    before = len(compiled_programs())
    loss = float(step(x, np.array([0, 1, 2], np.int32)))
    compiled = compiled_programs()[before:]
    assert np.isfinite(loss)
    assert "_jit_body" in compiled, compiled  # the step itself
    assert not _CONSTANT_OPS & set(compiled), compiled
    assert len(compiled) <= 3, compiled  # the step, the gradient's seed, at most one more


def test_gradients_through_where_relu_and_maximum_stay_exact():
    # their rules broadcast a scalar zero; the values must be jax's
    x = np.array([[-1.0, 0.0, 2.0], [3.0, -4.0, 0.5]], np.float32)
    y = np.array([0.5, 0.25, 1.0], np.float32)  # no ties with x: jax splits the gradient of a tie, TF does not

    @mk.function
    def grads(x, y):
        xs, ys = mk.constant(x), mk.constant(y)
        with mk.GradientTape() as tape:
            tape.watch([xs, ys])
            out = mk.reduce_sum(mk.nn.relu(xs) * 2.0 + mk.maximum(xs, ys) + mk.where(xs > 0.4, xs * xs, ys))
        return tape.gradient(out, [xs, ys])

    def reference(x, y):
        return jnp.sum(jax.nn.relu(x) * 2.0 + jnp.maximum(x, y) + jnp.where(x > 0.4, x * x, y))

    got = grads(x, y)
    want = jax.grad(reference, argnums=(0, 1))(x, y)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), np.asarray(w), rtol=1e-6)
