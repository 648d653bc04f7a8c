"""Keras 3's scikit-learn wrappers (``keras.wrappers``): a compiled model, or a function that
builds one from the data, fitted and called as a scikit-learn estimator.

Imported by ``keras.wrappers`` once scikit-learn is known to be installed.
"""
import copy
import os
import tempfile

import numpy as np
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, TransformerMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from minikeras.callbacks import History
from minikeras.keras.wrappers.target_reshaper import TargetReshaper
from minikeras.models import Model, clone_model
from minikeras.saving import load_model


def _target_type(y):
    kind = type_of_target(y)
    if kind == "unknown":
        raise ValueError(f"Unknown label type for data: {y!r}")
    return kind


def _check_compiled(model):
    if not getattr(model, "compiled", False) or not model.loss or not model.optimizer:
        raise RuntimeError("Given model needs to be compiled, and have a loss and an optimizer.")


def _model_to_bytes(model):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.keras")
        model.save(path)
        with open(path, "rb") as f:
            return f.read()


def _model_from_bytes(data):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.keras")
        with open(path, "wb") as f:
            f.write(data)
        return load_model(path, safe_mode=False)


class SKLBase(BaseEstimator):
    """The shared base of Keras 3's scikit-learn wrappers.

    Args:
      model: a compiled ``Model`` (cloned with ``keras.models.clone_model`` before each fit, unless
        ``warm_start``), or a callable ``model(X=X, y=y, **model_kwargs)`` returning a compiled model
        (the classifier's ``y`` is one-hot encoded by then).
      warm_start: whether a second ``fit`` goes on training the model the first one fitted.
      model_kwargs: keyword arguments for ``model`` when it is a callable.
      fit_kwargs: keyword arguments for ``model.fit`` (``epochs``, ``batch_size``, ``verbose``...);
        those given to ``fit`` itself take precedence.

    Attributes (after ``fit``): ``model_`` the fitted model, ``history_`` its ``History``,
    ``n_features_in_`` (and ``feature_names_in_`` for a DataFrame), as scikit-learn sets them.
    A fitted estimator pickles (its model as ``.keras`` file bytes).
    """

    def __init__(self, model, warm_start=False, model_kwargs=None, fit_kwargs=None):
        self.model = model
        self.warm_start = warm_start
        self.model_kwargs = model_kwargs
        self.fit_kwargs = fit_kwargs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        return tags

    def __sklearn_clone__(self):
        """``sklearn.base.clone``: the same arguments, a copy of a model instance (a deep copy, or
        ``clone_model``'s compiled copy of a trained one), unfitted."""
        model = self.model
        if isinstance(model, Model):
            try:
                model = copy.deepcopy(model)
            except TypeError:  # a trained model holds compiled steps, which do not copy: a clone of it does
                model = clone_model(model)
        return type(self)(model=model, warm_start=self.warm_start, model_kwargs=self.model_kwargs,
                          fit_kwargs=self.fit_kwargs)

    @property
    def epoch_(self):
        """How many epochs the fitted model was trained for (0 before ``fit``)."""
        history = getattr(self, "history_", None)
        return len(history.epoch) if history is not None else 0

    def _get_model(self, X, y):
        if self.warm_start and hasattr(self, "model_"):
            return self.model_
        if isinstance(self.model, Model):
            return clone_model(self.model)
        if not callable(self.model):
            raise TypeError(f"{type(self).__name__}: `model` must be a compiled keras Model or a callable returning "
                            f"one, received {self.model!r}")
        return self.model(X=X, y=y, **(self.model_kwargs or {}))

    def fit(self, X, y, **kwargs):
        """Fits the model on ``X`` (n_samples, n_features) and ``y`` (n_samples,) or
        (n_samples, n_outputs); ``kwargs`` go to ``model.fit``. Returns self."""
        X, y = validate_data(self, X, y, reset=not (self.warm_start and hasattr(self, "model_")))
        y = self._process_target(y, reset=True)
        model = self._get_model(X, y)
        _check_compiled(model)
        self.history_ = model.fit(X, y, **{**(self.fit_kwargs or {}), **kwargs})
        self.model_ = model
        return self

    def predict(self, X):
        """The model's predictions for ``X``, in the targets' shape (the classes for a classifier)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self._reverse_process_target(self.model_.predict(X, verbose=0))

    def _process_target(self, y, reset=False):
        """Regressors keep their targets (a 1-D y as one column)."""
        _target_type(y)
        if reset:
            self._target_encoder = TargetReshaper().fit(y)
        return self._target_encoder.transform(y)

    def _reverse_process_target(self, y):
        return self._target_encoder.inverse_transform(y)

    def __getstate__(self):
        state = dict(self.__dict__)
        if "model_" in state:
            state["model_"] = _model_to_bytes(state["model_"])
        if "history_" in state:  # its records without the model it points to
            history = History()
            history.history, history.epoch = state["history_"].history, state["history_"].epoch
            history.params = state["history_"].params
            state["history_"] = history
        if isinstance(state.get("model"), Model):
            state["model"] = _model_to_bytes(state["model"])
        return state

    def __setstate__(self, state):
        for key in ("model_", "model"):
            if isinstance(state.get(key), bytes):
                state[key] = _model_from_bytes(state[key])
        self.__dict__.update(state)
        if "history_" in state and "model_" in state:
            self.history_.set_model(self.model_)


class SKLearnClassifier(ClassifierMixin, SKLBase):
    """A scikit-learn classifier over a Keras model, as Keras 3's ``keras.wrappers.SKLearnClassifier``.

    Binary and multiclass targets only: ``y`` is one-hot encoded for the model (so a model
    callable sees ``y`` of shape (n_samples, n_classes)), ``predict`` returns the class of the
    largest output, ``decision_function`` the model's raw outputs; ``classes_`` holds the classes.
    Arguments as ``SKLBase``'s.

    >>> def make_model(X, y, loss):
    ...     inputs = keras.Input((X.shape[1],))
    ...     model = keras.Model(inputs, keras.layers.Dense(y.shape[1], activation="softmax")(inputs))
    ...     model.compile(loss=loss, optimizer="rmsprop")
    ...     return model
    >>> est = SKLearnClassifier(make_model, model_kwargs={"loss": "categorical_crossentropy"})
    """

    def decision_function(self, X):
        """The model's raw outputs for ``X``."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.model_.predict(X, verbose=0)

    def _process_target(self, y, reset=False):
        target_type = _target_type(y)
        if target_type not in ("binary", "multiclass"):
            raise ValueError(f"Only binary and multiclass target types are supported. Target type: {target_type}")
        if reset:
            self._target_encoder = sklearn.pipeline.make_pipeline(
                TargetReshaper(), sklearn.preprocessing.OneHotEncoder(sparse_output=False)).fit(y)
            self.classes_ = np.unique(y)
            if len(self.classes_) == 1:
                raise ValueError("Classifier can't train when only one class is present.")
        return self._target_encoder.transform(y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        return tags


class SKLearnRegressor(RegressorMixin, SKLBase):
    """A scikit-learn regressor over a Keras model, as Keras 3's ``keras.wrappers.SKLearnRegressor``:
    ``predict`` returns the model's outputs in ``y``'s shape, ``score`` the R². Arguments as
    ``SKLBase``'s."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags


class SKLearnTransformer(TransformerMixin, SKLBase):
    """A scikit-learn transformer over a Keras model (``transform`` returns the model's outputs,
    an embedding say), as Keras 3's ``keras.wrappers.SKLearnTransformer``. Arguments as
    ``SKLBase``'s."""

    def transform(self, X):
        """The model's outputs for ``X``."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.model_.predict(X, verbose=0)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = []
        return tags

