"""``keras.wrappers``: Keras 3's scikit-learn estimators over a compiled Keras model,
``SKLearnClassifier``, ``SKLearnRegressor`` and ``SKLearnTransformer``.

    from minikeras import keras
    est = keras.wrappers.SKLearnRegressor(model=make_model, model_kwargs={"loss": "mse"},
                                          fit_kwargs={"epochs": 5, "verbose": 0})
    est.fit(X, y).predict(X)

scikit-learn is an optional dependency (``pip install "minikeras[sklearn]"``): this module
imports without it, and scikit-learn is imported when a class is first looked up here, with an
ImportError naming the extra when it is missing.
"""

_NAMES = ("SKLearnClassifier", "SKLearnRegressor", "SKLearnTransformer")


def __getattr__(name):
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise ImportError(f"keras.wrappers.{name} wraps a scikit-learn estimator and needs scikit-learn: "
                          'pip install "minikeras[sklearn]" (or pip install scikit-learn)') from None
    from minikeras.keras.wrappers import sklearn_estimators
    return getattr(sklearn_estimators, name)


def __dir__():
    return sorted(list(globals()) + list(_NAMES))
