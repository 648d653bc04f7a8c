"""``keras.Variable``: Keras 3's constructor for ``mk.Variable``.

    v = keras.Variable(initializer=keras.initializers.Ones(), shape=(2,), name="v")
    v = keras.Variable(np.zeros((3,)))
    isinstance(layer.kernel, keras.Variable)       # True: every mk.Variable is one

A Keras 3 Variable is made from an initializer (an object, a name or a function of
``(shape, dtype)``, with ``shape``) or a value; the result is an ``mk.Variable``, and
``isinstance`` holds for every ``mk.Variable``, as every Keras variable is a ``keras.Variable``.
"""
from minikeras import initializers, tensor
from minikeras.backend import floatx
from minikeras.dtypes import as_dtype

_AGGREGATIONS = ("none", "mean", "sum", "only_first_replica")
_SYNCHRONIZATIONS = ("none", "on_read", "on_write", "auto")


class _AnyMinikerasVariable(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, tensor.Variable)

    def __subclasscheck__(cls, subclass):
        return issubclass(subclass, tensor.Variable)


class Variable(tensor.Variable, metaclass=_AnyMinikerasVariable):
    """An ``mk.Variable`` made with Keras 3's arguments.

    Args:
      initializer: an initializer (object, name, or function of ``(shape, dtype)``; then
        ``shape`` is required) or an initial value (array, Tensor, number, nested list).
      shape: the shape, for an initializer.
      dtype: default ``floatx()`` for an initializer, the value's own dtype for a value.
      trainable: whether gradients are taken for it.
      autocast: kept for Keras's signature (mk.Variables read in a mixed-precision layer's call
        are cast to its compute dtype).
      aggregation, synchronization: Keras's cross-replica settings, checked; ``mk.distribute``
        keeps one logical copy of each variable, so there is nothing to aggregate.
      name: default 'variable'.
    """

    __slots__ = ()

    def __init__(self, initializer, shape=None, dtype=None, trainable=True, autocast=True, aggregation="none",
                 synchronization="auto", name=None):
        if aggregation not in _AGGREGATIONS:
            raise ValueError(f"Invalid value for argument `aggregation`. Expected one of {_AGGREGATIONS}. Received: "
                             f"aggregation={aggregation}")
        if synchronization not in _SYNCHRONIZATIONS:
            raise ValueError(f"Invalid value for argument `synchronization`. Expected one of {_SYNCHRONIZATIONS}. "
                             f"Received: synchronization={synchronization}")
        if isinstance(initializer, str) or callable(initializer):
            if shape is None:
                raise ValueError("When creating a Variable from an initializer, the `shape` argument should be "
                                 f"specified. Received: initializer={initializer} and shape={shape}")
            init = initializers.get(initializer) if isinstance(initializer, str) else initializer
            dtype = as_dtype(dtype) if dtype is not None else floatx()
            shape = tuple(int(n) for n in shape)
            super().__init__(lambda: init(shape, dtype=dtype), trainable=trainable, name=name or "variable",
                             dtype=dtype)
        else:
            super().__init__(initializer, trainable=trainable, name=name or "variable", dtype=dtype, shape=shape)
