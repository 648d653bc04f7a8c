"""keras.config.set_epsilon: the losses, metrics, ops, constraints and layers that use Keras's
fuzz factor read it when called, with the values Keras 3.15 (on JAX) gives for epsilon 1e-3 and
for the default 1e-7 (tests/fixtures/keras_epsilon, made by its make_epsilon.py); compiled
metric updates and keras.ops programs follow a change, a traced mk.function keeps its epsilon."""
import os

import numpy as np
import pytest

import minikeras as mk
from minikeras import keras

FIXTURE = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "keras_epsilon", "epsilon.npz"))
INPUTS = {k[len("input_"):]: FIXTURE[k] for k in FIXTURE.files if k.startswith("input_")}


@pytest.fixture
def restore_epsilon():
    yield
    keras.config.set_epsilon(1e-7)


def _losses_and_ops(i):
    return {
        "binary_crossentropy": keras.losses.binary_crossentropy(i["binary_true"], i["binary_pred"]),
        "categorical_crossentropy": keras.losses.categorical_crossentropy(i["one_hot"], i["probs"]),
        "sparse_categorical_crossentropy": keras.losses.sparse_categorical_crossentropy(i["labels"], i["probs"]),
        "binary_focal_crossentropy": keras.losses.binary_focal_crossentropy(i["binary_true"], i["binary_pred"]),
        "mean_absolute_percentage_error": keras.losses.mean_absolute_percentage_error(i["regression_true"],
                                                                                    i["regression_pred"]),
        "mean_squared_logarithmic_error": keras.losses.mean_squared_logarithmic_error(i["regression_true"],
                                                                                    i["regression_pred"]),
        "kl_divergence": keras.losses.kl_divergence(i["regression_true"], i["regression_pred"]),
        "poisson": keras.losses.poisson(i["regression_true"], i["regression_pred"]),
        "cosine_similarity": keras.losses.cosine_similarity(i["small_vectors"], i["small_vectors"][::-1]),
        "dice": keras.losses.dice(i["mask_true"], i["mask_pred"]),
        "tversky": keras.losses.tversky(i["mask_true"], i["mask_pred"]),
        "op_normalize": keras.ops.normalize(i["small_vectors"]),
        "op_binary_crossentropy": keras.ops.binary_crossentropy(i["binary_true"], i["binary_pred"]),
        "op_categorical_crossentropy": keras.ops.categorical_crossentropy(i["one_hot"], i["probs"]),
        "op_sparse_categorical_crossentropy": keras.ops.sparse_categorical_crossentropy(i["labels"], i["probs"]),
        "constraint_unit_norm": keras.constraints.UnitNorm(axis=0)(mk.Variable(i["constraint_kernel"])),
    }


def _metrics_and_layer(i):
    metrics = {
        "metric_binary_crossentropy": (keras.metrics.BinaryCrossentropy(), i["binary_true"], i["binary_pred"]),
        "metric_categorical_crossentropy": (keras.metrics.CategoricalCrossentropy(), i["one_hot"], i["probs"]),
        "metric_sparse_categorical_crossentropy": (keras.metrics.SparseCategoricalCrossentropy(), i["labels"],
                                                   i["probs"]),
        "metric_f1_score": (keras.metrics.F1Score(average="weighted"), i["f1_true"], i["f1_pred"]),
        "metric_concordance_correlation": (keras.metrics.ConcordanceCorrelation(), i["corr_true"], i["corr_pred"]),
        "metric_mean_iou": (keras.metrics.MeanIoU(num_classes=3), i["iou_true"], i["iou_pred"]),
    }
    out = {}
    for name, (metric, y_true, y_pred) in metrics.items():
        metric.update_state(y_true, y_pred)
        out[name] = metric.result()
    layer = keras.layers.Normalization(axis=-1)
    layer.adapt(i["norm_data"])
    out["layer_normalization"] = layer(i["norm_data"])
    return out


def _check(computed, prefix):
    wrong = []
    for name, value in computed.items():
        expected = FIXTURE[f"{prefix}_{name}"]
        if not np.allclose(np.asarray(value), expected, rtol=2e-5, atol=1e-6):
            wrong.append(f"{name}: {np.asarray(value)} != Keras's {expected}")
    assert not wrong, "\n".join(wrong)


def test_set_epsilon_is_read_by_losses_and_ops_as_keras(restore_epsilon):
    _check(_losses_and_ops(INPUTS), "default")
    keras.config.set_epsilon(1e-3)
    assert keras.config.epsilon() == keras.backend.epsilon() == mk.backend.epsilon() == 1e-3
    _check(_losses_and_ops(INPUTS), "eps1e-3")
    keras.backend.set_epsilon(1e-7)  # back to the default: the programs kept for 1e-3 are not reused
    _check(_losses_and_ops(INPUTS), "default")


def test_set_epsilon_is_read_by_metrics_and_layers_as_keras(restore_epsilon):
    _check(_metrics_and_layer(INPUTS), "default")
    keras.config.set_epsilon(1e-3)
    _check(_metrics_and_layer(INPUTS), "eps1e-3")
    keras.config.set_epsilon(1e-7)
    _check(_metrics_and_layer(INPUTS), "default")


def test_a_traced_function_keeps_the_epsilon_it_was_traced_with(restore_epsilon):
    y_true, y_pred = INPUTS["binary_true"], INPUTS["binary_pred"]
    loss = mk.function(lambda t, p: keras.losses.binary_crossentropy(t, p))
    np.testing.assert_allclose(loss(y_true, y_pred), FIXTURE["default_binary_crossentropy"], rtol=2e-5)
    keras.config.set_epsilon(1e-3)
    np.testing.assert_allclose(loss(y_true, y_pred), FIXTURE["default_binary_crossentropy"], rtol=2e-5)
    retraced = mk.function(lambda t, p: keras.losses.binary_crossentropy(t, p))
    np.testing.assert_allclose(retraced(y_true, y_pred), FIXTURE["eps1e-3_binary_crossentropy"], rtol=2e-5)


def test_set_epsilon_refuses_what_is_not_a_number(restore_epsilon):
    for bad in ("1e-3", None, True, [1e-3]):
        with pytest.raises(TypeError, match="set_epsilon expects a real number"):
            keras.config.set_epsilon(bad)
    assert keras.config.epsilon() == 1e-7
    keras.config.set_epsilon(np.float32(0.5))
    assert keras.config.epsilon() == 0.5 and isinstance(keras.config.epsilon(), float)
