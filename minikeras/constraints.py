"""Weight constraints under Keras 3's names, defaults and formulas (``keras.constraints``).

    layer = keras.layers.Dense(64, kernel_constraint=keras.constraints.MaxNorm(3))

A constraint maps a weight to its projection; the optimizer assigns ``constraint(weight)`` to
each constrained weight after every update (``Layer.add_weight(constraint=...)`` sets
``variable.constraint``), inside the compiled update as Keras 3 does. The norms are over
``axis`` (default 0: each column of a Dense kernel), with Keras's ``epsilon()`` below them:
``MaxNorm`` rescales columns whose norm exceeds ``max_value``, ``MinMaxNorm`` moves the norm
``rate`` of the way into ``[min_value, max_value]``, ``UnitNorm`` divides by the norm,
``NonNeg`` sets negative entries to zero.
"""
import inspect

from minikeras.backend import epsilon
from minikeras.module import snake_case
from minikeras.ops.math import maximum, minimum, sqrt, square
from minikeras.ops.reduce import reduce_sum
from minikeras.tensor import Tensor, Variable, to_array


def _t(w):
    if isinstance(w, Variable):
        return w.value()
    return w if isinstance(w, Tensor) else Tensor(to_array(w))


def _norms(w, axis):
    return sqrt(reduce_sum(square(w), axis=axis, keepdims=True))


class Constraint:
    """The base class: ``__call__(w)`` returns the projected weight (``w`` itself here)."""

    def __call__(self, w):
        return w

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class MaxNorm(Constraint):
    """Rescales each slice along ``axis`` whose L2 norm is above ``max_value`` to that norm."""

    def __init__(self, max_value=2, axis=0):
        self.max_value = max_value
        self.axis = axis

    def __call__(self, w):
        w = _t(w)
        norms = _norms(w, self.axis)
        desired = minimum(maximum(norms, 0.0), float(self.max_value))
        return w * (desired / (epsilon() + norms))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class MinMaxNorm(Constraint):
    """Rescales each slice's norm to ``rate * clip(norm, min_value, max_value) + (1 - rate) * norm``."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value = min_value
        self.max_value = max_value
        self.rate = rate
        self.axis = axis

    def __call__(self, w):
        w = _t(w)
        norms = _norms(w, self.axis)
        clipped = minimum(maximum(norms, float(self.min_value)), float(self.max_value))
        desired = clipped * float(self.rate) + norms * (1.0 - float(self.rate))
        return w * (desired / (epsilon() + norms))

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate, "axis": self.axis}


class NonNeg(Constraint):
    """Sets the negative entries to zero."""

    def __call__(self, w):
        return maximum(_t(w), 0.0)


class UnitNorm(Constraint):
    """Divides each slice along ``axis`` by its L2 norm."""

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        w = _t(w)
        return w / (epsilon() + _norms(w, self.axis))

    def get_config(self):
        return {"axis": self.axis}


max_norm, min_max_norm, non_neg, unit_norm = MaxNorm, MinMaxNorm, NonNeg, UnitNorm

_CLASSES = (Constraint, MaxNorm, MinMaxNorm, NonNeg, UnitNorm)
_BY_NAME = {cls.__name__: cls for cls in _CLASSES}
_BY_NAME.update({snake_case(cls.__name__): cls for cls in _CLASSES})  # 'max_norm', 'non_neg', ...


def serialize(constraint):
    """Keras 3's ``{'module', 'class_name', 'config', 'registered_name'}`` dict (None stays None);
    a ``.keras`` file gets Keras's module name ``keras.constraints`` (``saving.keras_config``)."""
    if constraint is None:
        return None
    if not isinstance(constraint, Constraint):
        raise ValueError(f"Cannot serialize {constraint!r}: it is not a keras.constraints.Constraint")
    return {"module": "minikeras.constraints", "class_name": type(constraint).__name__,
            "config": constraint.get_config(), "registered_name": None}


def deserialize(config, custom_objects=None):
    """Rebuilds a constraint from ``serialize``'s dict or a name ('max_norm', 'NonNeg', ...)."""
    if isinstance(config, str):
        config = {"class_name": config, "config": {}}
    name = config.get("class_name")
    cls = (custom_objects or {}).get(name) or _BY_NAME.get(name)
    if cls is None:
        raise ValueError(f"Could not interpret constraint identifier: {name}")
    return cls.from_config(dict(config.get("config") or {}))


def get(identifier):
    """A constraint from a name, a dict, a class, an instance or a callable ``fn(w) -> w``; None
    gives None.

    Raises:
      ValueError: "Could not interpret constraint identifier: ..." for anything else.
    """
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    obj = _BY_NAME.get(identifier) if isinstance(identifier, str) else identifier
    if callable(obj):
        return obj() if inspect.isclass(obj) else obj
    raise ValueError(f"Could not interpret constraint identifier: {identifier}")
