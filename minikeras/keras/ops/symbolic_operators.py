"""Python operators on symbolic tensors as Keras 3 records them: ``x + 3.0`` on an ``mk.Input``'s
KerasTensor is ``keras.ops.add(x, 3.0)``, a node a ``.keras`` file can name (Keras's ``Add``
operation), with Keras 3's result dtypes. (On concrete Tensors the operators stay minikeras's
TensorFlow-style ops.) ``==`` and ``!=`` stay identity: graphs key on symbolic tensors; ``[]``
stays minikeras's slicing (``keras.ops.get_item`` is itself written with it)."""
from minikeras.keras.ops import numpy as np_ops
from minikeras.ops.operators import python_operators
from minikeras.symbolic import KerasTensor

OPERATORS = python_operators(
    add=np_ops.add, subtract=np_ops.subtract, multiply=np_ops.multiply, divide=np_ops.true_divide,
    floordiv=np_ops.floor_divide, mod=np_ops.mod, power=np_ops.power, matmul=np_ops.matmul, negative=np_ops.negative,
    absolute=np_ops.absolute, less=np_ops.less, less_equal=np_ops.less_equal, greater=np_ops.greater,
    greater_equal=np_ops.greater_equal, logical_and=np_ops.logical_and, logical_or=np_ops.logical_or,
    logical_xor=np_ops.logical_xor, logical_not=np_ops.logical_not)


def install():
    """Puts the operators on KerasTensor (``minikeras.keras.ops`` does it when imported)."""
    for name, fn in OPERATORS.items():
        setattr(KerasTensor, name, fn)
