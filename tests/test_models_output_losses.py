"""compile/fit/evaluate with several outputs, class_weight, custom metrics and validation hooks.

Every expected number is Keras 3's (jax backend) for the same model, weights and data; the
reference script set the weights with the same ``weights_for`` below.
"""
import numpy as np
import pytest

import minikeras as mk
from minikeras import layers

RNG = np.random.default_rng(0)
XA = RNG.normal(size=(8, 4)).astype("float32")
XB = RNG.normal(size=(8, 3)).astype("float32")
Y1 = RNG.normal(size=(8, 1)).astype("float32")
Y2 = RNG.integers(0, 3, 8)


def weights_for(model, seed=42):
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=w.shape) * 0.3).astype("float32") for w in model.get_weights()]


def two_in_two_out():
    a, b = mk.Input((4,), name="a"), mk.Input((3,), name="b")
    h = layers.Dense(5, activation="relu", name="hidden")(layers.concatenate([a, b]))
    model = mk.Model([a, b], [layers.Dense(1, name="score")(h), layers.Dense(3, activation="softmax", name="cls")(h)])
    model.set_weights(weights_for(model))
    return model


def softmax_classifier():
    model = mk.Sequential([mk.Input((4,)), layers.Dense(3, activation="softmax")])
    model.set_weights(weights_for(model, 7))
    return model


def test_per_output_losses_weights_and_metrics_match_keras():
    model = two_in_two_out()
    model.compile(mk.optimizers.SGD(0.1), loss=["mse", "sparse_categorical_crossentropy"], loss_weights=[1.0, 0.5],
                  metrics=[["mae"], ["accuracy"]])
    history = model.fit([XA, XB], [Y1, Y2], epochs=2, batch_size=4, shuffle=False, verbose=0).history
    keras = {"cls_accuracy": [0.25, 0.375], "cls_loss": [1.198039, 1.134804], "loss": [1.51342, 1.325859],
             "score_loss": [0.9144, 0.758457], "score_mae": [0.845302, 0.767921]}
    assert sorted(history) == sorted(keras)
    for name, values in keras.items():
        np.testing.assert_allclose(history[name], values, rtol=1e-4, err_msg=name)
    assert model.metrics_names[:3] == ["loss", "score_loss", "cls_loss"]
    # dicts keyed by output name; the evaluate list is loss, output losses, then metrics by name
    model.compile(mk.optimizers.SGD(0.1), loss={"cls": "sparse_categorical_crossentropy", "score": "mae"},
                  metrics={"score": ["mse"]})
    logs = model.evaluate({"a": XA, "b": XB}, {"score": Y1, "cls": Y2}, verbose=0, return_dict=True)
    keras = {"cls_loss": 1.0968661308288574, "loss": 1.8127641677856445, "score_loss": 0.7158979773521423,
             "score_mse": 0.6849438548088074}
    assert sorted(logs) == sorted(keras)
    for name, value in keras.items():
        np.testing.assert_allclose(logs[name], value, rtol=1e-4, err_msg=name)
    values = model.evaluate([XA, XB], [Y1, Y2], verbose=0)
    np.testing.assert_allclose(values, [keras[k] for k in ("loss", "score_loss", "cls_loss", "score_mse")], rtol=1e-4)
    predictions = model.predict([XA, XB], verbose=0)
    assert [p.shape for p in predictions] == [(8, 1), (8, 3)]


def test_per_output_compile_errors_name_the_outputs():
    model = two_in_two_out()
    model.compile("sgd", loss={"scor": "mse"})
    with pytest.raises(ValueError, match=r"Expected keys \['score', 'cls'\] in loss dict.*'scor'"):
        model.evaluate([XA, XB], [Y1, Y2], verbose=0)
    model.compile("sgd", loss="mse", metrics=["mae"])
    with pytest.raises(ValueError, match="Invalid `metrics`.*2 outputs"):
        model.evaluate([XA, XB], [Y1, Y1], verbose=0)
    model.compile("sgd", loss=["mse"] * 3)
    with pytest.raises(ValueError, match="3 entries.*2 outputs"):
        model.evaluate([XA, XB], [Y1, Y2], verbose=0)


