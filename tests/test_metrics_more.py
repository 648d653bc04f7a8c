"""The metrics that are running means of a loss function (hinge family, MAPE, MSLE, log-cosh, KL
divergence, Poisson, cosine similarity), the correlation metrics and the one-hot IoU metrics
against Keras 3.15 on JAX: results after an unweighted and a weighted batch, and configs. The
expected values were made by ``fixtures/keras_metrics_more/make_fixtures.py``."""
import json
import os

import numpy as np
import pytest

import minikeras as mk
from minikeras import keras

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_metrics_more")
DATA = np.load(os.path.join(HERE, "metrics.npz"))
with open(os.path.join(HERE, "configs.json")) as f:
    CONFIGS = json.load(f)

CASES = {  # as make_fixtures.py's CASES
    "hinge": ("Hinge", {}), "squared_hinge": ("SquaredHinge", {}), "categorical_hinge": ("CategoricalHinge", {}),
    "mape": ("MeanAbsolutePercentageError", {}), "msle": ("MeanSquaredLogarithmicError", {}),
    "logcosh": ("LogCoshError", {}), "kld": ("KLDivergence", {}), "poisson": ("Poisson", {}),
    "cosine": ("CosineSimilarity", {}), "pearson": ("PearsonCorrelation", {}),
    "concordance": ("ConcordanceCorrelation", {}),
    "onehot_iou": ("OneHotIoU", {"num_classes": 4, "target_class_ids": [0, 2]}),
    "onehot_mean_iou": ("OneHotMeanIoU", {"num_classes": 4}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_metric_matches_keras(name):
    cls, kwargs = CASES[name]
    metric = getattr(keras.metrics, cls)(**kwargs)
    for step in range(2):
        y_true, y_pred = DATA[f"{name}/{step}/y_true"], DATA[f"{name}/{step}/y_pred"]
        weights = np.linspace(0.5, 2.0, len(y_true)).astype("float32") if step else None
        metric.update_state(y_true, y_pred, sample_weight=weights)
        np.testing.assert_allclose(np.asarray(metric.result()), DATA[f"{name}/{step}/result"], rtol=2e-5, atol=1e-6)
    assert metric.get_config() == CONFIGS[name]
    again = mk.metrics.deserialize(mk.metrics.serialize(metric))
    assert type(again) is type(metric) and again.get_config() == metric.get_config()


@pytest.mark.parametrize("fn", ["pearson_correlation", "concordance_correlation", "hinge", "log_cosh", "poisson"])
def test_metric_functions_match_keras(fn):
    y_true, y_pred = DATA[f"fn/{fn}/y_true"], DATA[f"fn/{fn}/y_pred"]
    np.testing.assert_allclose(np.asarray(getattr(keras.metrics, fn)(y_true, y_pred)), DATA[f"fn/{fn}/values"],
                               rtol=2e-5, atol=1e-6)


def test_metrics_by_name_in_compile_and_fit():
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse", metrics=["hinge", "msle", "logcosh", mk.metrics.PearsonCorrelation()])
    history = model.fit(np.ones((8, 3), "float32"), np.ones((8, 2), "float32"), epochs=1, verbose=0)
    assert {"hinge", "msle", "logcosh", "pearson_correlation"} <= set(history.history)
    assert isinstance(mk.metrics.get("kld"), mk.metrics.KLDivergence)
    with pytest.raises(ValueError, match="Unknown metric class 'NoSuchMetric'"):
        mk.metrics.deserialize({"class_name": "NoSuchMetric", "config": {}})
