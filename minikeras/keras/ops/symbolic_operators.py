"""Python operators on symbolic tensors as Keras 3 records them: ``x + 3.0`` on an ``mk.Input``'s
KerasTensor is ``keras.ops.add(x, 3.0)``, a node a ``.keras`` file can name (Keras's ``Add``
operation), with Keras 3's result dtypes. (On concrete Tensors the operators stay minikeras's
TensorFlow-style ops.) ``==`` and ``!=`` stay identity: graphs key on symbolic tensors; ``[]``
stays minikeras's slicing (``keras.ops.get_item`` is itself written with it)."""
from minikeras.keras.ops import numpy as np_ops
from minikeras.ops.operators import comparison, reflected
from minikeras.symbolic import KerasTensor

OPERATORS = {
    "__add__": np_ops.add, "__radd__": reflected(np_ops.add),
    "__sub__": np_ops.subtract, "__rsub__": reflected(np_ops.subtract),
    "__mul__": np_ops.multiply, "__rmul__": reflected(np_ops.multiply),
    "__truediv__": np_ops.true_divide, "__rtruediv__": reflected(np_ops.true_divide),
    "__floordiv__": np_ops.floor_divide, "__rfloordiv__": reflected(np_ops.floor_divide),
    "__mod__": np_ops.mod, "__rmod__": reflected(np_ops.mod),
    "__pow__": np_ops.power, "__rpow__": reflected(np_ops.power),
    "__matmul__": np_ops.matmul, "__rmatmul__": reflected(np_ops.matmul),
    "__neg__": np_ops.negative, "__abs__": np_ops.absolute,
    "__lt__": comparison(np_ops.less), "__le__": comparison(np_ops.less_equal),
    "__gt__": comparison(np_ops.greater), "__ge__": comparison(np_ops.greater_equal),
    "__and__": np_ops.logical_and, "__rand__": reflected(np_ops.logical_and),
    "__or__": np_ops.logical_or, "__ror__": reflected(np_ops.logical_or),
    "__xor__": np_ops.logical_xor, "__invert__": np_ops.logical_not,
}


def install():
    """Puts the operators on KerasTensor (``minikeras.keras.ops`` does it when imported)."""
    for name, fn in OPERATORS.items():
        setattr(KerasTensor, name, fn)
