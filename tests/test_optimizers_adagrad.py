"""Adagrad against Keras 3's written rule and optax.adagrad; its defaults and slots."""
import numpy as np
import optax
import pytest
from optimizer_reference import assert_same, run_mk, run_numpy, run_optax

import minikeras as mk
from minikeras import optimizers

KERAS_DEFAULTS = {"name": "adagrad", "learning_rate": 0.001, "weight_decay": None, "clipnorm": None,
                  "global_clipnorm": None, "clipvalue": None, "use_ema": False, "ema_momentum": 0.99,
                  "ema_overwrite_frequency": None, "loss_scale_factor": None, "gradient_accumulation_steps": None,
                  "initial_accumulator_value": 0.1, "epsilon": 1e-07}


def numpy_adagrad(lr, initial=0.1, eps=1e-7, wd=None):
    def update(t, w, g, acc):
        if wd is not None:
            w = w - w * wd * lr
        acc = acc + g * g
        return w - lr * g / np.sqrt(acc + eps), acc
    return update, lambda w: np.full_like(w, initial)


@pytest.mark.parametrize("kwargs", [{}, {"initial_accumulator_value": 0.5, "epsilon": 1e-3}, {"weight_decay": 0.2}],
                         ids=["default", "options", "weight_decay"])
def test_adagrad_matches_keras_formula_and_optax(kwargs):
    initial, eps = kwargs.get("initial_accumulator_value", 0.1), kwargs.get("epsilon", 1e-7)
    result = run_mk(optimizers.Adagrad(learning_rate=0.1, **kwargs))
    assert_same(result, run_numpy(*numpy_adagrad(0.1, initial, eps, kwargs.get("weight_decay"))))
    if "weight_decay" in kwargs:  # decoupled decay: optax adds wd * w to the step before scaling by -lr
        expected = optax.chain(optax.scale_by_rss(initial, eps), optax.add_decayed_weights(0.2), optax.scale(-0.1))
    else:
        expected = optax.adagrad(0.1, initial_accumulator_value=initial, eps=eps)
    assert_same(result, run_optax(expected))


def test_adagrad_defaults_and_slots():
    optimizer = optimizers.get("Adagrad")
    assert optimizer.get_config() == pytest.approx(KERAS_DEFAULTS)
    kernel = mk.Variable(np.zeros((3, 2), np.float32), name="kernel")
    kernel.path = "dense/kernel"
    optimizer.build([kernel])
    assert [v.path for v in optimizer.variables] == [
        "adagrad/iteration", "adagrad/learning_rate", "adagrad/dense_kernel_accumulator"]
    np.testing.assert_array_equal(optimizer.variables[2].numpy(), np.full((3, 2), 0.1, np.float32))
    clone = optimizers.Adagrad.from_config(optimizers.Adagrad(initial_accumulator_value=0.3).get_config())
    assert clone.initial_accumulator_value == 0.3
