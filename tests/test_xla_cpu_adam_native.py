"""The native Adam step (minikeras/xla_cpu/adam_native.cc) against Adam's jax code, bit for bit."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk
from minikeras.xla_cpu import adam_native, compiler, native_build, tuning

# Skipped where the kernels are off or cannot be built here (no compiler, another platform);
# a build that fails is a failure (as in test_xla_cpu_conv_native.py).
_UNAVAILABLE = "" if adam_native.available() else native_build.why_unavailable("adam_native.cc")
pytestmark = pytest.mark.skipif(bool(_UNAVAILABLE) and not _UNAVAILABLE.startswith("building"), reason=_UNAVAILABLE)

# a scalar, odd sizes, and one big enough to be shared among threads (tuning.ADAM_NATIVE_THREAD_ELEMENTS)
SHAPES = [(), (7,), (3, 3, 1, 5), (1 << 18) + 3]


def test_the_kernel_builds_where_a_compiler_is():
    assert adam_native.available()


def _jax_adam(p, m, v, g, alpha, beta_1, beta_2, epsilon):
    m = m + (g - m) * (1 - beta_1)
    v = v + (jnp.square(g) - v) * (1 - beta_2)
    return p - (m * alpha) / (jnp.sqrt(v) + epsilon), m, v


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_update_is_the_jax_formula_to_the_bit(shape):
    rng = np.random.default_rng(len(str(shape)))
    shape = shape if isinstance(shape, tuple) else (shape,)
    p, m, g = (rng.standard_normal(shape).astype(np.float32) for _ in range(3))
    v = np.abs(rng.standard_normal(shape)).astype(np.float32) * 1e-3
    alpha = np.float32(3.7e-3)
    for beta_1, beta_2, epsilon in [(0.9, 0.999, 1e-7), (0.5, 0.9, 1e-3)]:
        expected = jax.jit(_jax_adam, static_argnums=(5, 6, 7), compiler_options=compiler.cpu_options())(
            p, m, v, g, alpha, beta_1, beta_2, epsilon)
        got = jax.jit(adam_native.update, static_argnums=(5, 6, 7))(p, m, v, g, alpha, beta_1, beta_2, epsilon)
        for e, r in zip(expected, got):
            np.testing.assert_array_equal(np.asarray(r).view(np.uint32), np.asarray(e).view(np.uint32))


def _jax_adamw(p, m, v, g, alpha, lr, beta_1, beta_2, epsilon, weight_decay):
    """The optimizers' decoupled weight decay (``variable - variable * wd * lr``), then Adam."""
    return _jax_adam(p - p * np.float32(weight_decay) * lr, m, v, g, alpha, beta_1, beta_2, epsilon)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_update_with_weight_decay_is_the_jax_formula_to_the_bit(shape):
    rng = np.random.default_rng(7 + len(str(shape)))
    shape = shape if isinstance(shape, tuple) else (shape,)
    p, m, g = (rng.standard_normal(shape).astype(np.float32) for _ in range(3))
    v = np.abs(rng.standard_normal(shape)).astype(np.float32) * 1e-3
    alpha, lr = np.float32(3.7e-3), np.float32(1e-3)
    for weight_decay in (1e-4, 0.3):
        expected = jax.jit(_jax_adamw, static_argnums=(6, 7, 8, 9), compiler_options=compiler.cpu_options())(
            p, m, v, g, alpha, lr, 0.9, 0.999, 1e-7, weight_decay)
        got = jax.jit(lambda *a: adam_native.update(*a[:4], a[4], 0.9, 0.999, 1e-7, weight_decay=weight_decay,
                                                    learning_rate=a[5]))(p, m, v, g, alpha, lr)
        for e, r in zip(expected, got):
            np.testing.assert_array_equal(np.asarray(r).view(np.uint32), np.asarray(e).view(np.uint32))


def _train(native, steps=4, weight_decay=None):
    """Variables after ``steps`` Adam steps (AdamW with ``weight_decay``, its bias excluded) of a
    small model in an mk.function, native kernel on or off."""
    original = tuning.NATIVE_KERNELS
    tuning.NATIVE_KERNELS = native
    try:
        mk.random.set_seed(1)
        model = mk.Sequential([mk.Input((6,)), mk.layers.Dense(32, activation="relu"), mk.layers.Dense(3)])
        schedule = mk.optimizers.schedules.ExponentialDecay(1e-2, 2, 0.5)
        if weight_decay is None:
            optimizer = mk.optimizers.Adam(learning_rate=schedule)
        else:
            optimizer = mk.optimizers.AdamW(learning_rate=schedule, weight_decay=weight_decay)
            optimizer.exclude_from_weight_decay(var_names=["bias"])
        x = np.random.default_rng(0).standard_normal((16, 6)).astype(np.float32)
        y = np.arange(16) % 3

        @mk.function
        def step(x, y):
            with mk.GradientTape() as tape:
                loss = mk.losses.sparse_categorical_crossentropy(y, model(x), from_logits=True)
                loss = mk.reduce_mean(loss)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        for _ in range(steps):
            step(x, y)
        jaxpr = str(step.get_concrete_function(x, y).jaxpr)
        return [w.numpy() for w in model.weights + optimizer.variables], jaxpr
    finally:
        tuning.NATIVE_KERNELS = original


def test_training_with_the_kernel_is_training_without_it():
    native, native_program = _train(True)
    plain, plain_program = _train(False)
    assert "minikeras_adam_update" in native_program and "minikeras_adam_update" not in plain_program
    assert len(native) == len(plain)
    for a, b in zip(native, plain):
        np.testing.assert_array_equal(a, b)


def test_adamw_training_with_the_kernel_is_training_without_it():
    native, native_program = _train(True, weight_decay=0.05)
    plain, plain_program = _train(False, weight_decay=0.05)
    assert "minikeras_adamw_update" in native_program and "minikeras_adamw_update" not in plain_program
    assert "minikeras_adam_update" in native_program  # the excluded biases: no decay
    for a, b in zip(native, plain):
        np.testing.assert_array_equal(a, b)
    undecayed, _ = _train(True, weight_decay=0.0)
    assert not np.array_equal(native[0], undecayed[0])  # the kernels were decayed


def test_amsgrad_and_other_dtypes_keep_the_jax_code():
    assert not adam_native.supported((3,), jnp.float16)
    assert not adam_native.supported((3,), jnp.float64)
    variable = mk.Variable(np.ones(3, np.float32))
    optimizer = mk.optimizers.Adam(amsgrad=True)

    @mk.function
    def step():
        optimizer.apply_gradients([(mk.ones(3), variable)])

    step()
    assert "minikeras_adam_update" not in str(step.get_concrete_function().jaxpr)
