"""mk.metrics: every metric against a NumPy formula, weights, reset, eager and compiled."""
import numpy as np
import pytest

import minikeras as mk
from minikeras import metrics

RNG = np.random.default_rng(0)
Y_PROBS = RNG.uniform(0.0, 1.0, (12, 4)).astype(np.float32)
LABELS = RNG.integers(0, 4, 12)
ONE_HOT = np.eye(4, dtype=np.float32)[LABELS]
WEIGHTS = RNG.uniform(0.0, 2.0, 12).astype(np.float32)


def close(actual, expected, tol=1e-5):
    np.testing.assert_allclose(np.asarray(actual, np.float64), expected, rtol=tol, atol=tol)


def weighted_mean(values, weights=None):
    values = np.asarray(values, np.float64)
    if weights is None:
        return values.mean()
    return (values * weights).sum() / np.sum(weights)


# -- reduction metrics ---------------------------------------------------------------------
def test_mean_and_sum_with_and_without_weights():
    m = metrics.Mean()
    m.update_state([1.0, 3.0, 5.0, 7.0])
    close(m.result(), 4.0)
    m.update_state(10.0)  # a scalar counts as one sample
    close(m.result(), 26.0 / 5)
    m.reset_state()
    close(m.result(), 0.0)  # no samples: 0, not NaN (divide_no_nan)
    m.update_state([1, 3, 5, 7], sample_weight=[1, 1, 0, 0])
    close(m.result(), 2.0)
    s = metrics.Sum()
    s.update_state([1, 3, 5, 7], sample_weight=[1, 1, 0, 0])
    close(s.result(), 4.0)
    assert [v.name for v in m.variables] == ["total", "count"]
    assert all(not v.trainable for v in m.variables) and m.trainable_variables == []


def test_mean_reduces_rank_2_values_per_sample_and_weights():
    values = RNG.standard_normal((6, 3)).astype(np.float32)
    w = WEIGHTS[:6]
    m = metrics.Mean()
    m.update_state(values, sample_weight=w)
    close(m.result(), weighted_mean(values.mean(axis=1), w))
    m.reset_state()
    w2 = np.abs(RNG.standard_normal((6, 3))).astype(np.float32)  # elementwise weights
    m.update_state(values, sample_weight=w2)
    close(m.result(), (values * w2).mean(axis=1).sum() / w2.mean(axis=1).sum())
    m.reset_state()
    m.update_state(3.0, sample_weight=2)  # the scalar fast path
    m.update_state(6.0, sample_weight=1)
    close(m.result(), 12.0 / 3)


def test_call_accumulates_and_reset_states_alias():
    m = metrics.Mean(name="train_loss")
    close(m(2.0), 2.0)
    close(m(4.0), 3.0)
    assert m.name == "train_loss"
    m.reset_states()
    close(m.result(), 0.0)
    assert f"{m.result():.2f}" == "0.00"  # tutorials format results in f-strings


# -- accuracies ----------------------------------------------------------------------------
@pytest.mark.parametrize("labels", [LABELS, LABELS[:, None], LABELS.astype(np.float32)],
                         ids=["shape_n", "shape_n1", "float_labels"])
def test_sparse_categorical_accuracy(labels):
    expected = (np.argmax(Y_PROBS, -1) == LABELS).astype(np.float64)
    m = metrics.SparseCategoricalAccuracy()
    m.update_state(labels, Y_PROBS)
    close(m.result(), expected.mean())
    m.reset_state()
    m.update_state(labels, Y_PROBS, sample_weight=WEIGHTS)
    close(m.result(), weighted_mean(expected, WEIGHTS))
    per_sample = metrics.sparse_categorical_accuracy(labels, Y_PROBS)
    assert per_sample.shape == (12,)
    close(per_sample, expected)


def test_keras_docstring_examples():
    m = metrics.SparseCategoricalAccuracy()
    m.update_state([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]], sample_weight=[0.7, 0.3])
    close(m.result(), 0.3)
    m = metrics.CategoricalAccuracy()
    m.update_state([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]], sample_weight=[0.7, 0.3])
    close(m.result(), 0.3)
    m = metrics.BinaryAccuracy()
    m.update_state([[1], [1], [0], [0]], [[0.98], [1], [0], [0.6]])
    close(m.result(), 0.75)
    m = metrics.Accuracy()
    m.update_state([[1], [2], [3], [4]], [[0], [2], [3], [4]], sample_weight=[1, 1, 0, 0])
    close(m.result(), 0.5)
    m = metrics.SparseTopKCategoricalAccuracy(k=1)
    m.update_state([2, 1], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]], sample_weight=[0.7, 0.3])
    close(m.result(), 0.3)


