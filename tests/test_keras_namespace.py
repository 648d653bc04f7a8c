"""The top-level names of Keras 3.15's ``keras`` that minikeras has, and ``keras.Variable``'s
constructor as Keras 3's."""
import numpy as np
import pytest

import minikeras as mk
from minikeras import keras


def test_top_level_names_are_minikeras_objects():
    assert keras.Layer is mk.layers.Layer and keras.Loss is mk.losses.Loss and keras.Metric is mk.metrics.Metric
    assert keras.Optimizer is mk.optimizers.Optimizer and keras.Initializer is mk.initializers.Initializer
    assert keras.Regularizer is mk.regularizers.Regularizer and keras.KerasTensor is type(keras.Input((2,)))
    assert keras.Input is mk.layers.Input and keras.Model is mk.Model and keras.Sequential is mk.Sequential
    assert keras.device is mk.device
    assert keras.version() == keras.__version__ == "3.15.1"  # the Keras release minikeras follows
    for module in ("backend", "config", "constraints", "preprocessing", "random", "saving", "utils", "models"):
        assert hasattr(keras, module), module
    assert keras.models.clone_model is not None and keras.models.save_model is mk.saving.save_model


def test_variable_takes_keras_3s_arguments():
    v = keras.Variable(keras.initializers.Ones(), shape=(2,), name="v")
    assert (v.name, v.path, v.trainable, v.dtype, v.shape) == ("v", "v", True, mk.float32, (2,))
    np.testing.assert_array_equal(v.numpy(), [1.0, 1.0])
    assert keras.Variable("zeros", shape=(2, 3)).shape == (2, 3)
    value = keras.Variable(np.array([1, 2], "int32"), trainable=False)
    assert value.dtype == mk.int32 and value.name == "variable" and not value.trainable
    with pytest.raises(ValueError, match="When creating a Variable from an initializer, the `shape` argument should "
                                         "be specified"):
        keras.Variable(keras.initializers.Ones())
    with pytest.raises(ValueError, match="Invalid value for argument `aggregation`"):
        keras.Variable(1.0, aggregation="max")
    layer = keras.layers.Dense(2)
    layer.build((None, 3))
    assert isinstance(layer.kernel, keras.Variable) and isinstance(v, mk.Variable)  # every Variable is one
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(v * v)
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), [2.0, 2.0])


def test_unpack_and_pack_x_y_sample_weight_as_keras():
    u, p = keras.utils.unpack_x_y_sample_weight, keras.utils.pack_x_y_sample_weight
    assert [u([1, 2]), u((1,)), u(5), u((1, 2, 3)), u({"a": 1})] == [
        (1, 2, None), (1, None, None), (5, None, None), (1, 2, 3), ({"a": 1}, None, None)]
    with pytest.raises(ValueError, match="Data is expected to be in format `x`, `\\(x,\\)`, `\\(x, y\\)`, or "
                                         "`\\(x, y, sample_weight\\)`, found: \\(1, 2, 3, 4\\)"):
        u((1, 2, 3, 4))
    assert [p(1), p((1, 2)), p(1, 2), p(1, 2, 3), p([1])] == [1, ((1, 2),), (1, 2), (1, 2, 3), ([1],)]
