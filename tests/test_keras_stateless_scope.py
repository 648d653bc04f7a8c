"""keras.StatelessScope against Keras 3.15 (on JAX): mapped reads, collected writes that no
Variable keeps, nested scopes, collected losses, Keras's errors. Expected values are the
written formulas; Keras 3.15 gives the same for the same code."""
import numpy as np
import pytest

import minikeras as mk
from minikeras import keras
from minikeras.keras import ops
from minikeras.keras.stateless_scope import get_stateless_scope, in_stateless_scope

ONES = np.ones(2, "float32")


def test_reads_see_the_mapping_and_writes_are_collected_not_applied():
    v = keras.Variable(ONES, name="v")
    w = keras.Variable(np.zeros(2, "float32"), name="w")
    with keras.StatelessScope(state_mapping=[(v, np.full(2, 5.0, "float32"))]) as scope:
        assert in_stateless_scope() and get_stateless_scope() is scope
        np.testing.assert_allclose(np.asarray(ops.add(v, 1)), [6.0, 6.0])
        v.assign(v + 1)
        np.testing.assert_allclose(v.numpy(), [6.0, 6.0])
        w.assign_add(ONES)
        np.testing.assert_allclose(w.numpy(), [1.0, 1.0])
        np.testing.assert_allclose(np.asarray(scope.get_current_value(v)), [6.0, 6.0])
        np.testing.assert_allclose(np.asarray(scope.get_current_value(w)), [1.0, 1.0])
        assert scope.get_current_value(keras.Variable(1.0)) is None
    assert not in_stateless_scope()
    np.testing.assert_allclose(v.numpy(), ONES)
    np.testing.assert_allclose(w.numpy(), [0.0, 0.0])
    assert [variable.name for variable, _ in scope.updates] == ["v", "w"]


def test_mapping_values_take_the_variable_dtype():
    v = keras.Variable(ONES, name="v")
    with keras.StatelessScope({v: np.array([2, 3], "int32")}):
        assert v.numpy().dtype == np.float32
        np.testing.assert_allclose(v.numpy(), [2.0, 3.0])


def test_layer_updates_and_weights():
    bn = keras.layers.BatchNormalization(momentum=0.5)
    bn.build((None, 2))
    x = np.arange(6, dtype="float32").reshape(3, 2)
    with keras.StatelessScope() as scope:
        bn(x, training=True)
    np.testing.assert_allclose(bn.moving_mean.numpy(), [0.0, 0.0])
    np.testing.assert_allclose(np.asarray(scope.get_current_value(bn.moving_mean)), 0.5 * x.mean(axis=0))
    dense = keras.layers.Dense(2, use_bias=False)
    dense.build((None, 3))
    with keras.StatelessScope([(dense.kernel, np.ones((3, 2)))]):
        np.testing.assert_allclose(np.asarray(dense(np.ones((1, 3), "float32"))), [[3.0, 3.0]])


def test_compiled_steps_write_to_the_scope():
    v = keras.Variable(ONES, name="v")

    def step(x):
        v.assign_add(x)
        return v.value() * 2
    step = mk.function(step, autograph=False)
    with keras.StatelessScope([(v, np.full(2, 3.0, "float32"))]) as scope:
        np.testing.assert_allclose(np.asarray(step(ONES)), [8.0, 8.0])
        np.testing.assert_allclose(np.asarray(step(ONES)), [10.0, 10.0])
        np.testing.assert_allclose(np.asarray(scope.get_current_value(v)), [5.0, 5.0])
    np.testing.assert_allclose(v.numpy(), ONES)


def test_nested_scope_writes_end_with_it():
    v = keras.Variable(ONES, name="v")
    with keras.StatelessScope() as outer:
        with keras.StatelessScope():
            v.assign(np.full(2, 9.0, "float32"))
        np.testing.assert_allclose(v.numpy(), ONES)
        assert outer.get_current_value(v) is None
    np.testing.assert_allclose(v.numpy(), ONES)


def test_collect_losses():
    class AddsLoss(keras.layers.Layer):
        def call(self, x):
            self.add_loss(ops.sum(x))
            return x

    layer = AddsLoss()
    with keras.StatelessScope(collect_losses=True) as scope:
        layer(ONES)
    assert [float(loss) for loss in scope.losses] == [2.0] and layer.losses == []


def test_errors():
    v = keras.Variable(ONES, name="v")
    with pytest.raises(ValueError, match="must be tensors with a shape that matches .* with shape \\(3,\\)"):
        keras.StatelessScope(state_mapping=[(v, np.ones(3, "float32"))])
    with pytest.raises(ValueError, match="all keys in argument `mapping` must be Variable instances"):
        keras.StatelessScope(state_mapping=[(np.ones(2), np.ones(2))])
    with pytest.raises(ValueError, match="initialize_variables=False"):
        keras.StatelessScope(initialize_variables=False)
