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
from sklearn.model_selection import cross_val_score  # noqa: E402
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


class _NamedModel:
    """``dynamic_model`` with a repr without its address: parametrize_with_checks makes test ids
    from the estimators' reprs, and pytest-xdist's workers must collect the same ids."""

    def __call__(self, *args, **kwargs):
        return dynamic_model(*args, **kwargs)

    def __repr__(self):
        return "dynamic_model"


@parametrize_with_checks(
    [SKLearnClassifier(model=_NamedModel(), model_kwargs={"loss": "categorical_crossentropy", "layers": [20, 20, 20]},
                       fit_kwargs={"epochs": 5, "verbose": 0}),
     SKLearnRegressor(model=_NamedModel(), model_kwargs={"loss": "mse"}, fit_kwargs={"verbose": 0}),
     SKLearnTransformer(model=_NamedModel(), model_kwargs={"loss": "mse"}, fit_kwargs={"verbose": 0})],
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


# ----------------------------------------------------------------------------- beyond Keras's tests


def small_classifier(X, y, loss="categorical_crossentropy"):
    inputs = keras.Input((X.shape[1],))
    model = keras.Model(inputs, keras.layers.Dense(y.shape[1], activation="softmax")(inputs))
    model.compile(loss=loss, optimizer="rmsprop")
    return model


@pytest.fixture(scope="module")
def data():
    return make_classification(n_samples=20, n_features=4, n_informative=2, n_classes=2, random_state=0)


def test_errors_as_keras(data):
    X, y = data
    inputs = keras.Input((4,))
    uncompiled = keras.Model(inputs, keras.layers.Dense(2)(inputs))
    with pytest.raises(RuntimeError, match="Given model needs to be compiled, and have a loss and an optimizer."):
        SKLearnRegressor(uncompiled).fit(X, y)
    with pytest.raises(ValueError, match="Classifier can't train when only one class is present."):
        SKLearnClassifier(small_classifier).fit(X, np.zeros(20))
    with pytest.raises(ValueError, match="Only binary and multiclass target types are supported. Target type: "
                                         "continuous"):
        SKLearnClassifier(small_classifier).fit(X, np.linspace(0, 1, 20))
    with pytest.raises(sklearn.exceptions.NotFittedError, match="This SKLearnClassifier instance is not fitted yet"):
        SKLearnClassifier(small_classifier).predict(X)
    with pytest.raises(TypeError, match="SKLearnRegressor: `model` must be a compiled keras Model or a callable "
                                        "returning one, received 3"):
        SKLearnRegressor(3).fit(X, y)


def test_string_classes_fit_kwargs_clone_and_pickle(data):
    X, y = data
    labels = np.array(["a", "b"])[y]
    fit_kwargs = {"epochs": 2, "verbose": 0}
    est = SKLearnClassifier(small_classifier, fit_kwargs=fit_kwargs).fit(X, labels, epochs=3)
    assert fit_kwargs == {"epochs": 2, "verbose": 0}  # the fit call's epochs win, the stored ones are kept
    assert est.epoch_ == 3 and est.history_.epoch == [0, 1, 2]
    assert list(est.classes_) == ["a", "b"]
    probabilities = est.decision_function(X)
    assert probabilities.shape == (20, 2)
    np.testing.assert_array_equal(est.predict(X), est.classes_[probabilities.argmax(axis=1)])
    assert est.score(X, labels) == np.mean(est.predict(X) == labels)
    restored = pickle.loads(pickle.dumps(est))
    np.testing.assert_allclose(restored.decision_function(X), probabilities, rtol=1e-6)
    assert restored.epoch_ == 3
    clone = sklearn.base.clone(est)
    assert clone.fit_kwargs == fit_kwargs and not hasattr(clone, "model_")


def test_model_instance_is_cloned_unless_warm_start(data):
    X, y = data
    model = small_classifier(X, np.eye(2)[y])
    est = SKLearnClassifier(model, fit_kwargs={"verbose": 0}).fit(X, y)
    assert est.model_ is not model
    warm = SKLearnClassifier(model, warm_start=True, fit_kwargs={"verbose": 0}).fit(X, y)
    first = warm.model_
    weights = [w.numpy() for w in first.weights]
    warm.fit(X, y)
    assert warm.model_ is first  # trained on from where the first fit stopped
    assert any(not np.array_equal(a, w.numpy()) for a, w in zip(weights, first.weights))
    model.fit(X, np.eye(2)[y], verbose=0)  # a trained model holds compiled steps: cloning copies it all the same
    scores = cross_val_score(SKLearnClassifier(model, fit_kwargs={"verbose": 0}), X, y, cv=2)
    assert scores.shape == (2,) and np.all((scores >= 0) & (scores <= 1))


def test_regressor_and_transformer_in_a_pipeline():
    X, y = make_regression(n_samples=32, n_features=3, noise=0.1, random_state=0)

    def linear(X, y, units=1):
        inputs = keras.Input((X.shape[1],))
        model = keras.Model(inputs, keras.layers.Dense(units)(inputs))
        model.compile(loss="mse", optimizer=keras.optimizers.Adam(0.1))
        return model

    reg = SKLearnRegressor(linear, fit_kwargs={"epochs": 60, "verbose": 0, "batch_size": 32})
    pipe = sklearn.pipeline.make_pipeline(sklearn.preprocessing.StandardScaler(), reg).fit(X, y / y.std())
    assert pipe.predict(X).shape == (32,)
    assert pipe.score(X, y / y.std()) > 0.9  # a linear target: R² near 1 once fitted
    embed = SKLearnTransformer(linear, model_kwargs={"units": 2}, fit_kwargs={"verbose": 0})
    assert embed.fit_transform(X, y).shape == (32, 2)


def test_missing_scikit_learn_names_the_extra(monkeypatch):
    import sys

    from minikeras.keras import wrappers
    monkeypatch.setitem(sys.modules, "sklearn", None)
    with pytest.raises(ImportError, match=r'keras.wrappers.SKLearnClassifier .* pip install "minikeras\[sklearn\]"'):
        wrappers.__getattr__("SKLearnClassifier")
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        wrappers.Nope
