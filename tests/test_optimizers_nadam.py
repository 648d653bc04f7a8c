"""Nadam against Keras 3's written rule (Dozat's momentum schedule); its defaults and slots.

optax.nadam is a different algorithm (Adam with a Nesterov step and no 0.96 momentum
schedule), so the reference here is the formula alone."""
import numpy as np
import pytest
from optimizer_reference import assert_same, numpy_nadam, run_mk, run_numpy

import minikeras as mk
from minikeras import optimizers

KERAS_DEFAULTS = {"name": "nadam", "learning_rate": 0.001, "weight_decay": None, "clipnorm": None,
                  "global_clipnorm": None, "clipvalue": None, "use_ema": False, "ema_momentum": 0.99,
                  "ema_overwrite_frequency": None, "loss_scale_factor": None, "gradient_accumulation_steps": None,
                  "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-07}


@pytest.mark.parametrize("kwargs", [{}, {"beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-3}], ids=["default", "options"])
def test_nadam_matches_keras_formula(kwargs):
    reference = numpy_nadam(0.01, kwargs.get("beta_1", 0.9), kwargs.get("beta_2", 0.999), kwargs.get("epsilon", 1e-7))
    optimizer = optimizers.Nadam(learning_rate=0.01, **kwargs)
    assert_same(run_mk(optimizer), run_numpy(*reference))
    b1 = kwargs.get("beta_1", 0.9)
    expected_u_product = np.prod([b1 * (1 - 0.5 * 0.96 ** k) for k in range(1, 6)])
    assert float(optimizer.variables[-1].numpy()) == pytest.approx(expected_u_product, rel=1e-6)


def test_nadam_defaults_and_slots():
    optimizer = optimizers.get("nadam")
    assert optimizer.get_config() == pytest.approx(KERAS_DEFAULTS)
    kernel = mk.Variable(np.zeros((3, 2), np.float32), name="kernel")
    kernel.path = "dense/kernel"
    optimizer.build([kernel])
    # Keras 3 order; its scalar momentum product is a plain Variable named "variable", created last
    assert [v.path for v in optimizer.variables] == [
        "nadam/iteration", "nadam/learning_rate", "nadam/dense_kernel_momentum", "nadam/dense_kernel_velocity",
        "nadam/variable"]
    assert optimizer.variables[-1].shape == () and float(optimizer.variables[-1].numpy()) == 1.0