def test_class_weight_matches_keras():
    model = softmax_classifier()
    model.compile(mk.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy")
    history = model.fit(XA, Y2, class_weight={0: 2.0, 2: 0.5}, epochs=2, batch_size=4, shuffle=False, verbose=0)
    np.testing.assert_allclose(history.history["loss"], [0.933317, 0.84868], rtol=1e-4)
    np.testing.assert_allclose(model.get_weights()[1], [0.10818119, -0.37785265, 0.01337978], rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match="class_weight` and `sample_weight"):
        model.fit(XA, Y2, class_weight={0: 2.0}, sample_weight=np.ones(8), verbose=0)
    two = two_in_two_out()
    two.compile("sgd", loss=["mse", "sparse_categorical_crossentropy"])
    with pytest.raises(ValueError, match="only supported for Models with a single output"):
        two.fit([XA, XB], [Y1, Y2], class_weight={0: 1.0}, verbose=0)


class CategoricalTruePositives(mk.metrics.Metric):
    """The custom metric of the Keras guide "Training & evaluation with the built-in methods"."""

    def __init__(self, name="categorical_true_positives", **kwargs):
        super().__init__(name=name, **kwargs)
        self.true_positives = self.add_weight(name="ctp", initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = mk.reshape(mk.argmax(y_pred, axis=1), (-1, 1))
        values = mk.cast(mk.cast(y_true, "int32") == mk.cast(y_pred, "int32"), "float32")
        if sample_weight is not None:
            values = values * mk.cast(sample_weight, "float32")
        self.true_positives.assign_add(mk.reduce_sum(values))

    def result(self):
        return self.true_positives

    def reset_state(self):
        self.true_positives.assign(0.0)


class Recorder(mk.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def on_test_begin(self, logs=None):
        self.calls.append("test_begin")

    def on_test_batch_begin(self, batch, logs=None):
        self.calls.append(f"test_batch_begin{batch}")

    def on_test_batch_end(self, batch, logs=None):
        self.calls.append(f"test_batch_end{batch}")

    def on_test_end(self, logs=None):
        self.calls.append("test_end:" + ",".join(sorted(logs)))

    def on_epoch_end(self, epoch, logs=None):
        self.calls.append(f"epoch_end{epoch}")


def test_custom_metric_in_fit_and_validation_hooks_match_keras():
    model = softmax_classifier()
    model.compile(mk.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy", metrics=[CategoricalTruePositives()])
    history = model.fit(XA, Y2.reshape(-1, 1), epochs=2, batch_size=4, shuffle=False, verbose=0).history
    np.testing.assert_allclose(history["categorical_true_positives"], [4.0, 4.0])
    np.testing.assert_allclose(history["loss"], [0.9787, 0.89552], rtol=1e-4)
    recorder = Recorder()
    model.fit(XA, Y2, epochs=1, batch_size=4, validation_data=(XB[:, :1].repeat(4, 1), Y2),
              validation_batch_size=4, verbose=0, callbacks=[recorder])
    assert recorder.calls == ["test_begin", "test_batch_begin0", "test_batch_end0", "test_batch_begin1",
                              "test_batch_end1", "test_end:categorical_true_positives,loss", "epoch_end0"]


def test_custom_metric_under_function():
    metric = CategoricalTruePositives()
    update = mk.function(lambda y, p: metric.update_state(y, p))
    probs = np.eye(3, dtype="float32")[[0, 1, 2, 2]]
    update(np.array([[0], [1], [0], [2]]), probs)
    update(np.array([[0], [0], [0], [2]]), probs)
    assert float(metric.result()) == 5.0
    metric.reset_state()
    assert float(metric.result()) == 0.0


def test_one_loss_for_all_outputs_with_layer_losses_and_per_output_sample_weights():
    a = mk.Input((4,), name="a")
    h = layers.Dense(5, name="hidden", activity_regularizer=mk.regularizers.L2(0.1))(a)
    model = mk.Model(a, [layers.Dense(1, name="p")(h), layers.Dense(2, name="q")(h)])
    model.set_weights(weights_for(model))
    model.compile("sgd", loss="mse")
    targets = [XA[:, :1], XA[:, :2]]
    logs = model.evaluate(XA, targets, verbose=0, return_dict=True)
    # Keras 3: the activity regularizer's penalty is in `loss`, not in the outputs' losses
    keras = {"loss": 3.285198926925659, "p_loss": 2.061847448348999, "q_loss": 1.1189308166503906}
    for name, value in keras.items():
        np.testing.assert_allclose(logs[name], value, rtol=1e-5, err_msg=name)
    weighted = model.evaluate(XA, targets, sample_weight=[np.arange(8.0), np.ones(8)], verbose=0, return_dict=True)
    keras = {"loss": 7.581151962280273, "p_loss": 6.357800483703613, "q_loss": 1.1189308166503906}
    for name, value in keras.items():
        np.testing.assert_allclose(weighted[name], value, rtol=1e-5, err_msg=name)


class NoTrainingArgument(mk.Model):
    def __init__(self):
        super().__init__()
        self.dense = layers.Dense(2)

    def call(self, x):  # no `training`: Keras passes it only to a call that takes it
        return self.dense(x)


class NoiseMadeInBuild(layers.Layer):
    def build(self, input_shape):  # a random draw in build, reached inside fit's compiled step
        self.noise = mk.Variable(mk.random.normal((input_shape[-1],)), trainable=False)
        self.kernel = self.add_weight(shape=(input_shape[-1], 2))

    def call(self, x):
        return (x + self.noise) @ self.kernel


@pytest.mark.parametrize("make", [NoTrainingArgument, lambda: mk.Sequential([NoiseMadeInBuild()])])
def test_models_users_write_train_with_fit(make):
    model = make()
    model.compile(mk.optimizers.SGD(0.01), "mse")
    history = model.fit(XA, np.zeros((8, 2), "float32"), epochs=2, batch_size=4, verbose=0).history
    assert len(history["loss"]) == 2 and np.isfinite(history["loss"]).all()


def test_one_target_array_for_two_outputs_is_refused_as_keras():
    """Keras 3.15 refuses one target array for a two-output model (keras.io's migration guide's
    multi-output evaluate): a KeyError on the first output's path with one loss, a ValueError
    showing both structures with a list or dict of losses."""
    from minikeras import keras
    inputs = keras.Input((4,))
    hidden = keras.layers.Dense(3)(inputs)
    model = keras.Model(inputs, [keras.layers.Dense(2, name="out_a")(hidden),
                                 keras.layers.Dense(2, name="out_b")(hidden)])
    x, y = np.ones((4, 4), "float32"), np.ones((4, 2), "float32")
    model.compile(optimizer="adam", loss="mse", metrics=["mae", "mae"])
    message = ("The path: (0,) in the `loss` argument, can't be found in either the model's output (`y_pred`) "
               "or in the labels (`y_true`).")
    with pytest.raises(KeyError) as error:
        model.evaluate(x, y, verbose=0)
    assert error.value.args[0] == message
    with pytest.raises(KeyError):
        model.fit(x, y, verbose=0)
    for loss in (["mse", "mae"], {"out_a": "mse", "out_b": "mae"}):
        model.compile(optimizer="adam", loss=loss)
        with pytest.raises(ValueError, match=r"^y_true and y_pred have different structures.\ny_true: \*\n"
                                             r"y_pred: \['\*', '\*'\]\n$"):
            model.evaluate(x, y, verbose=0)
    assert len(model.evaluate(x, [y, y], verbose=0)) == 3


def test_one_target_array_goes_to_the_only_output_with_a_loss_as_keras():
    """keras.io's miniature GPT compiles ``loss=[loss_fn, None]`` and fits one target array;
    Keras 3.15 on JAX trains the first output on it (checked by hand)."""
    from minikeras import keras
    inputs = keras.Input((4,))
    hidden = keras.layers.Dense(3)(inputs)
    model = keras.Model(inputs, [keras.layers.Dense(2, name="out_a")(hidden), hidden])
    x, y = np.ones((4, 4), "float32"), np.zeros((4, 2), "float32")
    model.compile(optimizer="adam", loss=["mse", None])
    expected = float(np.mean(np.square(model.predict(x, verbose=0)[0] - y)))
    assert np.isclose(model.evaluate(x, y, verbose=0, return_dict=True)["loss"], expected, rtol=1e-6)
    model.fit(x, y, verbose=0)


def test_per_output_losses_are_logged_only_where_two_outputs_have_a_loss():
    # Keras 3.15: one loss among two outputs logs 'loss' alone (evaluate returns a number);
    # two losses log each output's '<name>_loss' beside it
    from minikeras import keras
    inputs = keras.Input((3,))
    model = keras.Model(inputs, [keras.layers.Dense(2, name="a")(inputs), keras.layers.Dense(1, name="b")(inputs)])
    x, ya, yb = np.ones((4, 3), "float32"), np.zeros((4, 2), "float32"), np.zeros((4, 1), "float32")
    for loss in (["mse", None], {"a": "mse", "b": None}):
        model.compile("sgd", loss=loss)
        assert sorted(model.evaluate(x, [ya, yb], verbose=0, return_dict=True)) == ["loss"]
        assert np.ndim(model.evaluate(x, [ya, yb], verbose=0)) == 0
    model.compile("sgd", loss=["mse", None], metrics=[["mae"], None])
    assert sorted(model.fit(x, [ya, yb], verbose=0).history) == ["a_mae", "loss"]
    model.compile("sgd", loss="mse")
    assert sorted(model.evaluate(x, [ya, yb], verbose=0, return_dict=True)) == ["a_loss", "b_loss", "loss"]
