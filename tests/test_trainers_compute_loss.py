"""Keras 3's compute_loss / compute_metrics overrides honoured by fit and evaluate (the
keras.io examples' patterns; the expected logs are Keras 3.15's for the same code)."""
import numpy as np

from minikeras import keras

RNG = np.random.default_rng(0)
X = RNG.normal(size=(16, 3)).astype("float32")
Y = RNG.normal(size=(16, 2)).astype("float32")


class OwnTracker(keras.Model):
    """compute_loss without `training` (Keras < 3.3's signature), its own tracker as `metrics`."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = keras.layers.Dense(2)
        self.loss_tracker = keras.metrics.Mean(name="my_loss")

    def call(self, x):
        return self.dense(x)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
        loss = keras.losses.MeanSquaredError()(y, y_pred)
        self.loss_tracker.update_state(loss)
        return loss

    @property
    def metrics(self):
        return [self.loss_tracker]


def test_an_override_without_training_and_its_own_tracker():
    model = OwnTracker()
    model.compile("sgd")
    history = model.fit(X, Y, epochs=2, batch_size=8, verbose=0)
    assert sorted(history.history) == ["my_loss"]
    logs = model.evaluate(X, Y, verbose=0, return_dict=True)
    assert sorted(logs) == ["my_loss"]
    expected = np.mean((model.predict(X, verbose=0) - Y) ** 2)
    np.testing.assert_allclose(logs["my_loss"], expected, rtol=1e-5)  # reset before evaluate, as Keras


class ExtraMetric(keras.Model):
    """compute_metrics with Keras 3's four arguments, calling super()."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = keras.layers.Dense(2)
        self.extra = keras.metrics.MeanAbsoluteError(name="extra_mae")

    def call(self, x):
        return self.dense(x)

    def compute_metrics(self, x, y, y_pred, sample_weight):
        self.extra.update_state(y, y_pred)
        return super().compute_metrics(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight)


def test_a_compute_metrics_override_and_a_metric_held_by_an_attribute():
    model = ExtraMetric()
    model.compile("sgd", loss="mse", metrics=["mae"])
    history = model.fit(X, Y, epochs=1, batch_size=8, verbose=0)
    assert sorted(history.history) == ["extra_mae", "loss", "mae"]
    logs = model.evaluate(X, Y, verbose=0, return_dict=True)
    assert sorted(logs) == ["extra_mae", "loss", "mae"]
    np.testing.assert_allclose(logs["extra_mae"], logs["mae"], rtol=1e-5)  # both reset before evaluate


class Doubled(keras.Model):
    """compute_loss with `training`, calling super()."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = keras.layers.Dense(2)
        self.seen = []

    def call(self, x):
        return self.dense(x)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        self.seen.append(training)
        return super().compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight) * 2.0


def test_an_override_with_training_calling_super():
    model = Doubled()
    model.compile("sgd", loss="mse")
    model.fit(X, Y, epochs=1, batch_size=16, verbose=0)
    loss = model.evaluate(X, Y, verbose=0)
    assert model.seen == [True, False]  # traced once each
    np.testing.assert_allclose(loss, 2 * np.mean((model.predict(X, verbose=0) - Y) ** 2), rtol=1e-5)
    assert set(model.get_metrics_result()) == {"loss"}
