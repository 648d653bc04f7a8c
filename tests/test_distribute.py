"""mk.distribute (DataParallel, multi-host) and mk.device.

The main pytest process has one CPU device. Multi-device checks run in a subprocess started
with ``--xla_force_host_platform_device_count=8`` (the flag must be set before JAX is
imported); it runs every check once and reports JSON, which the tests below read. The
multi-host test starts two processes of two CPU devices each, connected over loopback with
``mk.distribute.initialize``, and compares them with single-process training in this process.

References are single-device training of the same model on the same batches (the contract is
"the same numbers as one device"), not earlier outputs of the distributed code.
"""
import json
import os
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import jax
import numpy as np
import pytest

import minikeras as mk
from minikeras.distribute import multi_host

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 420


def _run_script(source, tmp_path, name, args=(), env_devices=8):
    script = tmp_path / name
    script.write_text(source)
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={env_devices}", PYTHONPATH=str(REPO),
               JAX_PLATFORMS="cpu")
    return subprocess.Popen([sys.executable, str(script), *map(str, args)], cwd=str(tmp_path), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


# -- eight devices: one subprocess, many checks ---------------------------------------------------
EIGHT_DEVICES = r'''
import json, sys, traceback
import numpy as np
import jax
import minikeras as mk
from minikeras.distribute import data_parallel

results = {}

def check(fn):
    try:
        results[fn.__name__] = fn()
    except Exception:
        results[fn.__name__] = {"error": traceback.format_exc()}

rng = np.random.default_rng(0)
X = rng.standard_normal((32, 6)).astype("float32")
XI = rng.standard_normal((32, 6, 6, 2)).astype("float32")
Y = rng.integers(0, 3, 32).astype("int32")
dp = mk.distribute.DataParallel()
REPLICATED = dp.replicated_sharding
CALLS = []  # (program, placed inputs) of every distributed call
_prepare_call = data_parallel.DataParallel.prepare_call

def _recording_prepare_call(self, program, values):
    jitted, placed = _prepare_call(self, program, values)
    CALLS.append((program, placed))
    return jitted, placed

data_parallel.DataParallel.prepare_call = _recording_prepare_call
LOSS = lambda: mk.losses.SparseCategoricalCrossentropy(from_logits=True)

def mlp():
    mk.random.set_seed(1)
    return mk.Sequential([mk.Input((6,)), mk.layers.Dense(8, activation="relu"), mk.layers.BatchNormalization(),
                          mk.layers.Dropout(0.5), mk.layers.Dense(3)])

def cnn():
    mk.random.set_seed(1)
    return mk.Sequential([mk.Input((6, 6, 2)), mk.layers.Conv2D(4, 3, activation="relu"),
                          mk.layers.BatchNormalization(), mk.layers.Flatten(), mk.layers.Dropout(0.5),
                          mk.layers.Dense(3)])

def fit(make, x, distribution=None, steps_per_execution=1):
    model = make()
    model.compile(mk.optimizers.Adam(0.01), LOSS(), metrics=["accuracy"], distribution=distribution,
                  steps_per_execution=steps_per_execution)
    history = model.fit(x, Y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    return model, history.history

def max_diff(a, b):
    return max(float(np.max(np.abs(np.asarray(p) - np.asarray(q)))) for p, q in zip(a, b))

def replicated(values):
    return all(getattr(v, "sharding", None) == REPLICATED for v in values)

def parity(make, x, steps_per_execution=1):
    single, h1 = fit(make, x)
    multi, h2 = fit(make, x, dp, steps_per_execution)
    return single, multi, {
        "loss_single": h1["loss"], "loss_dp": h2["loss"], "acc_single": h1["accuracy"], "acc_dp": h2["accuracy"],
        "weight_diff": max_diff(single.get_weights(), multi.get_weights()),
        "variables_replicated": replicated([v._value for v in multi.variables + multi.optimizer.variables]),
        "generator_replicated": replicated([mk.random.get_global_generator()._value]),
    }

@check
def fit_dense():
    single, multi, out = parity(mlp, X)
    out["eval_single"] = single.evaluate(X, Y, batch_size=16, verbose=0)
    out["eval_dp"] = multi.evaluate(X, Y, batch_size=16, verbose=0)
    out["predict_diff"] = max_diff([single.predict(X, batch_size=16, verbose=0)],
                                   [multi.predict(X, batch_size=16, verbose=0)])
    program = next(p for p, _ in CALLS if any(v is multi.optimizer.iterations for v in p.variables))
    jitted = [f for key, f in program.derived_functions.items() if key[:2] == ("distributed", dp.mesh)]
    out["compilations"] = [f._cache_size() for f in jitted]
    before = [v._value for v in program.variables]
    dp.distribute_variables(program.variables)  # already placed: nothing is copied again
    out["values_kept"] = all(a is v._value for a, v in zip(before, program.variables))
    return out

@check
def fit_conv_steps_per_execution():
    return parity(cnn, XI, steps_per_execution=2)[2]

@check
def custom_step_conv():
    def run(distribution):
        model = cnn()
        optimizer = mk.optimizers.SGD(0.1)
        loss_fn = LOSS()

        @mk.function
        def step(x, y):
            with mk.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        losses = []
        for i in range(0, 32, 16):
            if distribution is None:
                losses.append(float(step(mk.constant(XI[i:i + 16]), mk.constant(Y[i:i + 16]))))
            else:
                with distribution:
                    losses.append(float(step(mk.constant(XI[i:i + 16]), mk.constant(Y[i:i + 16]))))
        return losses, model.get_weights()
    l1, w1 = run(None)
    l2, w2 = run(dp)
    return {"loss_single": l1, "loss_dp": l2, "weight_diff": max_diff(w1, w2)}

@check
def dropout_masks():
    @mk.function
    def drop(x):
        return mk.nn.dropout(x, 0.5)
    ones = mk.constant(np.ones((16, 40), np.float32))
    mk.random.set_seed(3)
    single = [drop(ones).numpy() for _ in range(2)]
    mk.random.set_seed(3)
    with dp:
        multi = [drop(ones).numpy() for _ in range(2)]
    return {"equal": all(np.array_equal(a, b) for a, b in zip(single, multi)),
            "fresh_each_call": not np.array_equal(single[0], single[1])}

@check
def input_shardings():
    @mk.function
    def f(x, scale, vector):
        return mk.reduce_sum(x * scale) + mk.reduce_sum(vector)
    vector = jax.device_put(np.ones(3, np.float32), REPLICATED)
    with dp:
        total = f(mk.constant(X[:16]), mk.constant(2.0), mk.convert_to_tensor(vector))
    x, scale, placed_vector = CALLS[-1][1]
    return {"x_batch_sharded": x.sharding == dp.batch_sharding,
            "x_shard_shape": list(x.sharding.shard_shape(x.shape)),
            "scalar_replicated": scale.sharding == REPLICATED,
            "user_array_kept": placed_vector is vector,
            "value_ok": abs(float(total) - (2 * float(X[:16].sum()) + 3)) < 1e-3}

@check
def errors():
    out = {}
    for name, args in [("batch_size_12", dict(x=X, batch_size=12)), ("ragged_last", dict(x=X[:30], batch_size=16))]:
        model = mlp()
        model.compile("sgd", LOSS(), distribution=dp)
        try:
            model.fit(args["x"], Y[:len(args["x"])], batch_size=args["batch_size"], verbose=0)
            out[name] = "no error"
        except ValueError as error:
            out[name] = str(error)
            out[name + "_steps_taken"] = int(model.optimizer.iterations.numpy())
    dataset = mk.data.Dataset.from_tensor_slices((X[:30], Y[:30]))
    model = mlp()
    model.compile("sgd", LOSS(), distribution=dp)
    try:
        model.fit(dataset.batch(16), verbose=0)
        out["dataset"] = "no error"
    except ValueError as error:
        out["dataset"] = str(error)
    model.fit(dataset.batch(16, drop_remainder=True), verbose=0)
    out["dataset_drop_remainder_ok"] = True

    @mk.function
    def f(x):
        return mk.reduce_sum(x)
    try:
        with dp:
            f(mk.constant(X[:6]))
        out["custom_step"] = "no error"
    except ValueError as error:
        out["custom_step"] = str(error)
    for name, devices in [("twice", ["cpu:0", "cpu:0"]), ("missing", ["cpu:99"])]:
        try:
            mk.distribute.DataParallel(devices=devices)
            out["devices_" + name] = "no error"
        except ValueError as error:
            out["devices_" + name] = str(error)
    return out

@check
def global_distribution_and_scopes():
    out = {"default": mk.distribute.get_distribution() is None}
    two = mk.distribute.DataParallel(devices=jax.devices()[:2])
    mk.distribute.set_distribution(dp)
    try:
        out["global"] = mk.distribute.get_distribution() is dp
        with two:
            out["scope"] = mk.distribute.get_distribution() is two
        out["back_to_global"] = mk.distribute.get_distribution() is dp
        single, h1 = fit(mlp, X)  # compiled without distribution=: the global one applies
        out["global_fit_replicated"] = replicated([v._value for v in single.variables])
        out["global_fit_mesh_size"] = len(single.variables[0]._value.sharding.device_set)
    finally:
        mk.distribute.set_distribution(None)
    out["cleared"] = mk.distribute.get_distribution() is None
    with two:
        model, _ = fit(mlp, X)
    out["two_device_mesh"] = len(model.variables[0]._value.sharding.device_set)
    return out

@check
def device_placement():
    devices = jax.devices()
    with mk.device("cpu:3"):
        t = mk.constant([1.0, 2.0])
        v = mk.Variable(mk.zeros(3))
        w = t * 2.0
    with mk.device(devices[5]):
        u = mk.convert_to_tensor(np.ones(2, np.float32))
    with mk.device("/job:localhost/replica:0/task:0/device:CPU:6"):
        s = mk.ones((2,))
    outside = mk.constant(1.0)
    name = lambda d: f"/job:localhost/replica:0/task:0/device:CPU:{d.id}"  # noqa: E731  (TF's device names)
    return {"constant": t.device == name(devices[3]), "variable": v.device == name(devices[3]),
            "op": w.device == name(devices[3]), "jax_device": u.device == name(devices[5]),
            "tf_name": s.device == name(devices[6]), "outside": outside.device == name(devices[0]),
            "list_devices": len(mk.config.list_devices())}

print("RESULTS" + json.dumps(results))
'''


@pytest.fixture(scope="module")
def eight(tmp_path_factory):
    """The results of the eight-device subprocess, by check name."""
    process = _run_script(EIGHT_DEVICES, tmp_path_factory.mktemp("eight"), "eight_devices.py")
    output, _ = process.communicate(timeout=TIMEOUT)
    lines = [line for line in output.splitlines() if line.startswith("RESULTS")]
    assert process.returncode == 0 and lines, f"the 8-device subprocess failed:\n{output[-6000:]}"
    return json.loads(lines[-1][len("RESULTS"):])


def _result(eight, name):
    result = eight[name]
    assert "error" not in result, result.get("error")
    return result


def _assert_parity(result):
    np.testing.assert_allclose(result["loss_dp"], result["loss_single"], rtol=1e-5, atol=1e-6)
    assert result["weight_diff"] < 1e-5


def test_fit_dense_batchnorm_dropout_matches_one_device(eight):
    result = _result(eight, "fit_dense")
    _assert_parity(result)
    assert result["acc_dp"] == result["acc_single"]
    np.testing.assert_allclose(result["eval_dp"], result["eval_single"], rtol=1e-5, atol=1e-6)
    assert result["predict_diff"] < 1e-5


def test_variables_and_optimizer_slots_replicated_and_stored_back(eight):
    result = _result(eight, "fit_dense")
    assert result["variables_replicated"] and result["generator_replicated"]
    assert result["values_kept"], "placed variable values should not be copied again"
    assert result["compilations"] == [1]


def test_fit_conv_batchnorm_dropout_with_steps_per_execution(eight):
    result = _result(eight, "fit_conv_steps_per_execution")
    _assert_parity(result)
    assert result["variables_replicated"]


def test_custom_gradient_tape_step_under_scope(eight):
    _assert_parity(_result(eight, "custom_step_conv"))


def test_dropout_masks_equal_single_device(eight):
    result = _result(eight, "dropout_masks")
    assert result["equal"] and result["fresh_each_call"]


def test_inputs_sharded_scalars_replicated_user_arrays_kept(eight):
    result = _result(eight, "input_shardings")
    assert result["x_batch_sharded"] and result["x_shard_shape"] == [2, 6]
    assert result["scalar_replicated"] and result["user_array_kept"] and result["value_ok"]


def test_batch_not_divisible_is_a_clear_error(eight):
    result = _result(eight, "errors")
    for name in ("batch_size_12", "ragged_last", "dataset", "custom_step"):
        message = result[name]
        assert "8 devices" in message and "multiple of 8" in message and "drop_remainder=True" in message, message
    assert "batch of 12 samples" in result["batch_size_12"]
    assert "batch of 14 samples" in result["ragged_last"] and "30 samples" in result["ragged_last"]
    assert result["batch_size_12_steps_taken"] == 0 and result["ragged_last_steps_taken"] == 0, \
        "the error must come before any training"
    assert "batch of 6 samples" in result["custom_step"]
    assert result["dataset_drop_remainder_ok"]
    assert "twice" in result["devices_twice"]
    assert "Device not found: 'cpu:99'" in result["devices_missing"]


def test_set_distribution_and_nested_scopes(eight):
    result = _result(eight, "global_distribution_and_scopes")
    assert all(result[k] for k in ("default", "global", "scope", "back_to_global", "global_fit_replicated", "cleared"))
    assert result["global_fit_mesh_size"] == 8 and result["two_device_mesh"] == 2


def test_device_scope_places_new_values(eight):
    result = _result(eight, "device_placement")
    assert all(result[k] for k in ("constant", "variable", "op", "jax_device", "tf_name", "outside"))
    assert result["list_devices"] == 8


# -- two processes over loopback -------------------------------------------------------------------
MODEL = r'''
import numpy as np

GLOBAL_BATCH, N = 8, 32

def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((N, 6)).astype("float32"), rng.integers(0, 3, N).astype("int32")

def local_rows(process_id, num_processes):
    """This process's half of each global batch, batch after batch."""
    part = GLOBAL_BATCH // num_processes
    return np.concatenate([np.arange(b, b + GLOBAL_BATCH)[process_id * part:(process_id + 1) * part]
                           for b in range(0, N, GLOBAL_BATCH)])

def train(mk, x, y, batch_size, distribution=None):
    mk.random.set_seed(1)
    model = mk.Sequential([mk.Input((6,)), mk.layers.Dense(8, activation="relu"), mk.layers.BatchNormalization(),
                           mk.layers.Dropout(0.3), mk.layers.Dense(3)])
    model.compile(mk.optimizers.Adam(0.01), mk.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"], distribution=distribution, steps_per_execution=2)
    history = model.fit(x, y, batch_size=batch_size, epochs=2, shuffle=False, verbose=0)
    evaluation = model.evaluate(x, y, batch_size=batch_size, verbose=0)
    predictions = model.predict(x, batch_size=batch_size, verbose=0)
    return history.history["loss"], evaluation, predictions, model.get_weights()
'''

WORKER = MODEL + r'''
import sys
import minikeras as mk

process_id, port, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
mk.distribute.initialize(f"127.0.0.1:{port}", 2, process_id)   # after `import minikeras`, as users will
import jax
assert jax.process_count() == 2 and len(jax.devices()) == 4 and len(jax.local_devices()) == 2
x, y = data()
rows = local_rows(process_id, 2)
dp = mk.distribute.DataParallel()
losses, evaluation, predictions, weights = train(mk, x[rows], y[rows], GLOBAL_BATCH // 2, dp)
np.savez(out, *weights, losses=np.array(losses), evaluation=np.array(evaluation), predictions=predictions,
         rows=rows)
print("WORKER DONE", process_id, flush=True)
'''


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_processes_equal_one_process_on_the_full_batch(tmp_path):
    port = _free_port()
    workers = [_run_script(WORKER, tmp_path, "worker.py", (pid, port, tmp_path / f"worker{pid}.npz"), env_devices=2)
               for pid in (0, 1)]
    outputs = []
    try:
        for worker in workers:
            outputs.append(worker.communicate(timeout=TIMEOUT)[0])
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
    for worker, output in zip(workers, outputs):
        assert worker.returncode == 0, f"a worker failed:\n{output[-6000:]}"

    namespace = {}
    exec(MODEL, namespace)
    x, y = namespace["data"]()
    losses, evaluation, predictions, weights = namespace["train"](mk, x, y, namespace["GLOBAL_BATCH"])
    for pid in (0, 1):
        result = np.load(tmp_path / f"worker{pid}.npz")
        np.testing.assert_allclose(result["losses"], losses, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(result["evaluation"], evaluation, rtol=1e-5, atol=1e-6)
        for i, expected in enumerate(weights):
            np.testing.assert_allclose(result[f"arr_{i}"], expected, rtol=1e-5, atol=1e-6)
        # each process gets the predictions of the rows it fed
        np.testing.assert_allclose(result["predictions"], predictions[result["rows"]], rtol=1e-5, atol=1e-5)


# -- one device, in this process ----------------------------------------------------------------
def test_data_parallel_on_one_device_fits_and_places():
    dp = mk.distribute.DataParallel()
    assert dp.num_devices == len(jax.devices())
    assert repr(dp) == f"<DataParallel device_mesh=<DeviceMesh shape=({len(jax.devices())},), axis_names=['batch']>>"
    mk.random.set_seed(0)
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
    model.compile("sgd", "mse", distribution=dp)
    model.fit(np.ones((4, 3), np.float32), np.zeros((4, 2), np.float32), batch_size=2, verbose=0)
    assert all(v._value.sharding == dp.replicated_sharding for v in model.variables)
    mk.random.set_seed(0)  # the generator's state back to a plain (uncommitted) array for other tests


def test_distribution_argument_must_be_data_parallel():
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
    with pytest.raises(TypeError, match="DataParallel"):
        model.compile("sgd", "mse", distribution="mirrored")
    with pytest.raises(TypeError, match="DataParallel"):
        mk.distribute.set_distribution(jax.devices())


def test_initialize_after_arrays_exist_is_a_clear_error():
    keep = mk.constant([1.0, 2.0])  # noqa: F841  (a live array: too late to initialize)
    with pytest.raises(RuntimeError, match="right after `import minikeras as mk`"):
        mk.distribute.initialize("127.0.0.1:1", 2, 0)
    assert float(mk.reduce_sum(mk.constant([1.0, 2.0]))) == 3.0  # the backend is untouched


def test_initialize_where_jax_drops_its_private_backend_check(monkeypatch):
    # jax has no public "has a backend started" that does not start one: minikeras reads a private
    # name, and where it is gone, jax.distributed.initialize's own check still refuses
    keep = mk.constant([1.0, 2.0])  # noqa: F841  (a live array: too late to initialize)
    assert multi_host.backend_started() is True
    monkeypatch.setitem(sys.modules, "jax._src.xla_bridge", None)  # its import now fails
    assert multi_host.backend_started() is None
    with pytest.raises(RuntimeError):
        mk.distribute.initialize("127.0.0.1:1", 2, 0)
    assert not jax.distributed.is_initialized()
    assert float(mk.reduce_sum(mk.constant([1.0, 2.0]))) == 3.0  # the backend is untouched


LATE_INITIALIZE = r'''
import minikeras as mk
mk.config.list_devices()   # starts JAX's backend, though no array exists
try:
    mk.distribute.initialize("127.0.0.1:1", 2, 0)
except RuntimeError as error:
    print("RuntimeError:", error)
'''


def test_initialize_after_the_backend_started_is_a_clear_error(tmp_path):
    worker = _run_script(LATE_INITIALIZE, tmp_path, "late.py", env_devices=1)
    output = worker.communicate(timeout=TIMEOUT)[0]
    assert worker.returncode == 0, output[-4000:]
    assert "RuntimeError: mk.distribute.initialize must be called before JAX starts its backend" in output, output
    assert "asked JAX for its devices" in output and "right after `import minikeras as mk`" in output


def test_device_scope_on_the_default_device():
    with mk.device("/CPU:0"):
        x = mk.constant([1.0])
    assert x.device == "/job:localhost/replica:0/task:0/device:CPU:0"
    assert mk.config.list_devices("cpu") == jax.devices("cpu")


def test_device_soft_placement_and_bad_names():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with mk.device("GPU:7"):
            x = mk.constant(1.0)
    assert x.device == "/job:localhost/replica:0/task:0/device:CPU:0"
    assert any("no such device" in str(w.message) for w in caught)
    with pytest.raises(ValueError, match="cannot read the device name"):
        with mk.device("cpu-zero"):
            pass
    with pytest.raises(ValueError, match="unknown device type"):
        with mk.device("fpga:0"):
            pass
    with pytest.raises(TypeError, match="device name"):
        with mk.device(0):
            pass


def test_module_docstrings_document_the_no_padding_choice():
    text = mk.distribute.__doc__ + sys.modules["minikeras.distribute.data_parallel"].__doc__
    assert "drop_remainder=True" in text and "BatchNormalization" in text
