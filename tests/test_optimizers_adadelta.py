"""Adadelta against Keras 3's written rule and optax.adadelta; its defaults and slots."""
import numpy as np
import optax
import pytest
from optimizer_reference import assert_same, run_mk, run_numpy, run_optax

import minikeras as mk
from minikeras import optimizers

KERAS_DEFAULTS = {"name": "adadelta", "learning_rate": 0.001, "weight_decay": None, "clipnorm": None,
                  "global_clipnorm": None, "clipvalue": None, "use_ema": False, "ema_momentum": 0.99,
                  "ema_overwrite_frequency": None, "loss_scale_factor": None, "gradient_accumulation_steps": None,
                  "rho": 0.95, "epsilon": 1e-07}


def numpy_adadelta(lr, rho=0.95, eps=1e-7):
    def update(t, w, g, s):
        acc_g, acc_delta = s
        acc_g = rho * acc_g + (1 - rho) * g * g
        delta = -np.sqrt(acc_delta + eps) * g / np.sqrt(acc_g + eps)
        acc_delta = rho * acc_delta + (1 - rho) * delta * delta
        return w + lr * delta, (acc_g, acc_delta)
    return update, lambda w: (np.zeros_like(w),) * 2


@pytest.mark.parametrize("kwargs", [{}, {"rho": 0.8, "epsilon": 1e-4}], ids=["default", "options"])
def test_adadelta_matches_keras_formula_and_optax(kwargs):
    rho, eps = kwargs.get("rho", 0.95), kwargs.get("epsilon", 1e-7)
    result = run_mk(optimizers.Adadelta(learning_rate=1.0, **kwargs))
    assert_same(result, run_numpy(*numpy_adadelta(1.0, rho, eps)))
    assert_same(result, run_optax(optax.adadelta(1.0, rho=rho, eps=eps)))


def test_adadelta_defaults_and_slots():
    optimizer = optimizers.get("adadelta")
    assert optimizer.get_config() == pytest.approx(KERAS_DEFAULTS)
    kernel = mk.Variable(np.zeros((3, 2), np.float32), name="kernel")
    kernel.path = "dense/kernel"
    optimizer.build([kernel])
    assert [v.name for v in optimizer.variables][2:] == ["dense_kernel_accumulated_grad",
                                                         "dense_kernel_accumulated_delta_var"]
