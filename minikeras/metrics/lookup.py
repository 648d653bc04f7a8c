"""Turning what users write in ``compile(metrics=[...])`` into Metric objects.

``get`` is ``keras.metrics.get``; ``resolve`` is what ``compile`` uses, and adds the
choice of the right accuracy (or cross-entropy) for the string 'accuracy' / 'acc'
('crossentropy' / 'ce'), and the Keras rule that a metric given as a string is logged
under that string.
"""
import inspect

from minikeras.metrics import base as _base
from minikeras.metrics.accuracy import (
    Accuracy,
    BinaryAccuracy,
    CategoricalAccuracy,
    SparseCategoricalAccuracy,
    SparseTopKCategoricalAccuracy,
    TopKCategoricalAccuracy,
)
from minikeras.metrics.auc import AUC
from minikeras.metrics.confusion import (
    FalseNegatives,
    FalsePositives,
    Precision,
    PrecisionAtRecall,
    Recall,
    RecallAtPrecision,
    SensitivityAtSpecificity,
    SpecificityAtSensitivity,
    TrueNegatives,
    TruePositives,
)
from minikeras.metrics.correlation import ConcordanceCorrelation, PearsonCorrelation
from minikeras.metrics.f_score import F1Score, FBetaScore
from minikeras.metrics.iou import BinaryIoU, IoU, MeanIoU, OneHotIoU, OneHotMeanIoU
from minikeras.metrics.loss_means import (
    CategoricalHinge,
    CosineSimilarity,
    Hinge,
    KLDivergence,
    LogCoshError,
    MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError,
    Poisson,
    SquaredHinge,
)
from minikeras.metrics.r2 import R2Score
from minikeras.metrics.regression import (
    BinaryCrossentropy,
    CategoricalCrossentropy,
    MeanAbsoluteError,
    MeanSquaredError,
    RootMeanSquaredError,
    SparseCategoricalCrossentropy,
)
from minikeras.module import snake_case

_CLASSES = [
    _base.Mean, _base.Sum, Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy,
    TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy, MeanSquaredError, MeanAbsoluteError,
    RootMeanSquaredError, BinaryCrossentropy, CategoricalCrossentropy, SparseCategoricalCrossentropy,
    TruePositives, FalsePositives, TrueNegatives, FalseNegatives, Precision, Recall, AUC, PrecisionAtRecall,
    RecallAtPrecision, SensitivityAtSpecificity, SpecificityAtSensitivity, F1Score, FBetaScore, IoU, BinaryIoU,
    MeanIoU, R2Score, OneHotIoU, OneHotMeanIoU, Hinge, SquaredHinge, CategoricalHinge, MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError, LogCoshError, KLDivergence, Poisson, CosineSimilarity, PearsonCorrelation,
    ConcordanceCorrelation,
]
_REGISTRY = {cls.__name__: cls for cls in _CLASSES}
_REGISTRY.update({snake_case(cls.__name__): cls for cls in _CLASSES})
_REGISTRY.update({
    "bce": BinaryCrossentropy, "BCE": BinaryCrossentropy,
    "mse": MeanSquaredError, "MSE": MeanSquaredError,
    "mae": MeanAbsoluteError, "MAE": MeanAbsoluteError,
    "mape": MeanAbsolutePercentageError, "MAPE": MeanAbsolutePercentageError,
    "msle": MeanSquaredLogarithmicError, "MSLE": MeanSquaredLogarithmicError,
    "kld": KLDivergence, "KLD": KLDivergence, "logcosh": LogCoshError,
})

_ACCURACY_NAMES = ("accuracy", "acc")
_CROSSENTROPY_NAMES = ("crossentropy", "ce")
_BY_KIND = {
    "binary": (BinaryAccuracy, BinaryCrossentropy),
    "sparse": (SparseCategoricalAccuracy, SparseCategoricalCrossentropy),
    "categorical": (CategoricalAccuracy, CategoricalCrossentropy),
}


def get(identifier):
    """Returns a Metric for ``identifier``: a name ('mse', 'SparseCategoricalAccuracy',
    'sparse_categorical_accuracy', ...), a Metric class (instantiated with defaults), a
    Metric instance (returned as is) or a function ``fn(y_true, y_pred)`` (wrapped in a
    ``MeanMetricWrapper`` named after it). ``None`` gives ``None``.

    Note that ``get('accuracy')`` is ``Accuracy()`` (exact equality); ``compile`` instead
    resolves 'accuracy' to the accuracy matching the loss (see ``resolve``).
    """
    if identifier is None:
        return None
    if isinstance(identifier, str):
        cls = _REGISTRY.get(identifier)
        if cls is None:
            raise ValueError(f"Unknown metric '{identifier}'. Known names are: "
                             f"{sorted(n for n in set(_REGISTRY) | set(_ACCURACY_NAMES) if n.islower())} (or their "
                             "CamelCase class names); or pass a Metric or a function "
                             "fn(y_true, y_pred)")
        return cls()
    if isinstance(identifier, _base.Metric):
        return identifier
    if inspect.isclass(identifier) and issubclass(identifier, _base.Metric):
        return identifier()
    if callable(identifier):
        return _base.MeanMetricWrapper(identifier)
    raise ValueError(f"Could not interpret metric identifier: {identifier!r} (expected a name, a Metric or a "
                     "function fn(y_true, y_pred))")


