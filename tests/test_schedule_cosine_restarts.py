"""``keras.optimizers.schedules.CosineDecayRestarts`` (SGDR) against the schedule written out
period by period, its config and errors as Keras 3.15's, and inside a compiled training step."""
import math

import numpy as np
import pytest

import minikeras as mk
from minikeras import keras

CosineDecayRestarts = keras.optimizers.schedules.CosineDecayRestarts


def sgdr(step, lr, first, t_mul, m_mul, alpha):
    """Walks the periods: each lasts t_mul times the previous and starts m_mul times lower."""
    start, length, restart = 0.0, float(first), 0
    while step >= start + length:
        start, length, restart = start + length, length * t_mul, restart + 1
    fraction = (step - start) / length
    return lr * ((1 - alpha) * 0.5 * m_mul ** restart * (1 + math.cos(math.pi * fraction)) + alpha)


@pytest.mark.parametrize("kwargs", [dict(first_decay_steps=10), dict(first_decay_steps=7, t_mul=1.0, m_mul=0.5,
                                                                       alpha=0.1),
                                    dict(first_decay_steps=5, t_mul=3.0, m_mul=0.8, alpha=0.05)])
def test_values_follow_the_periods(kwargs):
    schedule = CosineDecayRestarts(0.1, **kwargs)
    full = {"t_mul": 2.0, "m_mul": 1.0, "alpha": 0.0, **kwargs}
    for step in range(0, 90, 1):
        expected = sgdr(step, 0.1, full["first_decay_steps"], full["t_mul"], full["m_mul"], full["alpha"])
        np.testing.assert_allclose(float(schedule(step)), expected, rtol=2e-5, atol=1e-7, err_msg=f"step {step}")


def test_config_and_errors_as_keras():
    schedule = CosineDecayRestarts(0.1, 7, t_mul=1.0, m_mul=0.5, alpha=0.1)
    config = keras.optimizers.schedules.serialize(schedule)
    assert config["class_name"] == "CosineDecayRestarts"
    assert config["config"] == {"initial_learning_rate": 0.1, "first_decay_steps": 7, "t_mul": 1.0, "m_mul": 0.5,
                                "alpha": 0.1, "name": "SGDRDecay"}
    again = keras.optimizers.schedules.deserialize(config)
    assert float(again(9)) == float(schedule(9))
    with pytest.raises(ValueError, match=r"Argument `first_decay_steps` must be > 0. Received: first_decay_steps=0"):
        CosineDecayRestarts(0.1, 0)


def test_drives_sgd_in_a_compiled_step():
    schedule = CosineDecayRestarts(1.0, 2, t_mul=1.0)
    w = mk.Variable([0.0])
    opt = keras.optimizers.SGD(learning_rate=schedule)

    @mk.function
    def step():
        opt.apply_gradients([(mk.constant([1.0]), w)])

    moves = []
    for _ in range(4):
        before = float(w.numpy()[0])
        step()
        moves.append(before - float(w.numpy()[0]))
    np.testing.assert_allclose(moves, [1.0, 0.5, 1.0, 0.5], rtol=1e-6)  # restarts every two steps
    restored = keras.optimizers.deserialize(keras.optimizers.serialize(opt))
    assert restored.get_config()["learning_rate"]["class_name"] == "CosineDecayRestarts"
    assert float(restored.learning_rate) == 1.0  # read at iterations 0


def test_legacy_optimizers_raise_as_in_keras():
    for name in ("Adagrad", "Adam", "Ftrl", "Optimizer", "RMSprop", "SGD"):
        with pytest.raises(ImportError, match=r"`keras.optimizers.legacy` is not supported in Keras 3"):
            getattr(keras.optimizers.legacy, name)(learning_rate=0.1)
