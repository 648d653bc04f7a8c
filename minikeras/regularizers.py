"""Weight and activity penalties under Keras 3's names, defaults and formulas (``mk.regularizers``).

    layer = mk.layers.Dense(10, kernel_regularizer=mk.regularizers.L2(1e-4))
    layer(x); layer.losses          # [1e-4 * sum(kernel ** 2)]

A regularizer is called on a tensor and returns a scalar: ``L1``: ``l1 * sum(|x|)``,
``L2``: ``l2 * sum(x ** 2)`` (no 1/2, unlike ``tf.nn.l2_loss``), ``L1L2`` both (names: 'l1', 'l2', 'l1l2'). Layers put
them in ``layer.losses`` and ``fit``/``evaluate``/``train_on_batch`` add those to the loss.
"""
import inspect
import math

from minikeras.module import snake_case
from minikeras.ops.array import transpose
from minikeras.ops.creation import eye
from minikeras.ops.linalg import matmul
from minikeras.ops.math import abs as abs_, cast, maximum, rsqrt, square
from minikeras.ops.reduce import reduce_sum
from minikeras.tensor import Tensor, Variable, to_array


def _t(x):
    if isinstance(x, Variable):
        return x.value()
    return x if isinstance(x, Tensor) else Tensor(to_array(x))


def _factor(value, name):
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or math.isinf(value) or math.isnan(value)
            or value < 0):
        raise ValueError(f"Invalid value for argument {name}: expected a non-negative float.Received: {name}={value}")
    return float(value)


class Regularizer:
    """The base class: ``__call__(x)`` returns a scalar penalty; ``get_config`` its arguments."""

    def __call__(self, x):
        return 0.0

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def get_config(self):
        raise NotImplementedError(f"{self} does not implement get_config()")


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x ** 2)``; both factors default to 0."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _factor(0.0 if l1 is None else l1, "l1")
        self.l2 = _factor(0.0 if l2 is None else l2, "l2")

    def __call__(self, x):
        x = _t(x)
        penalty = cast(0.0, x.dtype)
        if self.l1:
            penalty = penalty + reduce_sum(abs_(x)) * cast(self.l1, x.dtype)
        if self.l2:
            penalty = penalty + reduce_sum(square(x)) * cast(self.l2, x.dtype)
        return penalty

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(Regularizer):
    """``l1 * sum(|x|)`` (default ``l1=0.01``)."""

    def __init__(self, l1=0.01):
        self.l1 = _factor(0.01 if l1 is None else l1, "l1")

    def __call__(self, x):
        x = _t(x)
        return reduce_sum(abs_(x)) * cast(self.l1, x.dtype)

    def get_config(self):
        return {"l1": self.l1}


class L2(Regularizer):
    """``l2 * sum(x ** 2)`` (default ``l2=0.01``)."""

    def __init__(self, l2=0.01):
        self.l2 = _factor(0.01 if l2 is None else l2, "l2")

    def __call__(self, x):
        x = _t(x)
        return reduce_sum(square(x)) * cast(self.l2, x.dtype)

    def get_config(self):
        return {"l2": self.l2}


class OrthogonalRegularizer(Regularizer):
    """``factor * mean |<u_i, u_j>|`` over pairs i < j of the L2-normalized rows (``mode='rows'``)
    or columns (``mode='columns'``) of a rank-2 input (e.g. a Dense kernel)."""

    def __init__(self, factor=0.01, mode="rows"):
        self.factor = _factor(factor, "factor")
        if mode not in ("rows", "columns"):
            raise ValueError('Invalid value for argument `mode`. Expected one of {"rows", "columns"}. '
                             f"Received: mode={mode}")
        self.mode = mode

    def __call__(self, inputs):
        x = _t(inputs)
        if x.ndim != 2:
            raise ValueError(f"Inputs to OrthogonalRegularizer must have rank 2. Received: inputs.shape={x.shape}")
        if self.mode == "columns":
            x = transpose(x)
        x = x * rsqrt(maximum(reduce_sum(square(x), axis=1, keepdims=True), 1e-12))
        size = x.shape[0]
        product = matmul(x, transpose(x)) * (1.0 - eye(size, dtype=x.dtype))
        pairs = size * (size - 1.0) / 2.0
        return reduce_sum(abs_(product)) * (self.factor * 0.5 / pairs)

    def get_config(self):
        return {"factor": self.factor, "mode": self.mode}


l1, l2, l1_l2, orthogonal_regularizer = L1, L2, L1L2, OrthogonalRegularizer

_CLASSES = (Regularizer, L1, L2, L1L2, OrthogonalRegularizer)
_BY_NAME = {cls.__name__: cls for cls in _CLASSES}
_BY_NAME.update({snake_case(cls.__name__): cls for cls in _CLASSES})  # 'l1', 'l2', 'l1l2' (Keras 3: not 'l1_l2')


def serialize(regularizer):
    """Keras 3's ``{'module', 'class_name', 'config', 'registered_name'}`` dict (None stays None).

    The module is ``"minikeras.regularizers"``, as every minikeras ``serialize`` names its own
    package; a ``.keras`` file gets Keras 3's ``"keras.regularizers"`` (``saving.keras_config``)."""
    if regularizer is None:
        return None
    if not isinstance(regularizer, Regularizer):
        raise ValueError(f"Cannot serialize {regularizer!r}: it is not an mk.regularizers.Regularizer")
    return {"module": "minikeras.regularizers", "class_name": type(regularizer).__name__,
            "config": regularizer.get_config(), "registered_name": None}


def deserialize(config, custom_objects=None):
    """Rebuilds a regularizer from ``serialize``'s dict or a name ('l2', 'L1L2', ...)."""
    if isinstance(config, str):
        config = {"class_name": config, "config": {}}
    name = config.get("class_name")
    cls = (custom_objects or {}).get(name) or _BY_NAME.get(name)
    if cls is None:
        raise ValueError(f"Could not interpret regularizer identifier: {name}")
    return cls.from_config(dict(config.get("config") or {}))


def get(identifier):
    """A regularizer from a name ('l1', 'l2', 'l1l2', 'L2', ...), a dict, a class, an instance
    or a callable ``fn(x) -> scalar``; None gives None.

    Raises:
      ValueError: "Could not interpret regularizer identifier: ..." for anything else.
    """
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    obj = _BY_NAME.get(identifier) if isinstance(identifier, str) else identifier
    if callable(obj):
        return obj() if inspect.isclass(obj) else obj
    raise ValueError(f"Could not interpret regularizer identifier: {identifier}")