def test_categorical_accuracy():
    expected = (np.argmax(Y_PROBS, -1) == LABELS).astype(np.float64)
    m = metrics.CategoricalAccuracy()
    m.update_state(ONE_HOT, Y_PROBS, sample_weight=WEIGHTS)
    close(m.result(), weighted_mean(expected, WEIGHTS))


@pytest.mark.parametrize("shape", [(12,), (12, 1)])
def test_binary_accuracy_threshold(shape):
    y_true = (RNG.uniform(size=12) > 0.5).astype(np.float32)
    y_pred = RNG.uniform(size=12).astype(np.float32)
    for threshold in (0.5, 0.7):
        m = metrics.BinaryAccuracy(threshold=threshold)
        m.update_state(y_true.reshape(shape), y_pred[:, None])
        close(m.result(), ((y_pred > threshold) == y_true).mean())
    with pytest.raises(ValueError, match="threshold"):
        metrics.BinaryAccuracy(threshold=1.5)


def test_top_k_accuracies():
    rank = (Y_PROBS > Y_PROBS[np.arange(12), LABELS][:, None]).sum(-1) + 1
    for k in (1, 2, 3):
        expected = (rank <= k).astype(np.float64)
        m = metrics.SparseTopKCategoricalAccuracy(k=k)
        m.update_state(LABELS, Y_PROBS)
        close(m.result(), expected.mean())
        m = metrics.TopKCategoricalAccuracy(k=k)
        m.update_state(ONE_HOT, Y_PROBS, sample_weight=WEIGHTS)
        close(m.result(), weighted_mean(expected, WEIGHTS))
    tied = np.array([[0.5, 0.5, 0.1]], np.float32)  # ties count as in the top k, like tf.math.in_top_k
    close(metrics.sparse_top_k_categorical_accuracy([1], tied, k=1), [1.0])
    assert metrics.TopKCategoricalAccuracy().k == 5


# -- errors and cross-entropies ------------------------------------------------------------
def test_mean_squared_and_absolute_error():
    y_true = RNG.standard_normal((12, 3)).astype(np.float32)
    y_pred = RNG.standard_normal((12, 3)).astype(np.float32)
    for cls, per_sample in ((metrics.MeanSquaredError, ((y_true - y_pred) ** 2).mean(-1)),
                            (metrics.MeanAbsoluteError, np.abs(y_true - y_pred).mean(-1))):
        m = cls()
        m.update_state(y_true[:5], y_pred[:5])
        m.update_state(y_true[5:], y_pred[5:])
        close(m.result(), per_sample.mean())
        m.reset_state()
        m.update_state(y_true, y_pred, sample_weight=WEIGHTS)
        close(m.result(), weighted_mean(per_sample, WEIGHTS))
    m = metrics.RootMeanSquaredError()
    m.update_state(y_true, y_pred)
    close(m.result(), np.sqrt(((y_true - y_pred) ** 2).mean()))
    # labels of shape (n,) against predictions (n, 1)
    m = metrics.MeanSquaredError()
    m.update_state(y_true[:, 0], y_pred[:, :1])
    close(m.result(), ((y_true[:, 0] - y_pred[:, 0]) ** 2).mean())


def test_crossentropies():
    eps = 1e-7
    probs = Y_PROBS / Y_PROBS.sum(-1, keepdims=True)
    expected = -np.log(np.clip(probs[np.arange(12), LABELS], eps, 1 - eps))
    m = metrics.SparseCategoricalCrossentropy()
    m.update_state(LABELS, Y_PROBS)
    close(m.result(), expected.mean(), 1e-4)
    m = metrics.CategoricalCrossentropy()
    m.update_state(ONE_HOT, Y_PROBS)
    close(m.result(), expected.mean(), 1e-4)
    logits = np.log(Y_PROBS)
    m = metrics.SparseCategoricalCrossentropy(from_logits=True)
    m.update_state(LABELS, logits)
    close(m.result(), expected.mean(), 1e-4)
    y = (RNG.uniform(size=(12, 1)) > 0.5).astype(np.float32)
    p = RNG.uniform(0.05, 0.95, (12, 1)).astype(np.float32)
    m = metrics.BinaryCrossentropy()
    m.update_state(y, p)
    close(m.result(), np.mean(-(y * np.log(p) + (1 - y) * np.log(1 - p))), 1e-4)


# -- state inside mk.function --------------------------------------------------------------
def test_update_state_inside_mk_function_advances_state():
    acc = metrics.SparseCategoricalAccuracy()
    loss = metrics.Mean()

    @mk.function
    def step(labels, probs, value):
        acc.update_state(labels, probs)
        loss.update_state(value)
        return acc.result()

    expected = (np.argmax(Y_PROBS, -1) == LABELS).astype(np.float64)
    out1 = step(mk.constant(LABELS[:6]), mk.constant(Y_PROBS[:6]), mk.constant(1.0))
    close(out1, expected[:6].mean())
    step(mk.constant(LABELS[6:]), mk.constant(Y_PROBS[6:]), mk.constant(3.0))
    close(acc.result(), expected.mean())
    close(acc.count.numpy(), 12.0)
    close(loss.result(), 2.0)
    assert step.tracing_count == 1
    acc.reset_state()

    @mk.function
    def reset():
        acc.reset_state()

    step(mk.constant(LABELS[:6]), mk.constant(Y_PROBS[:6]), mk.constant(1.0))
    reset()
    close(acc.count.numpy(), 0.0)