def serialize(metric):
    """A Metric as ``{'module', 'class_name', 'config', 'registered_name'}`` (``keras.metrics.serialize``)."""
    if not isinstance(metric, _base.Metric):
        raise ValueError(f"keras.metrics.serialize expects a Metric, received {metric!r}")
    return {"module": "keras.metrics", "class_name": type(metric).__name__, "config": metric.get_config(),
            "registered_name": None}


def deserialize(config, custom_objects=None):
    """A Metric from ``serialize``'s output or a name (``keras.metrics.deserialize``)."""
    if isinstance(config, str):
        return get(config)
    name = config.get("class_name")
    cls = (custom_objects or {}).get(name) or _REGISTRY.get(name)
    if cls is None:
        raise ValueError(f"Unknown metric class {name!r}. Known classes: {sorted(c.__name__ for c in _CLASSES)}")
    return cls.from_config(dict(config.get("config") or {}))


def _loss_name(loss):
    """The snake_case name behind a loss given as a string, an object or a function."""
    if isinstance(loss, str):
        return snake_case(loss) if any(c.isupper() for c in loss) else loss.lower()
    fn = getattr(loss, "fn", None)  # a LossFunctionWrapper names its function
    for candidate in (loss, fn):
        if candidate is None:
            continue
        if inspect.isfunction(candidate) or inspect.isbuiltin(candidate):
            return snake_case(candidate.__name__)
    cls = loss if inspect.isclass(loss) else type(loss)
    name = snake_case(cls.__name__)
    if fn is not None and name == "loss_function_wrapper":
        return snake_case(getattr(fn, "__name__", name))
    return name


def kind_from_loss(loss):
    """'sparse', 'categorical' or 'binary' when ``loss`` is a known cross-entropy, else None."""
    if loss is None or isinstance(loss, (list, tuple, dict)):
        return None
    name = _loss_name(loss)
    if name in ("bce",):
        return "binary"
    if name.startswith("sparse_categorical_") and name.endswith("crossentropy"):
        return "sparse"
    if name.startswith("categorical_") and name.endswith("crossentropy"):
        return "categorical"
    if name.startswith("binary_") and name.endswith("crossentropy"):
        return "binary"
    return None


def kind_from_shapes(y_true_shape, y_pred_shape):
    """Keras 3's rule: last prediction dim 1 -> 'binary'; labels of lower rank, or with last
    dim 1 against several classes -> 'sparse'; else 'categorical'."""
    if y_true_shape is None or y_pred_shape is None:
        raise ValueError("Cannot choose the accuracy for 'accuracy': the loss is not a known cross-entropy and the "
                         "shapes of the labels and predictions are unknown. Name the metric explicitly, e.g. "
                         "'sparse_categorical_accuracy', 'categorical_accuracy' or 'binary_accuracy'.")
    y_true_shape, y_pred_shape = tuple(y_true_shape), tuple(y_pred_shape)
    true_last = y_true_shape[-1] if y_true_shape else None
    pred_last = y_pred_shape[-1] if y_pred_shape else None
    if pred_last == 1:
        return "binary"
    several_classes = pred_last is None or pred_last > 1
    if len(y_true_shape) < len(y_pred_shape) or (true_last == 1 and several_classes):
        return "sparse"
    return "categorical"


def resolve(identifier, loss=None, y_true_shape=None, y_pred_shape=None):
    """The Metric that ``compile(metrics=[identifier])`` uses, named as Keras logs it.

    'accuracy' / 'acc' (any case) become BinaryAccuracy, SparseCategoricalAccuracy or
    CategoricalAccuracy, and 'crossentropy' / 'ce' the matching cross-entropy metric:
    chosen from the loss when it is a known cross-entropy (a string such as
    'sparse_categorical_crossentropy', a loss object such as SparseCategoricalCrossentropy,
    or a loss function), otherwise from the shapes of the labels and predictions. A metric
    given as a string is logged under that string (``metrics=['acc']`` logs 'acc').

    >>> resolve('accuracy', loss='sparse_categorical_crossentropy').name
    'accuracy'
    """
    if identifier is None:
        return None
    if isinstance(identifier, str) and identifier.lower() in _ACCURACY_NAMES + _CROSSENTROPY_NAMES:
        kind = kind_from_loss(loss) or kind_from_shapes(y_true_shape, y_pred_shape)
        accuracy_cls, crossentropy_cls = _BY_KIND[kind]
        if identifier.lower() in _ACCURACY_NAMES:
            return accuracy_cls(name=identifier)
        return crossentropy_cls(name=identifier, from_logits=bool(getattr(loss, "from_logits", False)))
    metric = get(identifier)
    if isinstance(identifier, str):
        metric.name = identifier
    return metric
