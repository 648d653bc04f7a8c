"""BatchNormalization's batch renormalization against Keras 3.15 on JAX (fixtures/batch_renorm,
recorded by record_batch_renorm.py there): outputs, every statistic after each step, gradients."""
import os

import numpy as np
import pytest

import minikeras as mk

CASES = {  # as record_batch_renorm.py's
    "clipped": ({"renorm": True, "renorm_clipping": {"rmin": 0.8, "rmax": 1.2, "dmax": 0.3}, "momentum": 0.5,
                 "renorm_momentum": 0.7}, (4, 3)),
    "plain": ({"renorm": True, "center": False, "axis": 1}, (2, 3, 2)),
}
KERAS = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "batch_renorm", "batch_renorm.npz"))


def _close(actual, name):
    np.testing.assert_allclose(np.asarray(actual), KERAS[name], rtol=2e-5, atol=2e-6, err_msg=name)


@pytest.mark.parametrize("case", list(CASES))
def test_training_steps_statistics_and_gradients_as_keras(case):
    kwargs, shape = CASES[case]
    layer = mk.layers.BatchNormalization(**kwargs)
    layer.build(shape)
    names = [v.path.split("/")[-1] for v in layer.weights]
    assert sorted(names) == sorted(k[len(case) + 1:-2] for k in KERAS.files if k.startswith(f"{case}/")
                                   and k.endswith("_0"))
    assert [v.path.split("/")[-1] for v in layer.non_trainable_weights] == [
        "moving_mean", "moving_variance", "moving_stddev", "renorm_mean", "renorm_stddev"]
    if layer.gamma is not None:
        layer.gamma.assign(KERAS[f"{case}/gamma_0"])
    w = mk.constant(KERAS[f"{case}/w"])
    x0 = mk.constant(KERAS[f"{case}/x0"])
    state = [v.numpy() for v in layer.non_trainable_weights]
    with mk.GradientTape() as tape:
        tape.watch(x0)
        loss = mk.reduce_sum(layer(x0, training=True) * w)
    grads = tape.gradient(loss, [x0] + layer.trainable_weights)
    _close(grads[0], f"{case}/dx")
    for variable, grad in zip(layer.trainable_weights, grads[1:]):
        _close(grad, f"{case}/d{variable.path.split('/')[-1]}")
    for variable, value in zip(layer.non_trainable_weights, state):  # the step above is done again below
        variable.assign(value)
    for step in range(3):
        _close(layer(mk.constant(KERAS[f"{case}/x{step}"]), training=True), f"{case}/y{step}")
        for variable in layer.weights:
            _close(variable, f"{case}/{variable.path.split('/')[-1]}_{step}")
    _close(layer(x0, training=False), f"{case}/inference")


def test_in_a_compiled_fit_step_and_config():
    layer = mk.layers.BatchNormalization(renorm=True, renorm_clipping={"rmax": 3.0})
    model = mk.Sequential([mk.Input((3,)), layer])
    model.compile(optimizer="sgd", loss="mse")
    x = np.random.default_rng(0).standard_normal((8, 3)).astype("float32") * 2 + 1
    model.fit(x, x, epochs=2, batch_size=4, verbose=0)
    assert np.abs(layer.renorm_mean.numpy()).max() > 0  # updated inside the compiled step
    np.testing.assert_allclose(layer.moving_variance.numpy(),
                               np.maximum(layer.moving_stddev.numpy() ** 2 - layer.epsilon, 0), rtol=1e-6)
    config = layer.get_config()
    assert (config["renorm"], config["renorm_clipping"], config["renorm_momentum"]) == (True, {"rmax": 3.0}, 0.99)
    assert mk.layers.BatchNormalization(renorm=True).get_config()["renorm_clipping"] == {}
    assert mk.layers.BatchNormalization().get_config()["renorm_clipping"] is None


@pytest.mark.parametrize("clipping, message", [({"rmax": 1.0, "foo": 2}, "invalid keys"),
                                               ({"rmax": 0.5, "rmin": 1.0}, "rmax should be greater than rmin"),
                                               ({"dmax": -1.0}, "dmax should be non-negative")])
def test_bad_clipping(clipping, message):
    with pytest.raises(ValueError, match=message):
        mk.layers.BatchNormalization(renorm=True, renorm_clipping=clipping)
