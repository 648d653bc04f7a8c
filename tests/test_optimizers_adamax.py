"""Adamax against Keras 3's written rule and optax.adamax; its defaults and slots."""
import numpy as np
import optax
import pytest
from optimizer_reference import assert_same, run_mk, run_numpy, run_optax

import minikeras as mk
from minikeras import optimizers

KERAS_DEFAULTS = {"name": "adamax", "learning_rate": 0.001, "weight_decay": None, "clipnorm": None,
                  "global_clipnorm": None, "clipvalue": None, "use_ema": False, "ema_momentum": 0.99,
                  "ema_overwrite_frequency": None, "loss_scale_factor": None, "gradient_accumulation_steps": None,
                  "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-07}


def numpy_adamax(lr, b1=0.9, b2=0.999, eps=1e-7):
    def update(t, w, g, s):
        m, u = s
        m = m + (g - m) * (1 - b1)
        u = np.maximum(b2 * u, np.abs(g))
        return w - lr * m / ((1 - b1 ** t) * (u + eps)), (m, u)
    return update, lambda w: (np.zeros_like(w),) * 2


@pytest.mark.parametrize("kwargs", [{}, {"beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-3}], ids=["default", "options"])
def test_adamax_matches_keras_formula(kwargs):
    reference = numpy_adamax(0.01, kwargs.get("beta_1", 0.9), kwargs.get("beta_2", 0.999), kwargs.get("epsilon", 1e-7))
    assert_same(run_mk(optimizers.Adamax(learning_rate=0.01, **kwargs)), run_numpy(*reference))


def test_adamax_matches_optax_with_epsilon_zero():
    # Keras adds epsilon to u in the denominator, optax to |g| inside the max: equal for eps = 0.
    assert_same(run_mk(optimizers.Adamax(learning_rate=0.01, beta_1=0.8, epsilon=0.0)),
                run_optax(optax.adamax(0.01, b1=0.8, eps=0.0)))


def test_adamax_defaults_and_slots():
    optimizer = optimizers.get("adamax")
    assert optimizer.get_config() == pytest.approx(KERAS_DEFAULTS)
    kernel, bias = mk.Variable(np.zeros((3, 2), np.float32), name="kernel"), mk.Variable(np.zeros(2, np.float32))
    kernel.path, bias.path = "dense/kernel", "dense/bias"
    optimizer.build([kernel, bias])
    assert [v.name for v in optimizer.variables] == [
        "iteration", "learning_rate", "dense_kernel_momentum", "dense_kernel_norm", "dense_bias_momentum",
        "dense_bias_norm"]
