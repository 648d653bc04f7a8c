"""LossScaleOptimizer: Keras 3's dynamic loss scaling (halve and skip on a non-finite gradient,
double after dynamic_growth_steps finite steps), written out by hand here."""
import warnings
import zipfile

import h5py
import numpy as np
import pytest

import minikeras as mk


def test_dynamic_scaling_skips_and_grows():
    var = mk.Variable(np.array([1.0, 2.0], "float32"))
    opt = mk.mixed_precision.LossScaleOptimizer(mk.optimizers.SGD(0.5), initial_scale=4.0, dynamic_growth_steps=2)
    assert opt.loss_scale == 4.0 and opt.dynamic
    opt.apply([mk.constant([4.0, 8.0])], [var])  # scaled gradients: the SGD step sees [1, 2]
    np.testing.assert_allclose(var.numpy(), [0.5, 1.0])
    assert (float(opt.dynamic_scale.numpy()), int(opt.step_counter.numpy())) == (4.0, 1)
    opt.apply([mk.constant([4.0, 4.0])], [var])  # the second finite step in a row doubles the scale
    np.testing.assert_allclose(var.numpy(), [0.0, 0.5])
    assert (float(opt.dynamic_scale.numpy()), int(opt.step_counter.numpy())) == (8.0, 0)
    opt.apply([mk.constant([np.inf, 1.0])], [var])  # skipped; the scale halves
    np.testing.assert_allclose(var.numpy(), [0.0, 0.5])
    assert (float(opt.dynamic_scale.numpy()), int(opt.step_counter.numpy())) == (4.0, 0)
    assert int(opt.iterations.numpy()) == 2  # the inner optimizer's steps
    assert [v.name for v in opt.variables][:4] == ["iteration", "learning_rate", "step_counter", "dynamic_scale"]


def test_scaled_loss_and_unscaled_gradients_in_a_tape_loop():
    var = mk.Variable(3.0)
    opt = mk.mixed_precision.LossScaleOptimizer(mk.optimizers.SGD(0.1))
    with mk.GradientTape() as tape:
        loss = var * var
        scaled = opt.get_scaled_loss(loss)
    assert float(scaled.numpy()) == 9.0 * 2 ** 15
    (grad,) = opt.get_unscaled_gradients(tape.gradient(scaled, [var]))
    assert float(grad.numpy()) == 6.0
    opt.learning_rate = 0.2
    assert float(opt.inner_optimizer.learning_rate.numpy()) == pytest.approx(0.2)


def test_config_round_trip():
    opt = mk.mixed_precision.LossScaleOptimizer(mk.optimizers.Adam(0.01), initial_scale=128.0,
                                                dynamic_growth_steps=10)
    config = opt.get_config()
    assert (config["initial_scale"], config["dynamic_growth_steps"]) == (128.0, 10)
    again = mk.optimizers.deserialize(mk.optimizers.serialize(opt))
    assert isinstance(again.inner_optimizer, mk.optimizers.Adam) and again.initial_scale == 128.0


def test_bad_arguments():
    with pytest.raises(TypeError, match="expects an mk.optimizers.Optimizer.*received inner_optimizer='adam'"):
        mk.mixed_precision.LossScaleOptimizer("adam")
    with pytest.raises(ValueError, match="no longer supports `dynamic=False`"):
        mk.mixed_precision.LossScaleOptimizer(mk.optimizers.SGD(), dynamic=False)
    with pytest.raises(ValueError, match="does not support `clipnorm`"):
        mk.mixed_precision.LossScaleOptimizer(mk.optimizers.SGD(), clipnorm=1.0)


def test_compile_wraps_the_optimizer_under_mixed_float16():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float16 on a CPU warns
        mk.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(4), mk.layers.Activation("softmax", dtype="float32")])
    finally:
        mk.mixed_precision.set_global_policy("float32")
    model.compile("sgd", "sparse_categorical_crossentropy")
    assert isinstance(model.optimizer, mk.mixed_precision.LossScaleOptimizer)
    x, y = np.ones((8, 3), "float32"), np.zeros((8,), "int32")
    before = model.layers[0].kernel.numpy()
    model.fit(x, y, epochs=2, batch_size=4, verbose=0)
    assert int(model.optimizer.iterations.numpy()) == 4 and float(model.optimizer.dynamic_scale.numpy()) == 2 ** 15
    assert not np.allclose(before, model.layers[0].kernel.numpy())
    model.compile("sgd", "sparse_categorical_crossentropy", auto_scale_loss=False)
    assert isinstance(model.optimizer, mk.optimizers.SGD)


def test_a_keras_file_holds_its_state_where_keras_files_it(tmp_path):
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2, dtype="mixed_float16")])
    model.compile(mk.mixed_precision.LossScaleOptimizer(mk.optimizers.Adam(), initial_scale=64.0), "mse")
    model.fit(np.ones((4, 3), "float32"), np.ones((4, 2), "float32"), verbose=0)
    path = str(tmp_path / "lso.keras")
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        archive.extract("model.weights.h5", tmp_path)
    with h5py.File(tmp_path / "model.weights.h5", "r") as f:  # Keras 3: all of them, then the inner ones again
        assert len(f["optimizer/vars"]) == 10 and len(f["optimizer/inner_optimizer/vars"]) == 6
    again = mk.saving.load_model(path)
    assert isinstance(again.optimizer, mk.mixed_precision.LossScaleOptimizer)
    assert int(again.optimizer.iterations.numpy()) == 1 and int(again.optimizer.step_counter.numpy()) == 1
    assert float(again.optimizer.dynamic_scale.numpy()) == 64.0
