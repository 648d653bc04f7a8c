"""AdamW against Keras 3's written rule (decay, then Adam) and optax.adamw; its defaults and errors."""
import optax
import pytest
from optimizer_reference import assert_same, numpy_adam, run_mk, run_numpy, run_optax

from minikeras import optimizers

KERAS_DEFAULTS = {"name": "adam_w", "learning_rate": 0.001, "weight_decay": 0.004, "clipnorm": None,
                  "global_clipnorm": None, "clipvalue": None, "use_ema": False, "ema_momentum": 0.99,
                  "ema_overwrite_frequency": None, "loss_scale_factor": None, "gradient_accumulation_steps": None,
                  "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-07, "amsgrad": False}


def numpy_adamw(lr, wd, **adam):
    adam_update, slots = numpy_adam(lr=lr, **adam)

    def update(t, w, g, s):
        return adam_update(t, w - w * wd * lr, g, s)
    return update, slots


@pytest.mark.parametrize("kwargs", [{}, {"weight_decay": 0.1, "amsgrad": True}], ids=["default", "wd_amsgrad"])
def test_adamw_matches_keras_formula(kwargs):
    reference = numpy_adamw(0.01, kwargs.get("weight_decay", 0.004), amsgrad=kwargs.get("amsgrad", False))
    assert_same(run_mk(optimizers.AdamW(learning_rate=0.01, **kwargs)), run_numpy(*reference))


def test_adamw_matches_optax_with_epsilon_zero():
    # optax adds lr * wd * w to Adam's step; Keras first scales w by (1 - lr * wd): the same sum
    # (Adam's step does not read w). The epsilons sit differently (see Adam), so eps = 0.
    assert_same(run_mk(optimizers.AdamW(learning_rate=0.01, weight_decay=0.1, epsilon=0.0)),
                run_optax(optax.adamw(0.01, eps=0.0, weight_decay=0.1)), rtol=2e-5)


def test_adamw_defaults_slots_and_errors():
    optimizer = optimizers.get("adamw")
    assert isinstance(optimizer, optimizers.AdamW) and isinstance(optimizer, optimizers.Adam)
    assert optimizer.get_config() == pytest.approx(KERAS_DEFAULTS)
    clone = optimizers.deserialize(optimizers.serialize(optimizers.AdamW(weight_decay=0.5, amsgrad=True)))
    assert (type(clone), clone.weight_decay, clone.amsgrad) == (optimizers.AdamW, 0.5, True)
    with pytest.raises(ValueError, match="`weight_decay` must be a float. Received: weight_decay=None"):
        optimizers.AdamW(weight_decay=None)
