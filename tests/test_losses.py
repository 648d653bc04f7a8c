"""Losses: per-sample values against NumPy formulas (Keras 3's), reductions, sample weights,
label smoothing, stability from logits, ignore_class, shape errors that name the loss, look-up."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_close, check_grad

import minikeras as mk
from minikeras import losses

EPS = 1e-7
RNG = np.random.default_rng(0)
Y_TRUE = RNG.normal(size=(4, 3)).astype(np.float32)
Y_PRED = RNG.normal(size=(4, 3)).astype(np.float32)
LOGITS = (RNG.normal(size=(4, 5)) * 3).astype(np.float32)
LABELS = np.array([0, 3, 4, 1], np.int32)
ONE_HOT = np.eye(5, dtype=np.float32)[LABELS]
BINARY = RNG.integers(0, 2, size=(4, 3)).astype(np.float32)


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_huber(t, p, delta):
    e = np.abs(p - t)
    return np.mean(np.where(e <= delta, 0.5 * e ** 2, delta * e - 0.5 * delta ** 2), -1)


def np_bce(t, p):
    p = np.clip(p, EPS, 1 - EPS)
    return -np.mean(t * np.log(p) + (1 - t) * np.log(1 - p), -1)


def np_cce(t, p):
    p = np.clip(p / p.sum(-1, keepdims=True), EPS, 1 - EPS)
    return -np.sum(t * np.log(p), -1)


PROBS = _softmax(LOGITS.astype(np.float64))
SIG = _sigmoid(Y_PRED.astype(np.float64))

CASES = [
    ("mse", lambda: losses.mean_squared_error(Y_TRUE, Y_PRED), np.mean((Y_TRUE - Y_PRED) ** 2, -1)),
    ("mae", lambda: losses.mae(Y_TRUE, Y_PRED), np.mean(np.abs(Y_TRUE - Y_PRED), -1)),
    ("mape", lambda: losses.mean_absolute_percentage_error(Y_TRUE, Y_PRED),
     100 * np.mean(np.abs((Y_TRUE - Y_PRED) / np.maximum(np.abs(Y_TRUE), EPS)), -1)),
    ("huber", lambda: losses.huber(Y_TRUE, Y_PRED), np_huber(Y_TRUE, Y_PRED, 1.0)),
    ("huber_delta", lambda: losses.huber(Y_TRUE, Y_PRED, delta=0.3), np_huber(Y_TRUE, Y_PRED, 0.3)),
    ("kld", lambda: losses.kl_divergence(ONE_HOT * 0.9 + 0.02, PROBS),
     np.sum((ONE_HOT * 0.9 + 0.02) * np.log((ONE_HOT * 0.9 + 0.02) / np.clip(PROBS, EPS, 1)), -1)),
    ("bce", lambda: losses.binary_crossentropy(BINARY, SIG.astype(np.float32)), np_bce(BINARY, SIG)),
    ("bce_logits", lambda: losses.binary_crossentropy(BINARY, Y_PRED, from_logits=True), np_bce(BINARY, SIG)),
    ("cce", lambda: losses.categorical_crossentropy(ONE_HOT, PROBS.astype(np.float32)), np_cce(ONE_HOT, PROBS)),
    ("cce_logits", lambda: losses.categorical_crossentropy(ONE_HOT, LOGITS, from_logits=True),
     -np.log(PROBS[np.arange(4), LABELS])),
    ("scce", lambda: losses.sparse_categorical_crossentropy(LABELS, PROBS.astype(np.float32)),
     -np.log(PROBS[np.arange(4), LABELS])),
    ("scce_logits", lambda: losses.sparse_categorical_crossentropy(LABELS[:, None], LOGITS, from_logits=True),
     -np.log(PROBS[np.arange(4), LABELS])),
]


@pytest.mark.parametrize("name,compute,expected", CASES, ids=[c[0] for c in CASES])
def test_per_sample_values_match_formulas(name, compute, expected):
    out = compute()
    assert out.shape == (4,) and out.dtype == np.float32
    assert_close(out, expected, rtol=1e-5, atol=1e-5, what=name)


def test_keras_documented_examples():
    y_pred = [[0.05, 0.95, 0.0], [0.1, 0.8, 0.1]]
    assert_close(losses.sparse_categorical_crossentropy([1, 2], y_pred), [0.0513, 2.303], rtol=1e-3, atol=1e-4)
    assert_close(losses.categorical_crossentropy([[0, 1, 0], [0, 0, 1]], y_pred), [0.0513, 2.303], rtol=1e-3,
                 atol=1e-4)
    assert_close(losses.binary_crossentropy([[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]]), [0.916, 0.714],
                 rtol=1e-3, atol=1e-4)


def test_reductions_and_sample_weight():
    per_sample = np.mean((Y_TRUE - Y_PRED) ** 2, -1)
    weights = np.array([1.0, 0.0, 2.0, 0.5], np.float32)
    mse = losses.MeanSquaredError
    assert_close(mse()(Y_TRUE, Y_PRED), per_sample.mean(), rtol=1e-6)
    assert_close(mse(reduction="sum")(Y_TRUE, Y_PRED), per_sample.sum(), rtol=1e-6)
    assert_close(mse(reduction="none")(Y_TRUE, Y_PRED), per_sample, rtol=1e-6)
    assert_close(mse(reduction=None)(Y_TRUE, Y_PRED), per_sample, rtol=1e-6)
    # sum_over_batch_size divides the weighted sum by the number of samples, not by sum(weights)
    assert_close(mse()(Y_TRUE, Y_PRED, sample_weight=weights), (per_sample * weights).sum() / 4, rtol=1e-6)
    assert_close(mse()(Y_TRUE, Y_PRED, sample_weight=weights[:, None]), (per_sample * weights).sum() / 4, rtol=1e-6)
    assert_close(mse(reduction="sum")(Y_TRUE, Y_PRED, sample_weight=2.0), 2 * per_sample.sum(), rtol=1e-6)
    assert_close(mse(reduction="mean_with_sample_weight")(Y_TRUE, Y_PRED, sample_weight=weights),
                 (per_sample * weights).sum() / weights.sum(), rtol=1e-6)
    assert_close(mse(reduction="none")(Y_TRUE, Y_PRED, sample_weight=weights), per_sample * weights, rtol=1e-6)
    with pytest.raises(ValueError, match="reduction"):
        mse(reduction="average")
    with pytest.raises(ValueError, match="sample_weight of shape"):
        mse()(Y_TRUE, Y_PRED, sample_weight=np.ones(3, np.float32))


def test_sample_weight_per_sample_on_per_timestep_losses():
    y_true, y_pred = np.zeros((2, 3, 4), np.float32), np.ones((2, 3, 4), np.float32)
    out = losses.MeanAbsoluteError(reduction="sum")(y_true, y_pred, sample_weight=np.array([1.0, 3.0], np.float32))
    assert_close(out, 3 * 1.0 + 3 * 3.0, rtol=1e-6)


def test_label_shapes_are_lined_up_like_keras():
    # (batch,) labels against (batch, 1) predictions: compared sample by sample, not broadcast to (batch, batch)
    y_true = np.array([0.0, 1.0, 1.0], np.float32)
    p = np.array([[0.2], [0.7], [0.9]], np.float32)
    assert_close(losses.BinaryCrossentropy(reduction="none")(y_true, p), np_bce(y_true[:, None], p), rtol=1e-5)
    assert_close(losses.MeanSquaredError()(y_true, p), np.mean((y_true - p[:, 0]) ** 2), rtol=1e-6)


def test_label_smoothing():
    s = 0.2
    assert_close(losses.BinaryCrossentropy(label_smoothing=s, reduction="none")(BINARY, SIG.astype(np.float32)),
                 np_bce(BINARY * (1 - s) + 0.5 * s, SIG), rtol=1e-5)
    assert_close(losses.CategoricalCrossentropy(from_logits=True, label_smoothing=s, reduction="none")(ONE_HOT, LOGITS),
                 np_cce(ONE_HOT * (1 - s) + s / 5, PROBS), rtol=1e-5)


def test_stable_from_logits_at_plus_minus_1e4():
    big = np.zeros((4, 5), np.float32)  # the shape of the other tests' logits, so compiled kernels are shared
    big[:, 0], big[:, 1] = 1e4, -1e4
    logits = mk.constant(big)
    labels = np.array([1, 0, 1, 0], np.int32)  # half the rows put all mass on the wrong class
    one_hot = np.eye(5, dtype=np.float32)[labels]
    cases = [
        (losses.SparseCategoricalCrossentropy(from_logits=True), labels, 2e4 / 2),
        (losses.CategoricalCrossentropy(from_logits=True), one_hot, 2e4 / 2),
        # per row: 1e4 twice where the labels are wrong (x=1e4, t=0 and x=-1e4, t=1), log 2 at each x=0
        (losses.BinaryCrossentropy(from_logits=True), one_hot, (2 * 2e4 + 4 * 3 * np.log(2)) / 20),
    ]
    for loss_fn, labels, expected in cases:
        with mk.GradientTape() as tape:
            tape.watch(logits)
            value = loss_fn(labels, logits)
        grad = tape.gradient(value, logits).numpy()
        assert np.isfinite(value.numpy()) and np.all(np.isfinite(grad)), loss_fn.name
        assert value.numpy() == pytest.approx(expected, rel=1e-6), loss_fn.name
    # probabilities are clipped to [1e-7, 1 - 1e-7]: log(0) never happens
    assert losses.binary_crossentropy([[1.0]], [[0.0]]).numpy()[0] == pytest.approx(-np.log(EPS), rel=1e-4)


def _jax_ce(logits, one_hot):
    return -jnp.sum(one_hot * jax.nn.log_softmax(logits), -1)


def test_crossentropy_gradients_match_jax():
    check_grad(lambda x, t: losses.categorical_crossentropy(t, x, from_logits=True), _jax_ce, LOGITS, ONE_HOT,
               wrt=[0], order=1)
    check_grad(lambda x: losses.binary_crossentropy(ONE_HOT, x, from_logits=True),
               lambda x: jnp.mean(-ONE_HOT * jax.nn.log_sigmoid(x) - (1 - ONE_HOT) * jax.nn.log_sigmoid(-x), -1),
               LOGITS, order=1)


def test_ignore_class_averages_over_valid_entries():
    labels = np.array([0, -1, 4, -1], np.int32)
    loss_fn = losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1)
    probs = PROBS.astype(np.float32)
    expected = -(np.log(PROBS[0, 0]) + np.log(PROBS[2, 4])) / 2
    logits = mk.constant(LOGITS)
    with mk.GradientTape() as tape:
        tape.watch(logits)
        value = loss_fn(labels, logits)
    assert_close(value, expected, rtol=1e-5)
    grad = tape.gradient(value, logits).numpy()
    assert np.all(grad[[1, 3]] == 0) and np.all(np.isfinite(grad))
    per_sample = losses.sparse_categorical_crossentropy(labels, probs, ignore_class=-1)
    assert_close(per_sample, [-np.log(PROBS[0, 0]), 0.0, -np.log(PROBS[2, 4]), 0.0], rtol=1e-5)
    assert_close(losses.SparseCategoricalCrossentropy(ignore_class=-1, reduction="sum")(labels, probs),
                 -(np.log(PROBS[0, 0]) + np.log(PROBS[2, 4])), rtol=1e-5)


def test_wrong_label_shapes_name_the_loss_and_both_shapes():
    with pytest.raises(ValueError, match=r"sparse_categorical_crossentropy.*\(4, 5\).*\(4, 5\).*categorical_cross"):
        losses.SparseCategoricalCrossentropy(from_logits=True)(ONE_HOT, LOGITS)
    with pytest.raises(ValueError, match=r"categorical_crossentropy.*y_true.shape=\(4,\).*\(4, 5\).*sparse"):
        losses.CategoricalCrossentropy()(LABELS, LOGITS)
    with pytest.raises(ValueError, match=r"binary_crossentropy.*\(4, 2\).*\(4, 3\)"):
        losses.binary_crossentropy(np.zeros((4, 2)), Y_PRED)
    with pytest.raises(ValueError, match=r"mean_squared_error.*\(4, 2\).*\(4, 3\)"):
        losses.MeanSquaredError()(np.zeros((4, 2)), Y_PRED)
    with pytest.raises(ValueError, match=r"label value of 7 at position 1 of labels .* \[0, 5\) \(y_pred has 5"):
        losses.sparse_categorical_crossentropy([0, 7, 1, 1], LOGITS)


def test_losses_compile_under_mk_function():
    loss_fn = losses.SparseCategoricalCrossentropy(from_logits=True)
    step = mk.function(lambda y, x: loss_fn(y, x))
    assert_close(step(mk.constant(LABELS), mk.constant(LOGITS)), -np.log(PROBS[np.arange(4), LABELS]).mean(),
                 rtol=1e-5)


def test_get_serialize_and_config():
    assert losses.get("mse") is losses.mean_squared_error
    assert losses.get("MSE") is losses.mean_squared_error
    assert losses.get("sparse_categorical_crossentropy") is losses.sparse_categorical_crossentropy
    assert losses.get("categorical_crossentropy") is losses.categorical_crossentropy
    assert losses.get("binary_crossentropy") is losses.binary_crossentropy
    assert isinstance(losses.get("SparseCategoricalCrossentropy"), losses.SparseCategoricalCrossentropy)
    loss = losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)
    assert losses.get(loss) is loss
    assert losses.get(None) is None
    config = loss.get_config()
    assert config == {"name": "categorical_crossentropy", "reduction": "sum_over_batch_size", "from_logits": True,
                      "label_smoothing": 0.1, "axis": -1}
    clone = losses.deserialize(losses.serialize(loss))
    assert isinstance(clone, losses.CategoricalCrossentropy) and clone.get_config() == config
    assert losses.Huber.from_config(losses.Huber(delta=0.5).get_config()).delta == 0.5
    assert losses.serialize(losses.LossFunctionWrapper(losses.mse)) == "mean_squared_error"  # compile(loss='mse')
    wrapped = losses.deserialize(losses.serialize(losses.LossFunctionWrapper(losses.mse, name="my_mse")))
    assert wrapped.fn is losses.mean_squared_error and wrapped.name == "my_mse"
    assert losses.SparseCategoricalCrossentropy(ignore_class=3).get_config()["ignore_class"] == 3
    with pytest.raises(ValueError, match="Unknown loss: 'msee'.*mean_squared_error"):
        losses.get("msee")


def test_sparse_losses_and_metrics_take_float_class_ids():
    # Keras 3 (JAX backend) and tf.keras accept float class ids; values from keras 3 on the same arrays
    y = np.array([0.0, 2.0], np.float32)
    p = np.array([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]], np.float32)
    np.testing.assert_allclose(mk.losses.sparse_categorical_crossentropy(y, p), [2.3025851, 0.9162907], rtol=1e-5)
    np.testing.assert_allclose(mk.losses.SparseCategoricalCrossentropy()(y[:, None], p), 1.609438, rtol=1e-5)
    np.testing.assert_array_equal(mk.metrics.sparse_categorical_accuracy(y, p), [0.0, 1.0])
    np.testing.assert_array_equal(mk.metrics.sparse_top_k_categorical_accuracy(y, p, k=2), [0.0, 1.0])
