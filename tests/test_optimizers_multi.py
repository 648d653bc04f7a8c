"""MultiOptimizer and OptimizerMap against Keras 3.15 (fixtures from
tests/fixtures/keras_multi_optimizer/make_fixtures.py) and against the sub-optimizers run alone."""
import io
import json
import pathlib
import zipfile

import h5py
import numpy as np
import pytest

import minikeras as mk
from minikeras import optimizers

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "keras_multi_optimizer"
PATHS = ("enc/kernel", "enc/bias", "dec/kernel")


def _variable(path, value):
    scope, name = path.split("/")
    with mk.keras.name_scope(scope):
        return mk.Variable(np.asarray(value, np.float32), name=name)


def _multi():
    opt_map = optimizers.OptimizerMap(optimizers.SGD(0.1, momentum=0.9))
    opt_map["enc/.*"] = optimizers.Adam(0.05)
    return optimizers.MultiOptimizer(opt_map)


@pytest.fixture(scope="module")
def steps():
    return dict(np.load(FIXTURES / "steps.npz"))


def test_optimizer_map_routes_by_exact_key_then_the_one_fullmatching_pattern():
    adam, sgd, rmsprop = optimizers.Adam(), optimizers.SGD(), optimizers.RMSprop()
    opt_map = optimizers.OptimizerMap(default_optimizer=rmsprop)
    opt_map["encoder/layer_0/dense"] = adam
    opt_map["encoder/.*"] = sgd
    opt_map["decoder"] = adam
    assert opt_map["decoder"] is adam
    assert opt_map["encoder/layer_0/dense"] is adam  # exact key wins over the pattern
    assert opt_map["encoder/layer_0/attention/query"] is sgd
    assert opt_map["decoder/layer_0/dense"] is rmsprop  # "decoder" does not fullmatch a longer path
    assert len(opt_map) == 3 and list(opt_map) == ["encoder/layer_0/dense", "encoder/.*", "decoder"]
    del opt_map["decoder"]
    assert opt_map["decoder"] is rmsprop
    assert opt_map(_variable("encoder/kernel", [1.0])) is sgd


def test_optimizer_map_errors_as_keras():
    opt_map = optimizers.OptimizerMap(optimizers.SGD())
    opt_map[".*kernel.*"] = optimizers.Adam()
    opt_map[".*dense.*"] = optimizers.SGD()
    with pytest.raises(ValueError, match="Multiple optimizers assigned to variable dense/kernel"):
        opt_map(_variable("dense/kernel", [1.0]))
    with pytest.raises(ValueError, match="already exists in the OptimizerMap"):
        opt_map[".*dense.*"] = optimizers.SGD()
    with pytest.raises(ValueError, match="key must be a string"):
        opt_map[3] = optimizers.SGD()
    with pytest.raises(ValueError, match="optimizer must be a Keras Optimizer instance"):
        opt_map["a"] = "adam"
    with pytest.raises(ValueError, match="optimizer cannot be LossScaleOptimizer"):
        opt_map["b"] = optimizers.LossScaleOptimizer(optimizers.SGD())
    with pytest.raises(ValueError, match="optimizer cannot be MultiOptimizer"):
        opt_map["c"] = optimizers.MultiOptimizer(optimizers.OptimizerMap(optimizers.SGD()))
    with pytest.raises(TypeError, match="default_optimizer must be a Keras Optimizer instance"):
        optimizers.OptimizerMap("sgd")
    with pytest.raises(TypeError, match="optimizer_map must be a dictionary"):
        optimizers.OptimizerMap(optimizers.SGD(), [("a", optimizers.SGD())])


