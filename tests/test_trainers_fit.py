"""compile / fit / evaluate / predict, train_on_batch, custom train_step, steps_per_execution.

Every model here has the same shapes (4 features -> Dense 8 relu -> Dense 3) so that weight
initialisation compiles once. Each new model, step kind and batch shape costs an XLA
compilation, so the tests share fitted models and use batch sizes that divide the data
(no ragged last batch) except where the ragged batch is the point.
"""
import math

import numpy as np
import pytest

import minikeras as mk
from minikeras.trainers import data_adapter

layers = mk.layers
N, FEATURES, CLASSES = 96, 4, 3


def make_data(n=N, seed=0):
    """A separable 3-class problem: the label is the argmax of a fixed linear map."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, FEATURES)).astype(np.float32)
    w = np.array([[2.0, -1.0, 0.0], [0.0, 2.0, -1.0], [-1.0, 0.0, 2.0], [1.0, 1.0, -2.0]], np.float32)
    return x, np.argmax(x @ w, axis=1).astype(np.int32)


X, Y = make_data()


def make_mlp(softmax=False, weights=None):
    model = mk.Sequential([layers.Dense(8, activation="relu", input_shape=(FEATURES,)),
                           layers.Dense(CLASSES, activation="softmax" if softmax else None)])
    if weights is not None:
        model.set_weights(weights)
    return model


class SubclassedMLP(mk.Model):
    def __init__(self):
        super().__init__()
        self.hidden = layers.Dense(8, activation="relu")
        self.out = layers.Dense(CLASSES)

    def call(self, inputs, training=None):
        return self.out(self.hidden(inputs))


@pytest.fixture(scope="module")
def initial_weights():
    mk.random.set_seed(0)
    return make_mlp().get_weights()


class BatchCounter(mk.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.batches, self.epochs, self.steps_param = [], [], self.params.get("steps")

    def on_train_batch_end(self, batch, logs=None):
        self.batches.append(batch)

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append(epoch)


# -- the standard loop ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fitted(initial_weights):
    """A Sequential compiled with strings, trained to high accuracy with validation_split."""
    model = make_mlp(softmax=True, weights=initial_weights)
    model.compile(optimizer=mk.optimizers.Adam(learning_rate=0.03), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    counter = BatchCounter()
    history = model.fit(X, Y, batch_size=24, epochs=15, validation_split=0.25, verbose=0, callbacks=[counter])
    return model, history, counter


def test_fit_returns_history_with_loss_metrics_and_validation(fitted):
    model, history, _ = fitted
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert all(len(values) == 15 for values in history.history.values())
    assert history.epoch == list(range(15)) and model.history is history
    assert all(isinstance(v, float) for v in history.history["loss"])


def test_loss_decreases_and_the_problem_is_learned(fitted):
    model, history, _ = fitted
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0]
    assert all(b < a for a, b in zip(losses, losses[1:]))
    assert history.history["accuracy"][-1] > 0.9
    assert model.evaluate(X, Y, batch_size=24, verbose=0)[1] > 0.9


def test_validation_split_holds_out_the_last_fraction(fitted):
    model, history, counter = fitted
    assert counter.steps_param == math.ceil(72 / 24)  # trained on the first 72 samples only
    assert len(counter.batches) == 15 * 3
    val_loss, val_accuracy = model.evaluate(X[72:], Y[72:], batch_size=24, verbose=0)
    assert val_loss == pytest.approx(history.history["val_loss"][-1], rel=1e-5)
    assert val_accuracy == pytest.approx(history.history["val_accuracy"][-1], rel=1e-6)


def test_evaluate_returns_a_list_or_a_dict(fitted):
    model, _, _ = fitted
    loss, accuracy = model.evaluate(X, Y, batch_size=24, verbose=0)
    probabilities = model.predict(X, batch_size=24, verbose=0)
    expected_loss = -np.mean(np.log(probabilities[np.arange(N), Y]))
    assert loss == pytest.approx(expected_loss, rel=1e-4)
    assert accuracy == pytest.approx(np.mean(np.argmax(probabilities, 1) == Y))
    logs = model.evaluate(X, Y, batch_size=24, verbose=0, return_dict=True)
    assert logs == {"loss": pytest.approx(loss, rel=1e-5), "accuracy": pytest.approx(accuracy)}
    assert model.metrics_names == ["loss", "accuracy"]
    assert type(model.metrics[1]).__name__ == "SparseCategoricalAccuracy"  # 'accuracy' resolved from the loss


def test_predict_is_batched_numpy(fitted):
    model, _, _ = fitted
    out = model.predict(X, batch_size=24, verbose=0)  # 4 batches
    assert isinstance(out, np.ndarray) and out.shape == (N, CLASSES)
    k1, b1, k2, b2 = model.get_weights()
    logits = np.maximum(X @ k1 + b1, 0) @ k2 + b2
    expected = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.sum(1), 1.0, rtol=1e-5)


def test_fit_on_tensors_and_initial_epoch(fitted):
    model, _, _ = fitted
    counter = BatchCounter()
    history = model.fit(mk.constant(X), mk.constant(Y), batch_size=24, epochs=17, initial_epoch=15, verbose=0,
                        callbacks=[counter])
    assert history.epoch == [15, 16] and counter.epochs == [15, 16]
    assert len(history.history["loss"]) == 2


def test_train_and_test_on_batch(fitted):
    model, _, _ = fitted
    loss, accuracy = model.test_on_batch(X[:24], Y[:24])
    expected = model.evaluate(X[:24], Y[:24], batch_size=24, verbose=0)
    assert [loss, accuracy] == pytest.approx(expected, rel=1e-5)
    before = model.get_weights()
    logs = model.train_on_batch(X[:24], Y[:24], return_dict=True)
    assert set(logs) == {"loss", "accuracy"} and logs["loss"] == pytest.approx(loss, rel=1e-5)
    assert any(not np.array_equal(a, b) for a, b in zip(before, model.get_weights()))


def test_fit_on_a_dataset_with_validation_data_and_objects(initial_weights):
    model = SubclassedMLP()
    model.build((None, FEATURES))
    model.set_weights(initial_weights)
    model.compile(optimizer=mk.optimizers.Adam(learning_rate=0.02),
                  loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=[mk.metrics.SparseCategoricalAccuracy(name="acc")])
    train = mk.data.Dataset.from_tensor_slices((X[:72], Y[:72])).batch(24)
    history = model.fit(train, epochs=6, validation_data=(X[72:], Y[72:]), verbose=0)
    assert set(history.history) == {"loss", "acc", "val_loss", "val_acc"}
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert history.history["val_acc"][-1] > 0.7
    assert model.evaluate(mk.data.Dataset.from_tensor_slices((X[72:], Y[72:])).batch(24), verbose=0) == \
        pytest.approx([history.history["val_loss"][-1], history.history["val_acc"][-1]], rel=1e-5)
    logits = model.predict(mk.data.Dataset.from_tensor_slices(X).batch(24), verbose=0)
    assert logits.shape == (N, CLASSES)
    assert np.mean(np.argmax(logits, 1) == Y) > 0.7


def test_steps_per_epoch_with_a_repeating_dataset(initial_weights):
    model = make_mlp(weights=initial_weights)
    model.compile("sgd", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    counter = BatchCounter()
    ds = mk.data.Dataset.from_tensor_slices((X, Y)).batch(24).repeat()
    history = model.fit(ds, epochs=2, steps_per_epoch=5, verbose=0, callbacks=[counter])
    assert counter.batches == [0, 1, 2, 3, 4] * 2 and len(history.history["loss"]) == 2
    assert isinstance(model.evaluate(X, Y, batch_size=24, verbose=0), float)  # loss only: a scalar
    with pytest.raises(ValueError, match="steps_per_epoch"):
        model.fit(ds, epochs=1, verbose=0)


# -- numbers against references ------------------------------------------------------------------
def numpy_sgd_reference(weights, x, y, lr, batch_size, steps):
    """Plain NumPy forward/backward for the MLP with softmax cross-entropy and SGD."""
    k1, b1, k2, b2 = [w.astype(np.float64) for w in weights]
    losses = []
    for step in range(steps):
        xb, yb = x[step * batch_size:(step + 1) * batch_size], y[step * batch_size:(step + 1) * batch_size]
        h_pre = xb @ k1 + b1
        h = np.maximum(h_pre, 0)
        logits = h @ k2 + b2
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        losses.append(-np.mean(np.log(p[np.arange(len(yb)), yb])))
        d_logits = (p - np.eye(CLASSES)[yb]) / len(yb)
        d_h = d_logits @ k2.T * (h_pre > 0)
        k2, b2 = k2 - lr * h.T @ d_logits, b2 - lr * d_logits.sum(0)
        k1, b1 = k1 - lr * xb.T @ d_h, b1 - lr * d_h.sum(0)
    return [k1, b1, k2, b2], losses


def sgd_model(initial_weights, **compile_kwargs):
    model = make_mlp(weights=initial_weights)
    model.compile(optimizer=mk.optimizers.SGD(learning_rate=0.5),
                  loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True), **compile_kwargs)
    return model


@pytest.fixture(scope="module")
def sgd(initial_weights):
    """One compiled SGD model for several tests (plain SGD has no state besides the weights)."""
    return sgd_model(initial_weights)


def test_compiled_fit_matches_a_numpy_reference(sgd, initial_weights):
    expected_weights, losses = numpy_sgd_reference(initial_weights, X, Y, 0.5, 32, 3)
    model = sgd
    model.set_weights(initial_weights)
    history = model.fit(X, Y, batch_size=32, epochs=1, shuffle=False, verbose=0)
    assert history.history["loss"][0] == pytest.approx(np.mean(losses), rel=1e-4)
    for actual, expected in zip(model.get_weights(), expected_weights):
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5)


class CountingTrainStep(mk.Sequential):
    """Counts Python executions of train_step: once per batch eagerly, once per trace compiled."""

    def train_step(self, data):
        self.python_calls = getattr(self, "python_calls", 0) + 1
        self.saw_concrete = not mk.backend.is_tracer(data[0]._value)
        return super().train_step(data)


def test_jit_compile_false_runs_eagerly_with_the_same_numbers(initial_weights):
    expected_weights, losses = numpy_sgd_reference(initial_weights, X, Y, 0.5, 32, 3)
    model = CountingTrainStep([layers.Dense(8, activation="relu", input_shape=(FEATURES,)), layers.Dense(CLASSES)])
    model.set_weights(initial_weights)
    model.compile(optimizer=mk.optimizers.SGD(learning_rate=0.5),
                  loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=False)
    history = model.fit(X, Y, batch_size=32, epochs=1, shuffle=False, verbose=0)
    assert model.python_calls == 3 and model.saw_concrete
    assert history.history["loss"][0] == pytest.approx(np.mean(losses), rel=1e-4)
    for actual, expected in zip(model.get_weights(), expected_weights):
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5)


def test_steps_per_execution_gives_the_same_weights_as_single_steps(sgd, initial_weights):
    # 3 batches of 32 per epoch, 2 steps per call: one scanned call of 2 batches, then the
    # last batch alone (a shorter group runs step by step)
    sgd.set_weights(initial_weights)
    single_history = sgd.fit(X, Y, batch_size=32, epochs=2, shuffle=False, verbose=0)
    grouped = sgd_model(initial_weights, steps_per_execution=2)
    counter = BatchCounter()
    grouped_history = grouped.fit(X, Y, batch_size=32, epochs=2, shuffle=False, verbose=0, callbacks=[counter])
    for actual, expected in zip(grouped.get_weights(), sgd.get_weights()):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)
    assert grouped_history.history["loss"] == pytest.approx(single_history.history["loss"], rel=1e-5)
    assert counter.batches == [1, 2] * 2  # one callback per execution
    assert int(grouped.optimizer.iterations.numpy()) == 6
    assert grouped._step("train").traced and grouped._step("train").step.program_count == 1


def test_shuffle_permutes_each_epoch_and_off_keeps_the_order():
    x = np.arange(10, dtype=np.float32)[:, None]
    ordered = data_adapter.make_batches(x, x, batch_size=4, shuffle=False)
    rng = np.random.default_rng(0)
    assert [b[0][:, 0].tolist() for b in ordered.epoch(rng)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    shuffled = data_adapter.make_batches(x, x, batch_size=4, shuffle=True)
    epochs = [np.concatenate([b[0][:, 0] for b in shuffled.epoch(rng)]) for _ in range(2)]
    for seen in epochs:
        assert sorted(seen.tolist()) == list(range(10))  # every sample once per epoch
    assert epochs[0].tolist() != list(range(10)) and epochs[0].tolist() != epochs[1].tolist()
    for b in shuffled.epoch(rng):
        np.testing.assert_array_equal(b[0], b[1])  # x and y stay paired


def test_shuffled_fit_is_repeatable_under_a_seed(sgd, initial_weights):
    runs = []
    for _ in range(2):
        mk.random.set_seed(3)
        sgd.set_weights(initial_weights)
        runs.append(sgd.fit(X, Y, batch_size=32, epochs=2, verbose=0).history["loss"])
    assert runs[0] == runs[1]
    sgd.set_weights(initial_weights)
    unshuffled = sgd.fit(X, Y, batch_size=32, epochs=2, shuffle=False, verbose=0)
    assert unshuffled.history["loss"] != runs[0]


# -- customizing what happens in fit ----------------------------------------------------------------
class Keras3Step(mk.Model):
    """Keras 3's custom train_step: self.compute_loss and self.metrics."""

    def __init__(self):
        super().__init__()
        self.hidden = layers.Dense(8, activation="relu")
        self.out = layers.Dense(CLASSES)

    def call(self, inputs, training=None):
        return self.out(self.hidden(inputs))

    def train_step(self, data):
        x, y = data
        with mk.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


