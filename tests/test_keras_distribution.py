"""keras.distribution (Keras 3's distribution API) on mk.distribute.

The rules of DeviceMesh, TensorLayout, LayoutMap and the constructors' errors are checked here,
in this process (one CPU device: a mesh of named devices is looked up only when first used, as
in Keras). Training runs in one subprocess with ``--xla_force_host_platform_device_count=8``
(the flag must be set before JAX starts), which runs each check once and reports JSON:

- ModelParallel on a (2, 4) mesh trains to the numbers of single-device training (losses,
  accuracy, weights after two epochs; with and without ``steps_per_execution``), with the
  shardings Keras 3.15 gives (the layout map's for variables and their Adam slots, replicated
  otherwise) and a layer output placed as its ``"<name>/output"`` key says;
- DataParallel from Keras's ``device_mesh=`` and ``devices=`` arguments;
- distribute_tensor eagerly and inside a compiled step, with its gradient (``jax.grad``);
- the keras.io guide "Distributed training with Keras 3" (its code, renamed, at tiny sizes).

The layout rules and reprs are Keras 3.15's (keras/src/distribution/distribution_lib.py and its
test); references for numbers are single-device training and jax.grad.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

import minikeras as mk
from minikeras import keras

REPO = Path(__file__).resolve().parents[1]
EIGHT = [f"cpu:{i}" for i in range(8)]


# -- one device, in this process ------------------------------------------------------------------
def test_keras_names_are_mk_distribute_objects():
    d = keras.distribution
    assert d.DataParallel is mk.distribute.DataParallel and d.ModelParallel is mk.distribute.ModelParallel
    assert d.distribution is mk.distribute.get_distribution and d.set_distribution is mk.distribute.set_distribution
    assert set(d.__all__) == {"DataParallel", "DeviceMesh", "LayoutMap", "ModelParallel", "TensorLayout",
                              "distribute_tensor", "distribution", "get_device_count", "initialize", "list_devices",
                              "set_distribution"}


def test_list_devices_and_count_as_keras():
    assert keras.distribution.list_devices() == [f"{x.platform}:{x.id}" for x in jax.devices()]
    assert keras.distribution.list_devices("CPU") == [f"cpu:{x.id}" for x in jax.devices("cpu")]
    assert keras.distribution.get_device_count() == jax.device_count()
    assert keras.distribution.get_device_count("cpu") == len(jax.devices("cpu"))


def test_device_mesh_rules():
    mesh = keras.distribution.DeviceMesh((4, 2), ["batch", "model"], EIGHT)
    assert mesh.shape == (4, 2) and mesh.axis_names == ["batch", "model"] and mesh.devices.shape == (4, 2)
    assert repr(mesh) == "<DeviceMesh shape=(4, 2), axis_names=['batch', 'model']>"
    with pytest.raises(ValueError, match="Shape and axis_names cannot be empty"):
        keras.distribution.DeviceMesh((4,), "", EIGHT[:4])
    with pytest.raises(ValueError, match="Shape and axis_names should have same size"):
        keras.distribution.DeviceMesh((4, 2), ["batch"], EIGHT)
    with pytest.raises(ValueError, match="Shape does not match the number of devices"):
        keras.distribution.DeviceMesh((4, 2), ["batch", "model"], EIGHT[:4])
    with pytest.raises(ValueError, match="Device not found: 'cpu:1'"):  # looked up when first used
        mesh.backend_mesh
    one = keras.distribution.DeviceMesh((1,), ["batch"])
    assert one.backend_mesh.devices.tolist() == [jax.devices()[0]]


def test_tensor_layout_rules():
    mesh = keras.distribution.DeviceMesh((4, 2), ["data", "model"], EIGHT)
    layout = keras.distribution.TensorLayout(("data", None), mesh)
    assert layout.axes == ("data", None) and layout.device_mesh is mesh
    assert repr(layout) == ("<TensorLayout axes=('data', None), device_mesh=<DeviceMesh shape=(4, 2), "
                            "axis_names=['data', 'model']>>")
    with pytest.raises(ValueError, match="Invalid axis names for Layout"):
        keras.distribution.TensorLayout(("data", "unknown", None), mesh)
    lazy = keras.distribution.TensorLayout(("data", "unknown"))
    assert lazy.device_mesh is None
    with pytest.raises(ValueError, match="Invalid axis names for Layout"):
        lazy.device_mesh = mesh
    later = keras.distribution.TensorLayout(("model",))
    later.device_mesh = mesh
    with pytest.raises(ValueError, match="Cannot override device mesh value"):
        later.device_mesh = mesh
    with pytest.raises(ValueError, match="device mesh is not set"):
        keras.distribution.TensorLayout((None,)).backend_layout


def test_layout_map_matches_whole_paths_and_refuses_two_matches():
    mesh = keras.distribution.DeviceMesh((4, 2), ["data", "model"], EIGHT)
    layout_map = keras.distribution.LayoutMap(mesh)
    layout_map[".*dense.*kernel"] = (None, "model")
    layout_map["dense/bias"] = keras.distribution.TensorLayout(("model",))
    assert layout_map["dense_1/kernel"].axes == (None, "model")
    assert layout_map["my_model/dense_12/kernel"].device_mesh is mesh  # tuples become layouts on the map's mesh
    assert layout_map["dense/bias"].device_mesh is mesh
    assert layout_map["dense_1/bias"] is None       # "dense/bias" must match the whole path (re.fullmatch)
    assert layout_map["x/dense/kernel/extra"] is None
    assert layout_map["conv2d/kernel"] is None
    layout_map["dense_1.*"] = ("model",)
    with pytest.raises(ValueError, match="matches multiple layout specification keys"):
        layout_map["dense_1/kernel"]                 # Keras's rule: no "first match wins"
    with pytest.raises(ValueError, match="already exist in the LayoutMap"):
        layout_map["dense/bias"] = ("model",)
    with pytest.raises(ValueError, match="should be a TensorLayout type"):
        layout_map["other"] = ["model"]
    assert len(layout_map) == 3 and list(layout_map) == [".*dense.*kernel", "dense/bias", "dense_1.*"]
    del layout_map["dense_1.*"]
    assert len(layout_map) == 2 and layout_map.get("dense_1/kernel").axes == (None, "model")


def test_constructor_errors():
    with pytest.raises(ValueError, match="instance of `DeviceMesh`.*devices=\\[...\\]"):
        keras.distribution.DataParallel(jax.devices())
    with pytest.raises(ValueError, match="You must specify a layout_map argument"):
        keras.distribution.ModelParallel()
    with pytest.raises(ValueError, match="must be a `LayoutMap` instance"):
        keras.distribution.ModelParallel(layout_map={"d/kernel": (None, "model")})
    layout_map = keras.distribution.LayoutMap(keras.distribution.DeviceMesh((1,), ["data"]))
    with pytest.raises(ValueError, match="batch_dim_name 'batch' is not an axis"):
        keras.distribution.ModelParallel(layout_map=layout_map, batch_dim_name="batch")
    with pytest.raises(TypeError, match="DataParallel or ModelParallel"):
        keras.distribution.set_distribution("mirrored")
    with pytest.raises(ValueError, match="TensorLayout"):
        keras.distribution.distribute_tensor(np.ones(2), ("data",))


def test_data_parallel_arguments_on_one_device():
    dp = keras.distribution.DataParallel(devices=[])     # as Keras: no devices given means all of them
    assert dp.batch_dim_name == "batch" and dp.num_model_replicas == len(jax.devices())
    mesh = keras.distribution.DeviceMesh((1,), ["data"])
    dp = keras.distribution.DataParallel(device_mesh=mesh, auto_shard_dataset=False)
    assert dp.device_mesh is mesh and dp.batch_dim_name == "data" and dp.auto_shard_dataset is False
    assert dp.get_data_layout((4, 3)).axes == ("data", None)
    assert repr(dp) == "<DataParallel device_mesh=<DeviceMesh shape=(1,), axis_names=['data']>>"
    assert keras.distribution.distribution() is None
    with dp.scope():
        assert keras.distribution.distribution() is dp
    assert keras.distribution.distribution() is None


def test_initialize_takes_keras_arguments_and_environment(monkeypatch):
    calls = []
    monkeypatch.setattr(keras.distribution, "_initialize_processes", lambda *args: calls.append(args))
    keras.distribution.initialize("10.0.0.1:1234,10.0.0.2:2345", 2, 0)
    monkeypatch.setenv("KERAS_DISTRIBUTION_JOB_ADDRESSES", "10.0.0.1:1234")
    monkeypatch.setenv("KERAS_DISTRIBUTION_NUM_PROCESSES", "2")
    monkeypatch.setenv("KERAS_DISTRIBUTION_PROCESS_ID", "1")
    keras.distribution.initialize()
    assert calls == [("10.0.0.1:1234", 2, 0), ("10.0.0.1:1234", 2, 1)]
    with pytest.raises(ValueError, match="has 2 jobs, but num_processes is 3"):
        keras.distribution.initialize("a:1,b:2", 3, 0)


# -- eight virtual devices: one subprocess, every training check --------------------------------------
EIGHT_DEVICES = r'''
import json, traceback, warnings
import numpy as np
import jax
import minikeras as mk
from minikeras import keras
from minikeras.keras import layers
from minikeras.distribute import distribution as distribution_module

results = {}

def check(fn):
    try:
        results[fn.__name__] = fn()
    except Exception:
        results[fn.__name__] = {"error": traceback.format_exc()}

PROGRAMS = []  # the programs of every distributed call
_prepare_call = distribution_module.Distribution.prepare_call

def _recording_prepare_call(self, program, values):
    PROGRAMS.append(program)
    return _prepare_call(self, program, values)

distribution_module.Distribution.prepare_call = _recording_prepare_call
rng = np.random.default_rng(0)
X = rng.standard_normal((32, 12)).astype("float32")
Y = rng.integers(0, 4, 32).astype("int32")

def mlp():
    mk.random.set_seed(3)
    inputs = layers.Input((12,))
    h = layers.Dense(16, activation="relu", name="d1")(inputs)
    h = layers.BatchNormalization(name="bn")(h)
    h = layers.Dropout(0.3)(h)
    return keras.Model(inputs, layers.Dense(4, name="d2")(h))

def fit(distribution=None, steps_per_execution=1):
    model = mlp()
    model.compile(keras.optimizers.Adam(0.01), keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"], distribution=distribution, steps_per_execution=steps_per_execution)
    history = model.fit(X, Y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    return model, history.history

def spec(variable):
    sharding = variable._value.sharding
    axes = list(sharding.spec) + [None] * (variable._value.ndim - len(sharding.spec))
    return [len(sharding.device_set)] + axes

def max_diff(a, b):
    return max(float(np.max(np.abs(np.asarray(p) - np.asarray(q)))) for p, q in zip(a, b))

SINGLE = []  # single-device training, the reference, made once

def parity(distribution, steps_per_execution=1):
    if not SINGLE:
        SINGLE.append(fit())
    single, h1 = SINGLE[0]
    multi, h2 = fit(distribution, steps_per_execution)
    return multi, {"loss_single": h1["loss"], "loss": h2["loss"], "acc_single": h1["accuracy"], "acc": h2["accuracy"],
                   "weight_diff": max_diff(single.get_weights(), multi.get_weights()),
                   "eval_single": single.evaluate(X, Y, batch_size=16, verbose=0),
                   "eval": multi.evaluate(X, Y, batch_size=16, verbose=0)}

def constraints(jaxpr):
    """The partition specs of every sharding constraint in a jaxpr, nested ones included."""
    found = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "sharding_constraint":
            found.append([None if p is None else str(p) for p in eqn.params["sharding"].spec])
        for value in eqn.params.values():
            inner = getattr(value, "jaxpr", value)
            if hasattr(inner, "eqns"):
                found += constraints(inner)
    return found

MESH = keras.distribution.DeviceMesh((2, 4), ["data", "model"], keras.distribution.list_devices())

def layout_map():
    layout_map = keras.distribution.LayoutMap(MESH)
    layout_map["d1/kernel"] = (None, "model")
    layout_map[".*1/bias"] = ("model",)
    layout_map["d2/kernel"] = ("model", None)
    layout_map["d1/output"] = ("data", "model")
    return layout_map

@check
def model_parallel():
    mp = keras.distribution.ModelParallel(layout_map=layout_map(), batch_dim_name="data")
    out = {}
    for steps in (1, 2):
        del PROGRAMS[:]
        model, out[f"steps_{steps}"] = parity(mp, steps)
    out["specs"] = {v.path: spec(v) for v in model.variables + model.optimizer.variables}
    out["generator"] = spec(mk.random.get_global_generator())
    out["constraints"] = constraints(PROGRAMS[0].jaxpr.jaxpr)
    out["replicas"] = mp.num_model_replicas
    try:
        model.fit(X[:5], Y[:5], batch_size=5, verbose=0)
    except ValueError as error:
        out["odd_batch"] = str(error)
    for name, shape in [("uneven", (6, 10)), ("rank", (16,))]:
        try:
            mp.get_variable_layout(mk.Variable(np.zeros(shape, "float32"), name="d1/kernel"))
        except ValueError as error:
            out[name] = str(error)
    return out

@check
def data_parallel_keras_arguments():
    dp = keras.distribution.DataParallel(device_mesh=keras.distribution.DeviceMesh((8,), ["data"]))
    model, out = parity(dp)
    out["replicated"] = all(spec(v)[0] == 8 and not any(spec(v)[1:]) for v in model.variables)
    four = keras.distribution.DataParallel(devices=["cpu:4", "cpu:5", "cpu:6", "cpu:7"])
    with four.scope():
        model, _ = fit()
    out["four"] = sorted({d.id for d in model.variables[0]._value.sharding.device_set})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        two_d = keras.distribution.DataParallel(device_mesh=MESH)
    out["two_d_warning"] = [str(w.message) for w in caught]
    _, out["two_d"] = parity(two_d)
    out["two_d_replicas"] = two_d.num_model_replicas
    return out

@check
def distribute_tensor():
    layout = keras.distribution.TensorLayout(("data", "model"), MESH)
    values = np.arange(32, dtype=np.float32).reshape(8, 4)
    placed = keras.distribution.distribute_tensor(values, layout)
    out = {"eager_spec": [str(p) for p in placed._value.sharding.spec],
           "eager_values": bool((placed.numpy() == values).all()),
           "shard_shape": list(placed._value.addressable_shards[0].data.shape),
           "same_kept": keras.distribution.distribute_tensor(placed, layout)._value is placed._value}
    symbolic = layers.Input((3,))
    out["symbolic_kept"] = keras.distribution.distribute_tensor(symbolic, layout) is symbolic
    w = mk.Variable(np.linspace(-1, 1, 4).astype("float32"))

    @mk.function
    def step(x):
        with mk.GradientTape() as tape:
            y = keras.distribution.distribute_tensor(mk.tanh(x * w), layout)
            loss = mk.reduce_sum(y * y)
        return loss, tape.gradient(loss, w)

    mp = keras.distribution.ModelParallel(layout_map=keras.distribution.LayoutMap(MESH), batch_dim_name="data")
    with mp.scope():
        loss, grad = step(mk.constant(values / 10))
    reference = jax.value_and_grad(lambda w: jax.numpy.sum(jax.numpy.tanh(values / 10 * w) ** 2))(w.numpy())
    out["loss_diff"] = abs(float(loss) - float(reference[0]))
    out["grad_diff"] = float(np.max(np.abs(grad.numpy() - np.asarray(reference[1]))))
    out["constraints"] = constraints(PROGRAMS[-1].jaxpr.jaxpr)
    return out

@check
def keras_io_guide():
    """keras.io's guides/distribution.py (2023 and 2026 editions), renamed, at tiny sizes."""
    printed = []
    try:
        keras.distribution.initialize()
        printed.append("Keras distribution initialized.")
    except Exception as e:
        printed.append(f"Keras distribution initialization skipped or failed: {e}")

    devices = keras.distribution.list_devices()
    mesh_shape = (2, 4) if len(devices) >= 8 else (len(devices), 1)
    mesh = keras.distribution.DeviceMesh(shape=mesh_shape, axis_names=["data", "model"], devices=devices)
    layout_2d = keras.distribution.TensorLayout(axes=("model", "data"), device_mesh=mesh)
    printed.append(f"TensorLayout created: {layout_2d}")

    # DataParallel on a 1-D mesh (2023 edition), then on all devices (2026 edition)
    mesh_1d = keras.distribution.DeviceMesh(shape=(8,), axis_names=["data"], devices=devices)
    data_parallel = keras.distribution.DataParallel(device_mesh=mesh_1d)
    inputs = np.random.normal(size=(64, 28, 28, 1)).astype("float32")
    labels = np.random.normal(size=(64, 10)).astype("float32")
    dataset = mk.data.Dataset.from_tensor_slices((inputs, labels)).batch(16)
    keras.distribution.set_distribution(data_parallel)
    inputs_layer = layers.Input(shape=(28, 28, 1))
    y = layers.Flatten()(inputs_layer)
    y = layers.Dense(units=200, use_bias=False, activation="relu")(y)
    y = layers.Dropout(0.4)(y)
    y = layers.Dense(units=10, activation="softmax")(y)
    model = keras.Model(inputs=inputs_layer, outputs=y)
    model.compile(loss="mse")
    history = model.fit(dataset, epochs=2, verbose=0)
    evaluated = model.evaluate(dataset, verbose=0)

    data_parallel = keras.distribution.DataParallel()
    keras.distribution.set_distribution(data_parallel)
    printed.append(f"Active distribution: {keras.distribution.distribution()}")
    inputs_layer = layers.Input(shape=(28, 28, 1))
    y = layers.Flatten()(inputs_layer)
    y = layers.Dense(units=200, activation="relu")(y)
    y = layers.Dropout(0.4)(y)
    outputs = layers.Dense(units=10, activation="softmax")(y)
    model = keras.Model(inputs=inputs_layer, outputs=outputs)
    model.compile(loss="mse", optimizer="adam")
    model.summary(print_fn=lambda *a, **k: None)
    history_dp = model.fit(dataset, epochs=1, verbose=0)

    # ModelParallel with a LayoutMap
    layout_map = keras.distribution.LayoutMap(mesh)
    layout_map["d1/kernel"] = (None, "model")
    layout_map["d1/bias"] = ("model",)
    layout_map["d2/output"] = ("data", None)
    model_parallel = keras.distribution.ModelParallel(layout_map=layout_map, batch_dim_name="data")
    keras.distribution.set_distribution(model_parallel)
    printed.append(f"Active distribution: {keras.distribution.distribution()}")
    inputs_layer = layers.Input(shape=(28, 28, 1))
    y = layers.Flatten()(inputs_layer)
    y = layers.Dense(units=200, activation="relu", name="d1")(y)
    y = layers.Dropout(0.4)(y)
    y = layers.Dense(units=10, activation="softmax", name="d2")(y)
    model = keras.Model(inputs=inputs_layer, outputs=y)
    model.compile(loss="mse")
    del PROGRAMS[:]
    history_mp = model.fit(dataset, epochs=2, verbose=0)
    evaluated_mp = model.evaluate(dataset, verbose=0)
    keras.distribution.set_distribution(None)
    return {"printed": printed, "loss": history.history["loss"] + [evaluated] + history_dp.history["loss"],
            "loss_mp": history_mp.history["loss"] + [evaluated_mp],
            "specs": {v.path: spec(v) for v in model.variables},
            "constraints": constraints(PROGRAMS[0].jaxpr.jaxpr)}