def test_steps_equal_keras_and_each_sub_optimizer_alone(steps):
    variables = [_variable(p, steps[f"init:{p}"]) for p in PATHS]
    alone_adam, alone_sgd = optimizers.Adam(0.05), optimizers.SGD(0.1, momentum=0.9)
    alone = {p: _variable(p, steps[f"init:{p}"]) for p in PATHS}
    opt = _multi()
    for step in range(3):
        grads = [steps[f"grad{step}:{p}"] for p in PATHS]
        opt.apply(grads, variables)
        alone_adam.apply(grads[:2], [alone["enc/kernel"], alone["enc/bias"]])
        alone_sgd.apply(grads[2:], [alone["dec/kernel"]])
        for p, v in zip(PATHS, variables):
            np.testing.assert_allclose(v.numpy(), steps[f"step{step}:{p}"], rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(v.numpy(), alone[p].numpy(), rtol=1e-6, atol=1e-7)
    assert [o.name for o in opt.optimizers] == ["adam", "sgd"]
    assert [v.path for v in opt.variables] == [k[len("opt:"):] for k in steps if k.startswith("opt:")]
    for v in opt.variables:
        np.testing.assert_allclose(v.numpy(), steps[f"opt:{v.path}"], rtol=1e-5, atol=1e-6)
    assert int(opt.iterations.numpy()) == 3 and [int(o.iterations.numpy()) for o in opt.optimizers] == [3, 3]


def test_callable_selector_and_set_weights_round_trip():
    adam, sgd = optimizers.Adam(0.1), optimizers.SGD(0.1)
    opt = optimizers.MultiOptimizer(lambda v: adam if "enc" in v.path else sgd)
    variables = [_variable(p, np.ones((2,))) for p in PATHS]
    opt.apply([np.ones((2,), np.float32)] * 3, variables)
    assert opt.optimizers == [adam, sgd]
    assert len(adam.variables) == 2 + 4 and len(sgd.variables) == 2  # own iteration + lr, then slots
    weights = opt.get_weights()
    weights[4] = weights[4] + 7.0  # adam's first momentum
    opt.set_weights(weights)
    np.testing.assert_allclose(adam.variables[2].numpy(), weights[4])
    with pytest.raises(ValueError, match="has 10 variables, received 1 weights"):
        opt.set_weights(weights[:1])
    with pytest.raises(ValueError, match="has not yet been built"):
        optimizers.MultiOptimizer(lambda v: sgd).set_weights([])


def test_multi_optimizer_errors_as_keras():
    opt = _multi()
    with pytest.raises(AttributeError, match="Learning rate cannot be accessed on a MultiOptimizer"):
        opt.learning_rate
    with pytest.raises(AttributeError, match="Learning rate cannot be set on a MultiOptimizer"):
        opt.learning_rate = 0.1
    with pytest.raises(ValueError, match="must already be built"):
        opt.apply([np.ones(1, np.float32)])
    variables = [_variable(p, np.ones((1,))) for p in PATHS]
    with pytest.raises(ValueError, match="Received 2 gradients and 3 variables"):
        opt.build(variables)
        opt.apply([np.ones(1, np.float32)] * 2, variables[:2])
    wrapped = optimizers.LossScaleOptimizer(optimizers.SGD())
    with pytest.raises(ValueError, match="LossScaleOptimizer cannot be used inside an MultiOptimizer"):
        optimizers.MultiOptimizer(lambda v: wrapped).build(variables)
    with pytest.raises(ValueError, match="is not an Optimizer instance"):
        optimizers.MultiOptimizer(lambda v: "sgd").build(variables)
    with pytest.raises(TypeError, match="OptimizerMap or a callable"):
        optimizers.MultiOptimizer("adam")


def test_loss_scale_factor_overrides_the_sub_optimizers():
    sgd = optimizers.SGD(1.0, loss_scale_factor=4.0)
    opt = optimizers.MultiOptimizer(optimizers.OptimizerMap(sgd), loss_scale_factor=2.0)
    assert sgd.loss_scale_factor == 2.0
    v = _variable("w/kernel", [1.0])
    opt.apply([np.array([2.0], np.float32)], [v])
    np.testing.assert_allclose(v.numpy(), [0.0])  # 1 - 1.0 * 2 / 2


def test_config_round_trip_matches_keras_layout():
    config = optimizers.serialize(_multi())
    with zipfile.ZipFile(FIXTURES / "model.keras") as z:
        keras_config = json.loads(z.read("config.json"))["compile_config"]["optimizer"]
    assert config["class_name"] == keras_config["class_name"] == "MultiOptimizer"
    assert set(config["config"]) == set(keras_config["config"])
    inner, keras_inner = config["config"]["optimizer_map"], keras_config["config"]["optimizer_map"]
    assert inner["class_name"] == keras_inner["class_name"] == "OptimizerMap"
    assert list(inner["config"]["optimizer_map"]) == list(keras_inner["config"]["optimizer_map"]) == ["enc/.*"]
    for source in (config, keras_config):
        rebuilt = optimizers.deserialize(source)
        assert isinstance(rebuilt, optimizers.MultiOptimizer) and rebuilt.name == source["config"]["name"]
        assert [(type(o).__name__, float(o.learning_rate.numpy())) for o in rebuilt.optimizers] == \
            [("Adam", pytest.approx(0.05)), ("SGD", pytest.approx(0.1))]


def test_callable_selector_config_needs_custom_objects():
    def pick(variable):
        return sgd
    sgd = optimizers.SGD()
    config = optimizers.serialize(optimizers.MultiOptimizer(pick))
    assert config["config"]["optimizer_map"] == {"module": "builtins", "class_name": "function", "config": "pick",
                                                 "registered_name": "function"}
    assert optimizers.deserialize(config, {"pick": pick})._optimizer_map is pick
    with pytest.raises(ValueError, match="unknown optimizer selector function 'pick'"):
        optimizers.deserialize(config)


def test_keras_file_both_ways(tmp_path):
    model = mk.keras.models.load_model(FIXTURES / "model.keras")
    opt = model.optimizer
    assert isinstance(opt, optimizers.MultiOptimizer)
    assert [int(o.iterations.numpy()) for o in opt.optimizers] == [2, 2] and int(opt.iterations.numpy()) == 2
    assert [v.path.split("/")[1] for v in opt.optimizers[0].variables][2:] == [
        "enc_kernel_momentum", "enc_kernel_velocity", "enc_bias_momentum", "enc_bias_velocity"]
    with zipfile.ZipFile(FIXTURES / "model.keras") as z, h5py.File(io.BytesIO(z.read("model.weights.h5"))) as f:
        saved = [f[f"optimizer/vars/{i}"][()] for i in range(len(f["optimizer/vars"]))]
        assert sorted(f["optimizer/optimizers"]) == ["adam", "sgd"]
    assert len(saved) == len(opt.variables) == 12
    for variable, value in zip(opt.variables, saved):
        np.testing.assert_array_equal(variable.numpy(), value)
    x = np.ones((2, 3), np.float32)
    model.fit(x, np.zeros((2, 1), np.float32), epochs=1, verbose=0)
    assert [int(o.iterations.numpy()) for o in opt.optimizers] == [3, 3]
    path = tmp_path / "again.keras"
    model.save(path)
    again = mk.keras.models.load_model(path)
    with zipfile.ZipFile(path) as z, h5py.File(io.BytesIO(z.read("model.weights.h5"))) as f:
        assert sorted(f["optimizer/optimizers"]) == ["adam", "sgd"]
        assert len(f["optimizer/optimizers/adam/vars"]) == 6 and len(f["optimizer/vars"]) == 12
    for a, b in zip(opt.variables, again.optimizer.variables):
        assert a.path == b.path
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_inside_a_loss_scale_optimizer_each_sub_optimizer_sees_unscaled_gradients():
    opt_map = optimizers.OptimizerMap(optimizers.SGD(0.1))
    opt_map["enc/.*"] = optimizers.Adam(0.01)
    wrapped = optimizers.LossScaleOptimizer(optimizers.MultiOptimizer(opt_map), initial_scale=2.0 ** 15)
    enc, dec = _variable("enc/kernel", np.ones(2)), _variable("dec/kernel", np.ones(2))
    wrapped.apply([np.full(2, 2.0 ** 15, np.float32)] * 2, [enc, dec])
    # unscaled gradient 1: Adam's first step moves by lr * m_hat / (sqrt(v_hat) + eps), SGD by lr * 1
    np.testing.assert_allclose(enc.numpy(), 1 - 0.01 / (1 + 1e-7), rtol=1e-6)
    np.testing.assert_allclose(dec.numpy(), 0.9, rtol=1e-6)
    assert [int(o.iterations.numpy()) for o in wrapped.inner_optimizer.optimizers] == [1, 1]
