"""``keras.ops``: Keras 3's backend-agnostic ops over minikeras's primitives.

    from minikeras import keras
    y = keras.ops.matmul(x, w) + b

Every name of Keras 3's ``keras.ops`` is here, flat, and again in the submodules Keras groups
them in (``keras.ops.numpy``, ``keras.ops.nn``, ``keras.ops.linalg``, ``keras.ops.image``,
``keras.ops.core``, ``keras.ops.math``). Each takes ``mk.Tensor``s, NumPy arrays and Python
numbers, records on ``GradientTape``s like any minikeras op, and on symbolic tensors (``mk.Input``)
records a node of the functional graph.
"""
import sys
from types import FunctionType as _FUNCTION

from minikeras.keras.ops import core, einops, image, linalg, math, nn, numpy, op_nodes, symbolic_operators


def _public(module):
    """The ops a submodule defines (its ``__all__``, else its public functions defined there)."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items() if not n.startswith("_") and isinstance(v, _FUNCTION)
                 and v.__module__ == module.__name__]
    return {n: getattr(module, n) for n in names}


# Keras's flat names (``keras.ops.image``'s are only there, as in Keras); core's and nn's come
# last, as Keras's ``keras.ops`` exports them
for _module in (numpy, math, einops, linalg, nn, core):
    globals().update(_public(_module))
for _module in (numpy, math, linalg, nn, core, image):
    # ``import minikeras.keras.ops.numpy`` / ``from minikeras.keras.ops.nn import relu`` find the module
    sys.modules.setdefault(f"{__name__}.{_module.__name__.rsplit('.', 1)[-1]}", _module)
# a functional model's op nodes load from .keras files (Keras 3's Operation class names)
op_nodes.register({n: f for _module in (numpy, math, linalg, nn, core, image) for n, f in _public(_module).items()})
symbolic_operators.install()  # x + 1 on an mk.Input is keras.ops.add's node, as in Keras 3
del _module, _public, sys
