"""Installs Python operators (+, *, @, [], <, ...) on Tensor, Variable and KerasTensor."""
from minikeras.ops import array, linalg, math
from minikeras.symbolic import KerasTensor
from minikeras.tensor import Tensor, Variable


def reflected(op):
    """The reflected operator (``__radd__`` and the like): ``op`` with the operands swapped."""
    return lambda self, other: op(other, self)


def comparison(op):
    """An ordering operator (``__lt__`` and the like) that answers ``NotImplemented`` for None."""
    def compare(self, other):
        if other is None:
            return NotImplemented
        return op(self, other)
    return compare


def _eq(self, other):
    if other is None or not _convertible(other):
        return False
    return math.equal(self, other)


def _ne(self, other):
    if other is None or not _convertible(other):
        return True
    return math.not_equal(self, other)


def _convertible(x):
    import numpy as np
    return (isinstance(x, (Tensor, Variable, int, float, bool, np.ndarray, np.generic, list, tuple))
            or hasattr(x, "__jax_array__"))


OPERATORS = {
    "__add__": math.add, "__radd__": reflected(math.add),
    "__sub__": math.subtract, "__rsub__": reflected(math.subtract),
    "__mul__": math.multiply, "__rmul__": reflected(math.multiply),
    "__truediv__": math.divide, "__rtruediv__": reflected(math.divide),
    "__floordiv__": math.floordiv, "__rfloordiv__": reflected(math.floordiv),
    "__mod__": math.floormod, "__rmod__": reflected(math.floormod),
    "__pow__": math.pow, "__rpow__": reflected(math.pow),
    "__matmul__": linalg.matmul, "__rmatmul__": reflected(linalg.matmul),
    "__neg__": math.negative, "__abs__": math.abs,
    "__lt__": comparison(math.less), "__le__": comparison(math.less_equal),
    "__gt__": comparison(math.greater), "__ge__": comparison(math.greater_equal),
    "__and__": math.logical_and, "__rand__": reflected(math.logical_and),
    "__or__": math.logical_or, "__ror__": reflected(math.logical_or),
    "__xor__": math.logical_xor, "__invert__": math.logical_not,
    "__getitem__": array.getitem,
    "__eq__": _eq, "__ne__": _ne,
}


def install():
    for cls in (Tensor, Variable):
        for name, fn in OPERATORS.items():
            setattr(cls, name, fn)
    for name, fn in OPERATORS.items():  # a symbolic tensor's == stays identity (graphs key on it)
        if name not in ("__eq__", "__ne__"):
            setattr(KerasTensor, name, fn)
    Variable.__hash__ = object.__hash__
    Tensor.__hash__ = None
    Tensor.__pos__ = lambda self: self
