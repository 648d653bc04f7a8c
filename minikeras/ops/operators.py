"""Installs Python operators (+, *, @, [], <, ...) on Tensor, Variable and KerasTensor."""
from minikeras.ops import array, linalg, math
from minikeras.symbolic import KerasTensor
from minikeras.tensor import Tensor, Variable


def _reflected(op):
    """The reflected operator (``__radd__`` and the like): ``op`` with the operands swapped."""
    return lambda self, other: op(other, self)


def _comparison(op):
    """An ordering operator (``__lt__`` and the like) that answers ``NotImplemented`` for None."""
    def compare(self, other):
        if other is None:
            return NotImplemented
        return op(self, other)
    return compare


def python_operators(*, add, subtract, multiply, divide, floordiv, mod, power, matmul, negative, absolute,
                     less, less_equal, greater, greater_equal, logical_and, logical_or, logical_xor, logical_not):
    """{dunder name: method} for Python's arithmetic, ordering and logical operators written with
    the given ops (the reflected ones with the operands swapped; ``x < None`` is ``NotImplemented``)."""
    binary = {"add": add, "sub": subtract, "mul": multiply, "truediv": divide, "floordiv": floordiv, "mod": mod,
              "pow": power, "matmul": matmul, "and": logical_and, "or": logical_or}
    table = {}
    for name, op in binary.items():
        table[f"__{name}__"], table[f"__r{name}__"] = op, _reflected(op)
    ordering = {"lt": less, "le": less_equal, "gt": greater, "ge": greater_equal}
    table.update({f"__{name}__": _comparison(op) for name, op in ordering.items()})
    table.update({"__xor__": logical_xor, "__invert__": logical_not, "__neg__": negative, "__abs__": absolute})
    return table


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
    **python_operators(add=math.add, subtract=math.subtract, multiply=math.multiply, divide=math.divide,
                       floordiv=math.floordiv, mod=math.floormod, power=math.pow, matmul=linalg.matmul,
                       negative=math.negative, absolute=math.abs, less=math.less, less_equal=math.less_equal,
                       greater=math.greater, greater_equal=math.greater_equal, logical_and=math.logical_and,
                       logical_or=math.logical_or, logical_xor=math.logical_xor, logical_not=math.logical_not),
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