print("RESULTS" + json.dumps(results))
'''


@pytest.fixture(scope="module")
def eight(tmp_path_factory):
    """The results of the eight-device subprocess, by check name."""
    script = tmp_path_factory.mktemp("keras_distribution") / "eight_devices.py"
    script.write_text(EIGHT_DEVICES)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", PYTHONPATH=str(REPO),
               JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, str(script)], cwd=str(script.parent), env=env, capture_output=True,
                          text=True, timeout=420)
    output = done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULTS")]
    assert done.returncode == 0 and lines, f"the 8-device subprocess failed:\n{output[-6000:]}"
    return json.loads(lines[-1][len("RESULTS"):])


def _result(eight, name):
    result = eight[name]
    assert "error" not in result, result.get("error")
    return result


def _assert_parity(result):
    np.testing.assert_allclose(result["loss"], result["loss_single"], rtol=1e-5, atol=1e-6)
    assert result["acc"] == result["acc_single"]
    np.testing.assert_allclose(result["eval"], result["eval_single"], rtol=1e-5, atol=1e-6)
    assert result["weight_diff"] < 1e-5


def test_model_parallel_trains_as_one_device(eight):
    result = _result(eight, "model_parallel")
    _assert_parity(result["steps_1"])
    _assert_parity(result["steps_2"])  # steps_per_execution: the scan keeps each Variable's layout
    assert result["replicas"] == 2


def test_model_parallel_places_variables_and_slots_by_the_layout_map(eight):
    specs = _result(eight, "model_parallel")["specs"]
    assert specs["d1/kernel"] == [8, None, "model"] and specs["d1/bias"] == [8, "model"]
    assert specs["d2/kernel"] == [8, "model", None]
    for path in ("d2/bias", "bn/gamma", "bn/moving_mean", "adam/iteration", "adam/bn_beta_velocity"):
        assert specs[path] == [8] + [None] * (len(specs[path]) - 1), path  # replicated
    # an optimizer slot has the layout of its variable, as in Keras 3
    assert specs["adam/d1_kernel_momentum"] == specs["adam/d1_kernel_velocity"] == [8, None, "model"]
    assert specs["adam/d1_bias_momentum"] == [8, "model"] and specs["adam/d2_kernel_velocity"] == [8, "model", None]
    assert _result(eight, "model_parallel")["generator"][0] == 8


def test_model_parallel_places_named_layer_outputs(eight):
    result = _result(eight, "model_parallel")
    assert ["data", "model"] in result["constraints"]  # "d1/output", forward and backward


def test_model_parallel_batch_must_split_over_its_replicas(eight):
    message = _result(eight, "model_parallel")["odd_batch"]
    assert "batch of 5 samples" in message and "2 model replicas" in message and "'data'" in message


def test_model_parallel_layouts_that_do_not_fit_are_clear_errors(eight):
    result = _result(eight, "model_parallel")
    assert "'d1/kernel' splits dimension 1 of its shape (6, 10) over the 4 devices of mesh axis 'model'" in \
        result["uneven"]
    assert "has 2 axes, but the variable has shape (16,)" in result["rank"]


def test_data_parallel_from_keras_arguments(eight):
    result = _result(eight, "data_parallel_keras_arguments")
    _assert_parity(result)
    assert result["replicated"]
    assert result["four"] == [4, 5, 6, 7]
    assert any("Expect the input mesh to be 1D" in m for m in result["two_d_warning"])
    _assert_parity(result["two_d"])
    assert result["two_d_replicas"] == 8


def test_distribute_tensor_eager_and_in_a_compiled_step(eight):
    result = _result(eight, "distribute_tensor")
    assert result["eager_spec"] == ["data", "model"] and result["eager_values"]
    assert result["shard_shape"] == [4, 1] and result["same_kept"] and result["symbolic_kept"]
    assert result["loss_diff"] < 1e-5 and result["grad_diff"] < 1e-5
    assert result["constraints"].count(["data", "model"]) >= 2  # the value and its gradient


def test_keras_io_distribution_guide_runs(eight):
    result = _result(eight, "keras_io_guide")
    printed = result["printed"]
    assert printed[0].startswith("Keras distribution initialization skipped or failed")
    assert printed[1] == ("TensorLayout created: <TensorLayout axes=('model', 'data'), device_mesh=<DeviceMesh "
                          "shape=(2, 4), axis_names=['data', 'model']>>")
    assert printed[2] == "Active distribution: <DataParallel device_mesh=<DeviceMesh shape=(8,), axis_names=['batch']>>"
    assert printed[3] == ("Active distribution: <ModelParallel device_mesh=<DeviceMesh shape=(2, 4), "
                          "axis_names=['data', 'model']>>")
    assert np.isfinite(result["loss"]).all() and np.isfinite(result["loss_mp"]).all()
    specs = result["specs"]
    assert specs["d1/kernel"] == [8, None, "model"] and specs["d1/bias"] == [8, "model"]
    assert specs["d2/kernel"] == [8, None, None]
    assert ["data", None] in result["constraints"]  # "d2/output"
