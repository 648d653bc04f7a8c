"""Adafactor, Ftrl, Lamb, Lion, Muon and ScheduleFreeAdamW against Keras 3.15 on JAX: the weights after 5 steps from the
same weights and gradients (``fixtures/keras_optimizers_more/make_fixtures.py``), the optimizer
variables' names and order (what checkpoints and ``.keras`` files store), configs, errors."""
import json
import os

import numpy as np
import pytest

import minikeras as mk
from minikeras import keras

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_optimizers_more")
DATA = np.load(os.path.join(HERE, "optimizers.npz"))
with open(os.path.join(HERE, "configs.json")) as f:
    INFO = json.load(f)
CASES = {  # as make_fixtures.py's
    "adafactor": ("Adafactor", {"learning_rate": 0.01}),
    "adafactor_options": ("Adafactor", {"learning_rate": 0.05, "beta_2_decay": -0.5, "epsilon_2": 1e-2,
                                        "clip_threshold": 0.5, "relative_step": False}),
    "ftrl": ("Ftrl", {"learning_rate": 0.1}),
    "ftrl_regularized": ("Ftrl", {"learning_rate": 0.1, "learning_rate_power": -0.3, "initial_accumulator_value": 0.5,
                                  "l1_regularization_strength": 0.05, "l2_regularization_strength": 0.1,
                                  "l2_shrinkage_regularization_strength": 0.02, "beta": 0.3}),
    "lamb": ("Lamb", {"learning_rate": 0.01}),
    "lamb_options": ("Lamb", {"learning_rate": 0.02, "beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-4}),
    "lion": ("Lion", {"learning_rate": 0.01}),
    "lion_options": ("Lion", {"learning_rate": 0.02, "beta_1": 0.5, "beta_2": 0.9}),
    "muon": ("Muon", {"learning_rate": 0.01}),
    "muon_options": ("Muon", {"learning_rate": 0.02, "momentum": 0.9, "nesterov": False, "ns_steps": 3,
                              "rms_rate": None, "adam_lr_ratio": 0.5, "weight_decay": 0.01,
                              "adam_weight_decay": 0.02, "exclude_layers": ["v1"]}),
    "schedule_free": ("ScheduleFreeAdamW", {"learning_rate": 0.01}),
    "schedule_free_warmup": ("ScheduleFreeAdamW", {"learning_rate": 0.02, "beta_1": 0.8, "warmup_steps": 3,
                                                   "epsilon": 1e-6}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_optimizer_matches_keras(name):
    cls, kwargs = CASES[name]
    variables = [mk.Variable(DATA[f"init/{i}"], name=f"v{i}") for i in range(3)]
    optimizer = getattr(keras.optimizers, cls)(**kwargs)
    for t in range(5):
        optimizer.apply_gradients(zip([DATA[f"grad/{t}/{i}"] for i in range(3)], variables))
    for i, v in enumerate(variables):
        np.testing.assert_allclose(v.numpy(), DATA[f"{name}/{i}"], rtol=2e-5, atol=2e-6)
    assert [v.name for v in optimizer.variables] == INFO[name]["variables"]
    config, expected = optimizer.get_config(), dict(INFO[name]["config"])
    assert expected.pop("name").startswith(config.pop("name"))  # Keras numbers a second instance: 'lion_1'
    assert config.keys() == expected.keys()
    for key, value in expected.items():  # floats as float32 rounds them (Keras keeps learning_rate in a Variable)
        assert config[key] == (pytest.approx(value) if isinstance(value, float) else value), key
    again = mk.optimizers.deserialize(mk.optimizers.serialize(optimizer))
    assert type(again) is type(optimizer) and again.get_config() == optimizer.get_config()


def test_by_name_and_in_fit():
    for name in ("adafactor", "ftrl", "lamb", "lion", "Lion", "muon", "ScheduleFreeAdamW"):
        assert isinstance(mk.optimizers.get(name), mk.optimizers.Optimizer)
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
    model.compile(optimizer="lion", loss="mse")
    history = model.fit(np.ones((8, 3), "float32"), np.zeros((8, 2), "float32"), epochs=2, verbose=0)
    assert history.history["loss"][1] < history.history["loss"][0]


def test_bad_arguments_say_which():
    with pytest.raises(ValueError, match="Argument `beta_1` must be in the \\[0, 1\\] range"):
        mk.optimizers.Lion(beta_1=0.0)
    with pytest.raises(ValueError, match="`initial_accumulator_value` needs to be positive or zero"):
        mk.optimizers.Ftrl(initial_accumulator_value=-1.0)
    with pytest.raises(ValueError, match="`learning_rate_power` needs to be negative or zero"):
        mk.optimizers.Ftrl(learning_rate_power=0.5)
