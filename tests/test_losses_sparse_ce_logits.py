"""Sparse categorical cross-entropy of logits as one op (``ops.nn_losses``): Keras's value
``-sum(one_hot(labels) * log_softmax(logits))``, a label outside [0, n) giving 0 (inside a compiled
step, where the eager range check cannot run), gradients and Hessian-vector products against
``jax.grad`` of that formula, compiled and eager."""
import jax
import jax.numpy as jnp
import numpy as np
from conftest import assert_close, check_grad

import minikeras as mk
from minikeras import losses
from minikeras.ops.nn_losses import sparse_categorical_crossentropy_from_logits

RNG = np.random.default_rng(3)
LOGITS = (RNG.normal(size=(2, 3, 7)) * 3).astype(np.float32)
LABELS = np.array([[0, 6, 2], [5, 1, 3]], np.int32)
OUT_OF_RANGE = np.array([[0, 7, 2], [-1, 1, 3]], np.int32)


def keras_formula(labels):
    """Keras 3's jax backend: one-hot rows (zeros for a label outside [0, n)) times log-softmax."""
    return lambda logits: -jnp.sum(jax.nn.one_hot(labels, logits.shape[-1]) * jax.nn.log_softmax(logits), -1)


def test_values_gradients_and_hessian_match_jax():
    check_grad(lambda x, t: sparse_categorical_crossentropy_from_logits(t, x),
               lambda x, t: keras_formula(t)(x), LOGITS, LABELS, wrt=[0], order=2)


def test_labels_outside_the_classes_give_zero_loss_and_gradient_in_a_compiled_step():
    loss_fn = losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum")

    @mk.function
    def value_and_gradient(labels, logits):
        with mk.GradientTape() as tape:
            tape.watch(logits)
            value = loss_fn(labels, logits)
        return value, tape.gradient(value, logits)

    value, grad = value_and_gradient(mk.constant(OUT_OF_RANGE), mk.constant(LOGITS))
    expected, expected_grad = jax.value_and_grad(lambda x: keras_formula(OUT_OF_RANGE)(x).sum())(LOGITS)
    assert_close(value, expected, rtol=1e-5)
    assert_close(grad, expected_grad, rtol=1e-5, atol=1e-6)
    assert np.all(grad.numpy()[0, 1] == 0) and np.all(grad.numpy()[1, 0] == 0)


def test_the_keras_loss_takes_the_fused_op_for_logits_on_the_last_axis():
    loss_fn = losses.SparseCategoricalCrossentropy(from_logits=True)
    logits = mk.constant(LOGITS)
    with mk.GradientTape() as tape:
        tape.watch(logits)
        value = loss_fn(LABELS, logits)
    expected, expected_grad = jax.value_and_grad(lambda x: keras_formula(LABELS)(x).mean())(LOGITS)
    assert_close(value, expected, rtol=1e-5)
    assert_close(tape.gradient(value, logits), expected_grad, rtol=1e-5, atol=1e-7)
    # the class axis elsewhere keeps the one-hot formula; the same numbers
    moved = mk.constant(np.moveaxis(LOGITS, -1, 1))
    assert_close(losses.sparse_categorical_crossentropy(LABELS, moved, from_logits=True, axis=1),
                 keras_formula(LABELS)(LOGITS), rtol=1e-5)


def test_narrow_integer_labels_of_many_classes():
    logits = (RNG.normal(size=(3, 300)) * 3).astype(np.float32)
    for dtype in (np.int8, np.uint8, np.int16):
        labels = np.array([1, 100, 5], dtype)
        assert_close(sparse_categorical_crossentropy_from_logits(mk.constant(labels), mk.constant(logits)),
                     keras_formula(labels.astype(np.int32))(logits), rtol=1e-5)
