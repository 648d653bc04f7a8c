"""Donated state (``programs.donation``): compiled steps update the Variables they assign in
their own buffers, and what a user took before a step keeps its values.

The reference for the numbers is the same training with donation off (``donation.ENABLED``
False when the programs are traced): the bits must be equal. The in-place claim is checked on
the buffers themselves (``unsafe_buffer_pointer``). The eight-device case runs in a
subprocess (the device count is fixed before jax is imported), as in test_distribute.py.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk
from minikeras import keras
from minikeras.programs import donation

REPO = Path(__file__).resolve().parents[1]
RNG = np.random.default_rng(0)
X = RNG.standard_normal((48, 5)).astype("float32")
Y = RNG.standard_normal((48, 1)).astype("float32")


def _model(optimizer, steps_per_execution=1):
    mk.utils.set_random_seed(3)
    model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(4, activation="relu"), keras.layers.Dense(1)])
    model.compile(optimizer=optimizer, loss="mse", steps_per_execution=steps_per_execution)
    return model


def test_a_compiled_step_writes_its_state_in_place_and_keeps_values_handed_out():
    v = mk.Variable(np.arange(6, dtype="float32"))

    @mk.function
    def step(x):
        v.assign(v * 2.0 + x)
        return v.read_value()

    returned = step(mk.constant(1.0))  # the first call copies the initial value (a user's array)
    first = returned.numpy()
    buffer = v._value.unsafe_buffer_pointer()
    step(mk.constant(1.0))  # ``returned`` holds the array written by the first call: a copy is donated
    np.testing.assert_array_equal(returned.numpy(), first)
    del returned
    buffer = v._value.unsafe_buffer_pointer()
    step(mk.constant(0.0))  # nothing holds the array but v: donated
    assert v._value.unsafe_buffer_pointer() == buffer
    # (a NumPy view of the buffer, which numpy() leaves cached on the array, makes jax copy instead)
    np.testing.assert_array_equal(v.numpy(), (np.arange(6) * 4.0 + 3.0) * 2.0)


def test_values_taken_before_steps_are_unchanged_after_them(tmp_path):
    model = _model(keras.optimizers.Adam(0.05))
    model.fit(X, Y, batch_size=16, epochs=1, verbose=0)
    kernel = model.layers[0].kernel
    slots = model.optimizer.variables
    taken = {
        "read_value": kernel.read_value(),
        "value": kernel.value(),
        "jnp.asarray": jnp.asarray(kernel),
        "numpy": kernel.numpy(),
        "np.asarray": np.asarray(kernel),
        "get_weights": model.get_weights(),
        "slots": [s.read_value() for s in slots],
        "slots_numpy": [s.numpy() for s in slots],
    }
    with mk.GradientTape() as tape:  # a tape's record of a read holds the array
        loss = mk.reduce_sum(kernel * kernel)
    copies = {k: [np.array(a) for a in v] if isinstance(v, list) else np.array(v) for k, v in taken.items()}
    checkpoint = mk.train.Checkpoint(model=model, optimizer=model.optimizer)
    path = checkpoint.write(str(tmp_path / "ckpt"))
    model.fit(X, Y, batch_size=16, epochs=2, verbose=0)
    assert not np.array_equal(kernel.numpy(), copies["numpy"])  # the steps did change the kernel
    for name, value in taken.items():
        if isinstance(value, list):
            for a, b in zip(value, copies[name]):
                np.testing.assert_array_equal(np.array(a), b, err_msg=name)
        else:
            np.testing.assert_array_equal(np.array(value), copies[name], err_msg=name)
    np.testing.assert_array_equal(tape.gradient(loss, kernel).numpy(), 2 * copies["numpy"])
    checkpoint.read(path)
    np.testing.assert_array_equal(kernel.numpy(), copies["numpy"])
    model.fit(X, Y, batch_size=16, epochs=1, verbose=0)  # restored (assigned) values: a copy donated first


def test_an_array_given_to_assign_is_not_donated():
    model = _model(keras.optimizers.SGD(0.1))
    model.fit(X, Y, batch_size=16, epochs=1, verbose=0)
    mine = mk.constant(np.ones((5, 4), "float32"))
    model.layers[0].kernel.assign(mine)
    model.fit(X, Y, batch_size=16, epochs=1, verbose=0)
    np.testing.assert_array_equal(mine.numpy(), np.ones((5, 4), "float32"))


@pytest.mark.parametrize("steps_per_execution", [1, 3])
def test_training_is_bit_identical_to_no_donation(steps_per_execution, monkeypatch):
    def train():
        model = _model(keras.optimizers.AdamW(0.05, weight_decay=0.01), steps_per_execution)
        history = model.fit(X, Y, batch_size=8, epochs=2, verbose=0, shuffle=False)
        buffer = model.layers[0].kernel._value.unsafe_buffer_pointer()
        history.history["loss"] += model.fit(X, Y, batch_size=8, epochs=1, verbose=0, shuffle=False).history["loss"]
        return model, history.history["loss"], model.layers[0].kernel._value.unsafe_buffer_pointer() == buffer

    donated, donated_loss, in_place = train()
    assert in_place, "the kernel should have been updated in its own buffer"
    monkeypatch.setattr(donation, "ENABLED", False)
    kept, kept_loss, _ = train()
    assert donated_loss == kept_loss
    for a, b in zip(donated.get_weights() + [v.numpy() for v in donated.optimizer.variables],
                    kept.get_weights() + [v.numpy() for v in kept.optimizer.variables]):
        np.testing.assert_array_equal(a, b)


EIGHT_DEVICES = r'''
import json
import numpy as np
import minikeras as mk
from minikeras import keras

rng = np.random.default_rng(0)
X = rng.standard_normal((64, 5)).astype("float32")
Y = rng.standard_normal((64, 1)).astype("float32")

def train(steps_per_execution, distributed):
    mk.utils.set_random_seed(3)
    def build():
        model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(4), keras.layers.Dense(1)])
        model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse", steps_per_execution=steps_per_execution)
        return model
    if distributed:
        with mk.distribute.DataParallel().scope():
            model = build()
            model.fit(X, Y, batch_size=16, epochs=1, verbose=0, shuffle=False)
            held = model.layers[0].kernel.read_value()
            taken = held.numpy()
            model.fit(X, Y, batch_size=16, epochs=1, verbose=0, shuffle=False)
            kept = bool(np.array_equal(held.numpy(), taken))
    else:
        model = build()
        model.fit(X, Y, batch_size=16, epochs=2, verbose=0, shuffle=False)
        kept = True
    return model.get_weights(), kept

out = {}
for spe in (1, 2):
    one, _ = train(spe, False)
    eight, kept = train(spe, True)
    out[spe] = {"diff": max(float(np.abs(a - b).max()) for a, b in zip(one, eight)), "kept": kept}
print("RESULTS" + json.dumps(out))
'''


def test_eight_devices_and_steps_per_execution(tmp_path):
    script = tmp_path / "donation_eight.py"
    script.write_text(EIGHT_DEVICES)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", PYTHONPATH=str(REPO),
               JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, str(script)], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                          timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULTS")]
    assert done.returncode == 0 and lines, done.stdout[-4000:] + done.stderr[-4000:]
    for spe, result in json.loads(lines[-1][len("RESULTS"):]).items():
        assert result["kept"], f"steps_per_execution={spe}: a value read before a step changed"
        assert result["diff"] < 1e-5, f"steps_per_execution={spe}: {result['diff']}"


INTERRUPTED = r'''
import os, signal, threading, json
import numpy as np
import minikeras as mk
from minikeras import keras

rng = np.random.default_rng(0)
x = rng.random((2048, 32), dtype=np.float32)
y = rng.random((2048, 1), dtype=np.float32)
out = {}
for spe in (1, 4):
    mk.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(32), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse", steps_per_execution=spe)
    model.fit(x, y, batch_size=32, epochs=1, verbose=0)
    interrupted = broken = 0
    for delay in np.linspace(0.02, 0.2, 8):
        timer = threading.Timer(delay, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        try:
            model.fit(x, y, batch_size=32, epochs=1000, verbose=0)
        except KeyboardInterrupt:
            interrupted += 1
        timer.join()
        broken += any(v._value.is_deleted() for v in model.variables + model.optimizer.variables)
    loss = model.evaluate(x, y, verbose=0)  # the model is still usable
    out[spe] = {"interrupted": interrupted, "broken": broken, "finite": bool(np.isfinite(loss))}
print("RESULTS" + json.dumps(out))
'''


def test_ctrl_c_during_fit_leaves_the_state_whole(tmp_path):
    """A KeyboardInterrupt raised as a donating call returns must not drop its results (the
    only copy of the state, its inputs being deleted): before ``call_keeping_results``, most
    interrupted fits left Variables holding deleted arrays."""
    script = tmp_path / "interrupted.py"
    script.write_text(INTERRUPTED)
    env = dict(os.environ, PYTHONPATH=str(REPO), JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, str(script)], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                          timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULTS")]
    assert done.returncode == 0 and lines, done.stdout[-4000:] + done.stderr[-4000:]
    for spe, result in json.loads(lines[-1][len("RESULTS"):]).items():
        assert result["interrupted"] == 8, result
        assert result["broken"] == 0, f"steps_per_execution={spe}: {result['broken']} interrupted fits lost the state"
        assert result["finite"]


def test_random_generator_state_is_never_donated():
    """Generators' state is small and read by Dataset.map threads while steps run (an
    augmentation layer there, a Dropout in the model): it always goes in as a copy."""
    generator = mk.random.Generator.from_seed(1)
    seeds = keras.random.SeedGenerator(2)
    weight = mk.Variable(np.zeros(3, "float32"))

    @mk.function
    def step():
        weight.assign_add(generator.uniform((3,)))
        weight.assign_add(keras.random.uniform((3,), seed=seeds))

    step()
    step()
    assert weight._array_to_donate() is weight._value  # written by the step, held by nothing else
    for state in (generator.state, seeds.state):
        assert state._array_to_donate() is not state._value
        before = state._value
        step()
        assert not before.is_deleted()  # a thread that read it before the step can still use it
