"""Tests for weights files: Keras 3 layout, Keras 2 files, errors and atomic writes.

The layout assertions are written from Keras 3's saving_lib (H5IOStore): every saveable
stores its own variables in ``<path>/vars/<i>`` with ``attrs['name']``; a Sequential's
layers live in ``layers/<snake_case class>[_n]``; the optimizer in ``optimizer/vars``.
"""
import os
import warnings

import h5py
import numpy as np
import pytest

import minikeras as mk
from minikeras import layers, optimizers, saving


def cnn(dense_units=5):
    return mk.Sequential([
        layers.Conv2D(3, 3, input_shape=(6, 6, 2)),
        layers.BatchNormalization(),
        layers.MaxPooling2D(),
        layers.Flatten(),
        layers.Dense(dense_units, activation="relu"),
        layers.Dropout(0.5),
        layers.Dense(2),
    ])


def randomize(model, seed=0):
    rng = np.random.default_rng(seed)
    for v in model.weights:  # moving statistics included, so non-trainable weights are checked too
        v.assign(rng.uniform(0.5, 1.5, v.shape).astype(v.dtype))
    return model


def weights_of(model):
    return [v.numpy() for v in model.weights]


def layer_weights(model):
    return [v for layer in model.layers for v in layer.weights]


def assert_same_weights(a, b):
    assert len(layer_weights(a)) == len(layer_weights(b))
    for va, vb in zip(layer_weights(a), layer_weights(b)):
        np.testing.assert_array_equal(va.numpy(), vb.numpy(), err_msg=va.path)