class TF2Step(Keras3Step):
    """tf.keras 2's custom train_step: self.compiled_loss and self.compiled_metrics, with its own tracker."""

    def __init__(self):
        super().__init__()
        self.loss_tracker = mk.metrics.Mean(name="loss")

    def train_step(self, data):
        x, y = data
        with mk.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        self.compiled_metrics.update_state(y, y_pred)
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result(), **{m.name: m.result() for m in self.compiled_metrics.metrics}}

    @property
    def metrics(self):
        return [self.loss_tracker] + self.compiled_metrics.metrics


@pytest.mark.parametrize("cls", [Keras3Step, TF2Step])
def test_custom_train_step_with_gradient_tape(cls, initial_weights):
    model = cls()
    model.build((None, FEATURES))
    model.set_weights(initial_weights)
    assert len(model.weights) == 4  # a tracker metric's state is not a weight
    model.compile(optimizer=mk.optimizers.Adam(0.02),
                  loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    history = model.fit(X, Y, batch_size=32, epochs=8, verbose=0)
    assert set(history.history) == {"loss", "accuracy"}
    assert history.history["loss"][-1] < 0.7 * history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.8
    # the metrics were reset each epoch: the last epoch's loss is that epoch's mean, below the first's
    loss, accuracy = model.evaluate(X, Y, verbose=0)
    assert accuracy > 0.8 and loss < history.history["loss"][0]


def test_categorical_labels_resolve_accuracy_to_categorical_accuracy(initial_weights):
    model = make_mlp(softmax=True, weights=initial_weights)
    model.compile("adam", "categorical_crossentropy", metrics=["accuracy", "mae"])
    one_hot = np.eye(CLASSES, dtype=np.float32)[Y]
    logs = model.train_on_batch(X[:32], one_hot[:32], return_dict=True)
    assert set(logs) == {"loss", "accuracy", "mae"}
    assert [type(m).__name__ for m in model.metrics[1:]] == ["CategoricalAccuracy", "MeanAbsoluteError"]


def test_fit_needs_compile_and_rejects_bad_arguments(initial_weights):
    model = make_mlp(weights=initial_weights)
    with pytest.raises(RuntimeError, match="compile"):
        model.fit(X, Y, verbose=0)
    with pytest.raises(ValueError, match="Unknown loss: 'mse_typo'"):
        model.compile("adam", "mse_typo")
    with pytest.raises(ValueError, match="steps_per_execution"):
        model.compile("adam", "mse", steps_per_execution=0)
    model.compile("adam", "mse")
    with pytest.raises(ValueError, match="batch_size"):
        model.fit(X, Y, batch_size=0, verbose=0)
    with pytest.raises(ValueError, match="validation_split"):
        model.fit(X, Y, validation_split=1.5, verbose=0)
    with pytest.raises(ValueError, match="batch the Dataset"):
        model.fit(mk.data.Dataset.from_tensor_slices((X, Y)).batch(8), batch_size=8, verbose=0)


def test_fit_on_a_dataset_of_unknown_length_runs_each_epoch_to_its_end():
    x = np.linspace(-1, 1, 40, dtype=np.float32).reshape(20, 2)
    y = (x.sum(1) > 0).astype(np.float32)
    known = mk.data.Dataset.from_tensor_slices((x, y)).batch(4)
    unknown = mk.data.Dataset.from_tensor_slices((x, y)).filter(lambda a, b: b >= 0).batch(4)
    assert int(unknown.cardinality()) == mk.data.UNKNOWN_CARDINALITY
    histories, weights = [], []
    for ds in (known, unknown):
        mk.random.set_seed(0)
        model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
        model.compile(optimizer=mk.optimizers.SGD(0.1), loss="mse")
        histories.append(model.fit(ds, epochs=2, verbose=0).history["loss"])
        weights.append(model.get_weights())
    np.testing.assert_allclose(histories[1], histories[0], rtol=1e-6)
    for a, b in zip(weights[1], weights[0]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    with pytest.raises(ValueError, match="infinite.*steps_per_epoch"):
        model.fit(known.repeat(), epochs=1, verbose=0)


def test_metrics_ignore_sample_weights_and_weighted_metrics_use_them_as_keras_3():
    # Keras 3.15 on this data: {'loss': 0.25, 'mae': 1.5, 'weighted_mae': 0.5}
    x = np.array([[0.0], [1.0], [2.0], [3.0]], np.float32)
    y = np.zeros((4, 1), np.float32)
    sample_weight = np.array([1.0, 1.0, 0.0, 0.0], np.float32)
    model = mk.Sequential([mk.Input((1,)), mk.layers.Dense(1, kernel_initializer="ones", bias_initializer="zeros")])
    model.compile("sgd", "mse", metrics=["mae"], weighted_metrics=["mae"])
    logs = model.evaluate(x, y, sample_weight=sample_weight, return_dict=True, verbose=0)
    assert logs == pytest.approx({"loss": 0.25, "mae": 1.5, "weighted_mae": 0.5})
    model.compile("sgd", "mse", weighted_metrics=["mae"])  # alone: logged under its own name, as Keras
    assert model.evaluate(x, y, sample_weight=sample_weight, return_dict=True, verbose=0) == pytest.approx(
        {"loss": 0.25, "mae": 0.5})
