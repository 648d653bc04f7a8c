"""``keras.optimizers.legacy``: Keras 2's optimizer classes, which Keras 3 keeps only as names
whose construction raises an ImportError saying so; minikeras does the same, and its message
names the Keras 3 optimizer to use instead."""


class _LegacyOptimizer:
    def __init__(self, *args, **kwargs):
        name = type(self).__name__
        instead = "keras.optimizers.Optimizer" if name == "Optimizer" else f"keras.optimizers.{name}"
        raise ImportError(f"`keras.optimizers.legacy` is not supported in Keras 3 (nor in minikeras), which has "
                          f"no Keras 2 optimizers: use `{instead}` instead (its arguments are Keras 3's: "
                          "`learning_rate`, not `lr` or `decay`).")


class Adagrad(_LegacyOptimizer):
    """Keras 2's Adagrad: constructing it raises ImportError, as in Keras 3."""


class Adam(_LegacyOptimizer):
    """Keras 2's Adam: constructing it raises ImportError, as in Keras 3."""


class Ftrl(_LegacyOptimizer):
    """Keras 2's Ftrl: constructing it raises ImportError, as in Keras 3."""


class Optimizer(_LegacyOptimizer):
    """Keras 2's optimizer base class: constructing it raises ImportError, as in Keras 3."""


class RMSprop(_LegacyOptimizer):
    """Keras 2's RMSprop: constructing it raises ImportError, as in Keras 3."""


class SGD(_LegacyOptimizer):
    """Keras 2's SGD: constructing it raises ImportError, as in Keras 3."""