def file_tree(path):
    groups, datasets = {}, {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                datasets[name] = (obj.shape, obj.dtype)
            else:
                groups[name] = dict(obj.attrs)
        f.visititems(visit)
    return groups, datasets


# -- round trip and layout ------------------------------------------------------------------------
def test_round_trip_dense_conv_batchnorm(tmp_path):
    model = randomize(cnn())
    path = tmp_path / "model.weights.h5"
    model.save_weights(path)
    other = cnn()
    other.load_weights(path)
    assert_same_weights(model, other)
    assert os.listdir(tmp_path) == ["model.weights.h5"]


def test_keras3_layout(tmp_path):
    model = randomize(cnn())
    path = tmp_path / "m.weights.h5"
    saving.save_weights(model, path)
    groups, datasets = file_tree(path)
    expected_vars = {"vars": 0, "layers/conv2d/vars": 2, "layers/batch_normalization/vars": 4,
                     "layers/max_pooling2d/vars": 0, "layers/flatten/vars": 0, "layers/dense/vars": 2,
                     "layers/dropout/vars": 0, "layers/dense_1/vars": 2,
                     "seed_generator/vars": 1}  # the random state (minikeras.saving.random_state)
    assert {name for name in groups if name.endswith("vars")} == set(expected_vars)
    for group, count in expected_vars.items():
        assert {d for d in datasets if d.rsplit("/", 1)[0] == group} == {f"{group}/{i}" for i in range(count)}
    assert groups["vars"]["name"] == model.name
    assert groups["layers/dense_1/vars"]["name"] == model.layers[-1].name
    assert datasets["layers/conv2d/vars/0"] == ((3, 3, 2, 3), np.float32)          # kernel (HWIO)
    assert datasets["layers/dense/vars/0"] == ((12, 5), np.float32)                # kernel (in, out)
    bn = model.layers[1]
    with h5py.File(path, "r") as f:
        for i, name in enumerate(["gamma", "beta", "moving_mean", "moving_variance"]):  # Keras's order
            np.testing.assert_array_equal(f[f"layers/batch_normalization/vars/{i}"][()], getattr(bn, name).numpy())
        np.testing.assert_array_equal(f["layers/dense_1/vars/1"][()], model.layers[-1].bias.numpy())


def test_loads_file_written_in_keras3_layout(tmp_path):
    """A file as Keras 3 writes it for the same architecture (other layer names, the Keras 2.13
    compatible spelling of nothing else), built here from the documented layout."""
    rng = np.random.default_rng(3)
    shapes = {"conv2d": [(3, 3, 2, 3), (3,)], "batch_normalization": [(3,)] * 4, "dense": [(12, 5), (5,)],
              "dense_1": [(5, 2), (2,)]}
    values = {k: [rng.standard_normal(s).astype(np.float32) for s in v] for k, v in shapes.items()}
    path = tmp_path / "keras.weights.h5"
    with h5py.File(path, "w") as f:
        f.create_group("vars").attrs["name"] = "sequential_7"
        for layer in ["conv2d", "batch_normalization", "max_pooling2d", "flatten", "dense", "dropout", "dense_1"]:
            group = f.create_group(f"layers/{layer}").create_group("vars")
            group.attrs["name"] = f"{layer}_42"
            for i, value in enumerate(values.get(layer, [])):
                group[str(i)] = value
    model = cnn()
    model.load_weights(path)
    loaded = [v.numpy() for v in model.weights]
    # trainable weights come first in model.weights: conv, bn gamma/beta, dense, dense_1, then bn moving stats
    expected = (values["conv2d"] + values["batch_normalization"][:2] + values["dense"] + values["dense_1"]
                + values["batch_normalization"][2:])
    for got, want in zip(loaded, expected):
        np.testing.assert_array_equal(got, want)


def test_layer_with_sublayers_and_subclassed_model(tmp_path):
    class Block(layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.inner = layers.Dense(3)
            self.scale = self.add_weight("scale", (3,), "ones")

        def call(self, x):
            return self.inner(x) * self.scale

    class Net(mk.Model):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.head = layers.Dense(1)

        def call(self, x, training=None):
            return self.head(self.block(x))

    model = Net()
    model(np.ones((2, 4), np.float32))
    randomize(model)
    path = tmp_path / "net.weights.h5"
    model.save_weights(path)
    groups, datasets = file_tree(path)
    assert {"layers/block/vars", "layers/block/inner/vars", "layers/dense/vars"} <= set(groups)
    assert datasets["layers/block/vars/0"][0] == (3,) and datasets["layers/block/inner/vars/0"][0] == (4, 3)
    other = Net()
    other(np.ones((2, 4), np.float32))
    other.load_weights(path)
    assert_same_weights(model, other)
    # Keras 3 names a subclassed model's layers by attribute: 'block', 'head'
    keras_path = tmp_path / "keras_net.weights.h5"
    with h5py.File(keras_path, "w") as f:
        f.create_group("vars")
        for layer_path, variables in [("block", [model.block.scale]), ("block/inner", model.block.inner.weights),
                                      ("head", model.head.weights)]:
            group = f.create_group(f"{layer_path}/vars")
            for i, v in enumerate(variables):
                group[str(i)] = v.numpy() + 1
    other.load_weights(keras_path)
    np.testing.assert_array_equal(other.head.kernel.numpy(), model.head.kernel.numpy() + 1)
    np.testing.assert_array_equal(other.block.scale.numpy(), model.block.scale.numpy() + 1)


# -- legacy Keras 2 files ----------------------------------------------------------------------
def write_keras2(path, model, full_model):
    """Keras 2's HDF5 layout: layer groups with weight_names, datasets at '<layer>/<layer>/kernel:0'."""
    with h5py.File(path, "w") as f:
        root = f.create_group("model_weights") if full_model else f
        if full_model:
            f.attrs["keras_version"] = "2.12.0"
            f.attrs["model_config"] = "{}"
        names = ["input_1"] + [f"k2_{layer.name}" for layer in model.layers]
        root.attrs["layer_names"] = [n.encode() for n in names]
        root.attrs["backend"] = "tensorflow"
        root.create_group("input_1").attrs["weight_names"] = []
        for name, layer in zip(names[1:], model.layers):
            group = root.create_group(name)
            weight_names = [f"{name}/{v.name}:0" for v in layer.weights]
            group.attrs["weight_names"] = [w.encode() for w in weight_names]
            for weight_name, v in zip(weight_names, layer.weights):
                group.create_dataset(weight_name, data=v.numpy())


@pytest.mark.parametrize("full_model", [True, False], ids=["model.save", "save_weights"])
def test_loads_keras2_h5(tmp_path, full_model):
    source = randomize(cnn(), seed=5)
    path = tmp_path / "keras2.h5"
    write_keras2(path, source, full_model)
    model = cnn()
    model.load_weights(path)
    assert_same_weights(source, model)


def test_keras2_layer_count_mismatch(tmp_path):
    path = tmp_path / "keras2.h5"
    write_keras2(path, randomize(cnn()), full_model=True)
    with pytest.raises(ValueError, match=r"Layer count mismatch.*keras2.h5.*has 3 layers.*the file has 4"):
        mlp().load_weights(path)


# -- mismatches ----------------------------------------------------------------------------------
def replace_dataset(path, name, value):
    with h5py.File(path, "a") as f:
        del f[name]
        f[name] = value


def test_shape_mismatch_names_the_weight_and_changes_nothing(tmp_path):
    path = tmp_path / "m.weights.h5"
    randomize(cnn()).save_weights(path)
    replace_dataset(path, "layers/dense/vars/0", np.zeros((12, 6), np.float32))
    other = cnn()
    before = weights_of(other)
    with pytest.raises(ValueError) as info:
        other.load_weights(path)
    message = str(info.value)
    assert other.layers[4].kernel.path in message and "(12, 5)" in message and "(12, 6)" in message
    assert "layers/dense/vars/0" in message and "m.weights.h5" in message
    for a, b in zip(before, weights_of(other)):  # all-or-nothing: validated before any assign
        np.testing.assert_array_equal(a, b)


def test_skip_mismatch_loads_the_rest(tmp_path):
    path = tmp_path / "m.weights.h5"
    source = randomize(cnn())
    source.save_weights(path)
    replace_dataset(path, "layers/dense/vars/0", np.zeros((12, 6), np.float32))
    other = cnn()
    dense_before = other.layers[4].kernel.numpy()
    with pytest.warns(UserWarning, match="Skipping"):
        other.load_weights(path, skip_mismatch=True)
    np.testing.assert_array_equal(other.layers[0].kernel.numpy(), source.layers[0].kernel.numpy())
    np.testing.assert_array_equal(other.layers[4].kernel.numpy(), dense_before)


def test_layer_count_mismatch_in_keras3_file(tmp_path):
    path = tmp_path / "m.weights.h5"
    randomize(cnn()).save_weights(path)
    with h5py.File(path, "a") as f:
        f["layers/dense_2/vars/0"] = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match=r"layers/dense_2/vars.*no layer"):
        cnn().load_weights(path)
    with h5py.File(path, "a") as f:
        del f["layers/dense_2"]
        del f["layers/dense_1"]
    with pytest.raises(ValueError, match=r"Dense '.*' has 2 variables.*no group 'layers/dense_1/vars'"):
        cnn().load_weights(path)
    with h5py.File(path, "a") as f:
        f["layers/dense_1/vars/0"] = np.zeros((5, 2), np.float32)
    with pytest.raises(ValueError, match=r"Dense '.*' has 2 variables.*the file has 1 at '/layers/dense_1/vars'"):
        cnn().load_weights(path)


def test_unbuilt_model_and_bad_filename(tmp_path):
    unbuilt = mk.Sequential([layers.Dense(2)])
    with pytest.raises(ValueError, match="not yet been built"):
        unbuilt.save_weights(tmp_path / "u.weights.h5")
    with pytest.raises(ValueError, match=r"must end in `.weights.h5`"):
        cnn().save_weights(tmp_path / "model.h5")


# -- damaged and foreign files -------------------------------------------------------------------
def test_truncated_file_is_a_clear_error(tmp_path):
    path = tmp_path / "m.weights.h5"
    randomize(cnn()).save_weights(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"m.weights.h5.*truncated or corrupted"):
        cnn().load_weights(path)


def test_non_hdf5_foreign_and_missing_files(tmp_path):
    text = tmp_path / "notes.weights.h5"
    text.write_text("not weights")
    with pytest.raises(ValueError, match=r"notes.weights.h5.*not an HDF5 file"):
        cnn().load_weights(text)
    foreign = tmp_path / "foreign.h5"
    with h5py.File(foreign, "w") as f:
        f["images"] = np.zeros(3)
    with pytest.raises(ValueError, match=r"foreign.h5.*not a Keras weights file.*images"):
        cnn().load_weights(foreign)
    with pytest.raises(FileNotFoundError, match="missing.weights.h5"):
        cnn().load_weights(tmp_path / "missing.weights.h5")


# -- atomic writes --------------------------------------------------------------------------------
@pytest.mark.parametrize("error", [OSError("disk full"), KeyboardInterrupt()], ids=["OSError", "KeyboardInterrupt"])
def test_failed_write_keeps_previous_file(tmp_path, monkeypatch, error):
    path = tmp_path / "m.weights.h5"
    randomize(cnn()).save_weights(path)
    before = path.read_bytes()
    original = h5py.Group.create_dataset
    calls = []

    def failing(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise error
        return original(self, *args, **kwargs)

    monkeypatch.setattr(h5py.Group, "create_dataset", failing)
    with pytest.raises(type(error)):
        randomize(cnn(), seed=9).save_weights(path)
    assert len(calls) == 3
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["m.weights.h5"]  # no temp file left


def test_overwrite_false_refuses(tmp_path):
    path = tmp_path / "m.weights.h5"
    cnn().save_weights(path)
    before = path.read_bytes()
    with pytest.raises(FileExistsError, match="m.weights.h5"):
        randomize(cnn()).save_weights(path, overwrite=False)
    assert path.read_bytes() == before


# -- optimizer state ------------------------------------------------------------------------------
def mlp():
    return mk.Sequential([layers.Dense(4, activation="relu", input_shape=(3,)), layers.BatchNormalization(),
                          layers.Dense(2)])


def with_trained_optimizer(model, optimizer, seed=0):
    """The optimizer built and its state filled as if it had trained (no compiled step needed)."""
    model.optimizer = optimizer
    optimizer.build(model.trainable_variables)
    rng = np.random.default_rng(seed)
    for v in optimizer.variables:
        v.assign(rng.uniform(0.1, 1.0, v.shape).astype(v.dtype) if v.dtype.kind == "f" else np.full(v.shape, 7))
    return model


def test_optimizer_state_round_trip(tmp_path):
    model = with_trained_optimizer(randomize(mlp()), optimizers.Adam(learning_rate=0.01))
    path = tmp_path / "m.weights.h5"
    model.save_weights(path)
    groups, datasets = file_tree(path)
    n = len(model.optimizer.variables)
    assert n == 2 + 2 * len(model.trainable_variables)  # iterations, learning_rate, 2 slots per variable
    assert groups["optimizer/vars"]["name"] == model.optimizer.name
    assert {d for d in datasets if d.startswith("optimizer/")} == {f"optimizer/vars/{i}" for i in range(n)}
    assert datasets["optimizer/vars/0"][0] == ()  # iterations, a scalar

    other = mlp()
    other.optimizer = optimizers.Adam(learning_rate=0.5)
    assert not other.optimizer.built
    other.load_weights(path)
    assert other.optimizer.built  # built from the model's trainable variables, then filled
    assert int(other.optimizer.iterations.numpy()) == 7
    assert len(other.optimizer.variables) == n
    for a, b in zip(model.optimizer.variables, other.optimizer.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=a.path)
    assert_same_weights(model, other)

    plain = mlp()  # a model without an optimizer ignores the optimizer state
    plain.load_weights(path)
    assert_same_weights(model, plain)


def test_optimizer_variable_count_mismatch_warns(tmp_path):
    model = with_trained_optimizer(randomize(mlp()), optimizers.Adam())
    path = tmp_path / "m.weights.h5"
    model.save_weights(path)
    other = mlp()
    other.optimizer = optimizers.SGD()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        other.load_weights(path)
    assert any("Skipping variable loading for optimizer" in str(w.message) for w in caught)
    assert_same_weights(model, other)


# -- whole-model .keras files --------------------------------------------------------------------
def test_keras_file_round_trip(tmp_path):
    import json
    import zipfile
    model = mk.Sequential([layers.Input((3,)), layers.Dense(4, activation="relu"), layers.BatchNormalization(),
                           layers.Dense(2)])
    randomize(model)
    model.compile(optimizer=optimizers.Adam(learning_rate=0.01), loss="mse", metrics=["mae"])
    with_trained_optimizer(model, model.optimizer)
    path = tmp_path / "model.keras"
    saving.save_model(model, path)
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == ["config.json", "metadata.json", "model.weights.h5"]
        config = json.loads(archive.read("config.json"))
    assert config["class_name"] == "Sequential"
    assert [spec["class_name"] for spec in config["config"]["layers"]] == [
        "InputLayer", "Dense", "BatchNormalization", "Dense"]  # Keras 3 writes the input as its first layer
    assert config["compile_config"]["loss"] in ("mse", "mean_squared_error")
    loaded = saving.load_model(path)
    assert isinstance(loaded, mk.Sequential) and loaded.built
    assert [type(layer).__name__ for layer in loaded.layers] == ["Dense", "BatchNormalization", "Dense"]
    assert loaded.layers[0].activation is model.layers[0].activation
    assert_same_weights(model, loaded)
    for a, b in zip(model.optimizer.variables, loaded.optimizer.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=a.path)
    other = mlp()
    other.load_weights(path)  # load_weights reads the weights inside a .keras archive too
    assert_same_weights(model, other)


def test_keras_file_errors(tmp_path):
    class Net(mk.Model):
        def call(self, x, training=None):
            return x

    with pytest.raises(NotImplementedError, match="Sequential"):
        saving.save_model(Net(), tmp_path / "net.keras")
    with pytest.raises(ValueError, match=r"\.keras"):
        saving.save_model(mlp(), tmp_path / "net.txt")  # (.h5 is the legacy HDF5 model file)
    path = tmp_path / "m.keras"
    saving.save_model(mlp(), path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"m.keras.*truncated"):
        saving.load_model(path)


def test_model_own_variables_and_bfloat16(tmp_path):
    import ml_dtypes

    class Scaled(mk.Model):
        def __init__(self):
            super().__init__()
            self.scale = mk.Variable(np.array([1.5, -2.0, 0.25], ml_dtypes.bfloat16), name="scale")
            self.counter = mk.Variable(np.int32(3), trainable=False, name="counter")

        def call(self, x, training=None):
            return x * self.scale

    model = Scaled()
    model.built = True
    path = tmp_path / "scaled.weights.h5"
    model.save_weights(path)
    with h5py.File(path, "r") as f:
        assert f["vars"].attrs["name"] == model.name
        assert f["vars/0"].attrs["dtype"] == "bfloat16" and f["vars/0"].shape == (3,)  # Keras's bfloat16 marker
        assert f["vars/1"][()] == 3
    other = Scaled()
    other.built = True
    other.scale.assign(np.zeros(3, ml_dtypes.bfloat16))
    other.counter.assign(0)
    other.load_weights(path)
    assert other.scale.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(other.scale.numpy().astype(np.float32), [1.5, -2.0, 0.25])
    assert int(other.counter.numpy()) == 3


def test_weights_file_walks_the_attributes_variables_walk(tmp_path):
    """The weights file searches the same attributes as ``variables`` (``_NOT_TRACKED`` skipped:
    no optimizer, loss tracker or compiled steps under the model); a Metric held by an attribute
    writes no state, as in Keras 3.15 (tests/test_saving_metric_state.py)."""
    class Tracked(mk.Model):
        def __init__(self):
            super().__init__()
            self.dense = layers.Dense(2)
            self.seen = mk.metrics.Mean(name="seen")

        def call(self, x, training=None):
            return self.dense(x)

    model = Tracked()
    model.compile("adam", "mse")
    model.fit(np.ones((4, 3), np.float32), np.ones((4, 2), np.float32), verbose=0)
    model.seen.update_state([2.0, 4.0])
    path = tmp_path / "tracked.weights.h5"
    model.save_weights(path)
    groups, datasets = file_tree(path)
    assert {g for g in groups if g.endswith("/vars") or g == "vars"} == {
        "vars", "layers/dense/vars", "optimizer/vars", "seed_generator/vars"}
    assert [v.name for v in model.variables] == ["kernel", "bias"]
    sequential = mk.Sequential([layers.Input((3,)), layers.Dense(2)])
    sequential.save_weights(tmp_path / "seq.weights.h5")
    groups, _ = file_tree(tmp_path / "seq.weights.h5")
    # no group for the Input
    assert {g for g in groups if g.endswith("vars")} == {"vars", "layers/dense/vars", "seed_generator/vars"}
