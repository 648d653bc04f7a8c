"""Keras guide code (renamed) that fit must run as Keras 3 runs it: a dict keyed by Input
names, a functional CustomModel overriding only train_step, a model whose only loss is
add_loss, a model with no trainable weights, integer arrays to a float model."""
import numpy as np
import pytest

import minikeras as mk

X = np.arange(8, dtype=np.float32).reshape(4, 2) / 8
Y = np.ones((4, 1), np.float32)


def test_functional_model_fed_a_dict_keyed_by_input_names():
    a, b = mk.Input((2,), name="a"), mk.Input((3,), name="b")
    model = mk.Model([a, b], mk.layers.Dense(1)(mk.layers.Concatenate()([a, b])))
    model.compile("sgd", "mse")
    xb = np.ones((4, 3), np.float32)
    history = model.fit({"b": xb, "a": X}, Y, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    np.testing.assert_allclose(model.predict({"a": X, "b": xb}, verbose=0), model.predict([X, xb], verbose=0))


def test_custom_model_overriding_train_step_built_functionally():
    class CustomModel(mk.Model):
        def train_step(self, data):
            x, y = data
            with mk.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            gradients = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
            return {"custom_loss": loss}

    inputs = mk.Input((2,))
    model = CustomModel(inputs, mk.layers.Dense(1)(inputs))
    assert isinstance(model, CustomModel) and type(model).__name__ == "CustomModel"
    model.compile("sgd", "mse")
    assert list(model.fit(X, Y, verbose=0).history) == ["custom_loss"]  # its own train_step ran

    class WithCall(mk.Model):
        def call(self, x):
            return x

    with pytest.raises(TypeError, match="defines call"):  # a call() of its own and a graph: ambiguous
        WithCall(inputs, inputs)


def test_model_whose_only_loss_is_add_loss():
    class Penalty(mk.layers.Layer):
        def call(self, x):
            self.add_loss(mk.reduce_mean(x ** 2))
            return x

    inputs = mk.Input((2,))
    model = mk.Model(inputs, Penalty()(mk.layers.Dense(2, kernel_initializer="ones")(inputs)))
    model.compile(optimizer="adam")
    losses = model.fit(X, epochs=3, verbose=0).history["loss"]
    assert losses[2] < losses[0]


def test_model_with_no_trainable_weights_trains_with_keras_warning():
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1, trainable=False)])
    model.compile("sgd", "mse")
    before = model.get_weights()
    with pytest.warns(UserWarning, match="The model does not have any trainable weights."):
        loss = model.fit(X, Y, verbose=0).history["loss"][0]
    np.testing.assert_allclose(loss, np.mean((model.predict(X, verbose=0) - Y) ** 2), rtol=1e-5)
    for w, b in zip(model.get_weights(), before):
        np.testing.assert_array_equal(w, b)


@pytest.mark.parametrize("dtype", [np.uint8, np.int32])
def test_integer_arrays_are_cast_to_the_inputs_dtype(dtype):
    mk.random.set_seed(0)
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    model.compile("sgd", "mse")
    xi = (np.arange(8).reshape(4, 2) % 3).astype(dtype)
    np.testing.assert_allclose(model.predict(xi, verbose=0), model.predict(xi.astype(np.float32), verbose=0))
    assert np.isfinite(model.evaluate(xi, Y, verbose=0))
    assert np.isfinite(model.fit(xi, Y, verbose=0).history["loss"][0])