# -- lookup --------------------------------------------------------------------------------
def test_get():
    assert isinstance(metrics.get("mse"), metrics.MeanSquaredError)
    assert isinstance(metrics.get("mae"), metrics.MeanAbsoluteError)
    assert isinstance(metrics.get("sparse_categorical_accuracy"), metrics.SparseCategoricalAccuracy)
    assert isinstance(metrics.get("SparseCategoricalAccuracy"), metrics.SparseCategoricalAccuracy)
    assert isinstance(metrics.get(metrics.BinaryAccuracy), metrics.BinaryAccuracy)
    instance = metrics.Mean()
    assert metrics.get(instance) is instance
    assert metrics.get(None) is None

    def my_error(y_true, y_pred):
        return mk.abs(y_true - y_pred)

    wrapped = metrics.get(my_error)
    assert isinstance(wrapped, metrics.MeanMetricWrapper) and wrapped.name == "my_error"
    wrapped.update_state(np.array([1.0, 2.0]), np.array([2.0, 4.0]))
    close(wrapped.result(), 1.5)
    with pytest.raises(ValueError, match="Unknown metric 'accuracyy'.*sparse_categorical_accuracy"):
        metrics.get("accuracyy")
    with pytest.raises(ValueError, match="Could not interpret"):
        metrics.get(3)


class SparseCategoricalCrossentropy:  # a loss object: resolution looks only at its class name
    from_logits = True


def sparse_categorical_crossentropy(y_true, y_pred):  # a loss function, named as Keras's
    return y_pred


@pytest.mark.parametrize("loss, expected", [
    ("sparse_categorical_crossentropy", metrics.SparseCategoricalAccuracy),
    ("categorical_crossentropy", metrics.CategoricalAccuracy),
    ("binary_crossentropy", metrics.BinaryAccuracy),
    ("SparseCategoricalCrossentropy", metrics.SparseCategoricalAccuracy),
    (SparseCategoricalCrossentropy(), metrics.SparseCategoricalAccuracy),
    (sparse_categorical_crossentropy, metrics.SparseCategoricalAccuracy),
])
def test_resolve_accuracy_from_loss(loss, expected):
    # the shapes would say 'categorical': the loss wins
    metric = metrics.resolve("accuracy", loss, (None, 10), (None, 10))
    assert type(metric) is expected and metric.name == "accuracy"
    assert metrics.resolve("acc", loss).name == "acc"


@pytest.mark.parametrize("y_true, y_pred, expected", [
    ((None,), (None, 10), metrics.SparseCategoricalAccuracy),
    ((None, 1), (None, 10), metrics.SparseCategoricalAccuracy),
    ((None, 10), (None, 10), metrics.CategoricalAccuracy),
    ((None, 1), (None, 1), metrics.BinaryAccuracy),
    ((None,), (None, 1), metrics.BinaryAccuracy),
])
def test_resolve_accuracy_from_shapes(y_true, y_pred, expected):
    metric = metrics.resolve("accuracy", "mse", y_true, y_pred)
    assert type(metric) is expected and metric.name == "accuracy"


def test_resolve_names_and_crossentropy():
    assert metrics.resolve("mse").name == "mse"
    assert metrics.resolve("mean_squared_error").name == "mean_squared_error"
    assert metrics.resolve(metrics.SparseCategoricalAccuracy(name="acc2")).name == "acc2"
    ce = metrics.resolve("crossentropy", SparseCategoricalCrossentropy())
    assert isinstance(ce, metrics.SparseCategoricalCrossentropy) and ce.name == "crossentropy"
    assert ce.get_config()["from_logits"] is True
    assert isinstance(metrics.resolve("ce", None, (None, 1), (None, 1)), metrics.BinaryCrossentropy)
    with pytest.raises(ValueError, match="sparse_categorical_accuracy"):
        metrics.resolve("accuracy")


def test_config_round_trip():
    m = metrics.TopKCategoricalAccuracy(k=3, name="top3")
    config = m.get_config()
    assert config == {"name": "top3", "dtype": "float32", "k": 3}
    clone = metrics.TopKCategoricalAccuracy.from_config(config)
    assert clone.k == 3 and clone.name == "top3"
    assert metrics.BinaryAccuracy(threshold=0.7).get_config()["threshold"] == 0.7
    assert metrics.Mean().get_config() == {"name": "mean", "dtype": "float32"}
