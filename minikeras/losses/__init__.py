"""Losses under Keras 3's names, defaults and formulas (``mk.losses``).

    loss_fn = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    loss = loss_fn(labels, logits)                      # scalar: mean over the batch
    per_sample = mk.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)

Classes reduce (default 'sum_over_batch_size') and take ``sample_weight``; functions return one
loss per sample. ``get('mse')`` looks one up by name.
"""
from minikeras.losses.base import Loss, LossFunctionWrapper, reduce_values, reduce_weighted_values  # noqa: F401
from minikeras.losses.crossentropy import (  # noqa: F401
    BCE, BinaryCrossentropy, CategoricalCrossentropy, SparseCategoricalCrossentropy, bce, binary_crossentropy,
    categorical_crossentropy, sparse_categorical_crossentropy)
from minikeras.losses.circle import Circle, circle  # noqa: F401
from minikeras.losses.ctc import CTC, ctc  # noqa: F401
from minikeras.losses.focal import (  # noqa: F401
    BinaryFocalCrossentropy, CategoricalFocalCrossentropy, CategoricalGeneralizedCrossEntropy,
    binary_focal_crossentropy, categorical_focal_crossentropy, categorical_generalized_cross_entropy)
from minikeras.losses.hinge import (  # noqa: F401
    CategoricalHinge, Hinge, SquaredHinge, categorical_hinge, hinge, squared_hinge)
from minikeras.losses.overlap import Dice, Tversky, dice, tversky  # noqa: F401
from minikeras.losses.regression import (  # noqa: F401
    KLD, MAE, MAPE, MSE, MSLE, CosineSimilarity, Huber, KLDivergence, LogCosh, MeanAbsoluteError,
    MeanAbsolutePercentageError, MeanSquaredError, MeanSquaredLogarithmicError, Poisson, cosine_similarity, huber,
    kl_divergence, kld, kullback_leibler_divergence, log_cosh, mae, mape, mean_absolute_error,
    mean_absolute_percentage_error, mean_squared_error, mean_squared_logarithmic_error, mse, msle, poisson)

_CLASSES = (MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredLogarithmicError, Huber,
            LogCosh, Poisson, CosineSimilarity, KLDivergence, Hinge, SquaredHinge, CategoricalHinge, BinaryCrossentropy,
            CategoricalCrossentropy, SparseCategoricalCrossentropy, BinaryFocalCrossentropy,
            CategoricalFocalCrossentropy, CategoricalGeneralizedCrossEntropy, CTC, Dice, Tversky, Circle)
_FUNCTIONS = (mean_squared_error, mean_absolute_error, mean_absolute_percentage_error, mean_squared_logarithmic_error,
              huber, log_cosh, poisson, cosine_similarity, kl_divergence, hinge, squared_hinge, categorical_hinge,
              binary_crossentropy, categorical_crossentropy, sparse_categorical_crossentropy, binary_focal_crossentropy,
              categorical_focal_crossentropy, categorical_generalized_cross_entropy, ctc, dice, tversky, circle)

_BY_NAME = {cls.__name__: cls for cls in _CLASSES}
_BY_NAME.update({fn.__name__: fn for fn in _FUNCTIONS})
_BY_NAME.update({
    "mse": mse, "MSE": mse, "mae": mae, "MAE": mae, "mape": mape, "MAPE": mape, "kld": kld, "KLD": kld,
    "bce": bce, "BCE": bce, "kullback_leibler_divergence": kl_divergence, "huber_loss": huber,
    "msle": msle, "MSLE": msle,
})


def serialize(loss):
    """A Loss instance as ``{'module', 'class_name', 'config', 'registered_name'}``; a built-in
    loss function (or a plain LossFunctionWrapper of one) as its name."""
    if (type(loss) is LossFunctionWrapper and not loss._fn_kwargs and loss.reduction == "sum_over_batch_size"
            and loss.name == getattr(loss.fn, "__name__", None)):
        loss = loss.fn  # compile(loss='mse') stores the function's name, as Keras's compile_config does
    if isinstance(loss, Loss):
        return {"module": "minikeras.losses", "class_name": loss.__class__.__name__, "config": loss.get_config(),
                "registered_name": None}
    name = getattr(loss, "__name__", None)
    if name is not None and _BY_NAME.get(name) is loss:
        return name
    raise ValueError(f"Cannot serialize loss {loss!r}: only Loss objects and built-in loss functions can be")


def deserialize(config, custom_objects=None):
    """Rebuilds a loss from ``serialize``'s output (or a name)."""
    if isinstance(config, str):
        return get(config) if not custom_objects or config not in custom_objects else custom_objects[config]
    name = config.get("class_name")
    cls = (custom_objects or {}).get(name) or _BY_NAME.get(name) or (
        LossFunctionWrapper if name == "LossFunctionWrapper" else None)
    if cls is None or not isinstance(cls, type):
        raise ValueError(f"Unknown loss class {name!r}. Known loss classes: {', '.join(c.__name__ for c in _CLASSES)}")
    return cls.from_config(dict(config.get("config") or {}))


def get(identifier):
    """Returns a loss from a name (a class name such as 'SparseCategoricalCrossentropy' gives an
    instance, a function name such as 'mse' or 'sparse_categorical_crossentropy' the function),
    a config dict, a Loss, or a callable; None gives None.

    Raises:
      ValueError: for an unknown name (the message lists the known ones) or a non-callable.
    """
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        obj = _BY_NAME.get(identifier)
        if obj is None:
            raise ValueError(f"Unknown loss: {identifier!r}. Known losses: {', '.join(sorted(_BY_NAME))}")
        return obj() if isinstance(obj, type) else obj
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret loss identifier: {identifier!r}")
