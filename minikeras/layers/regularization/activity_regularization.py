"""ActivityRegularization: the identity, with an L1/L2 penalty of its input in ``layer.losses``."""
from minikeras import regularizers
from minikeras.layers.base import Layer


class ActivityRegularization(Layer):
    """Passes its input through and adds ``(l1 * sum(|x|) + l2 * sum(x**2)) / batch_size`` to
    ``layer.losses`` (Keras's activity regularizer).

    Args:
      l1, l2: the penalty's factors (default 0).
    """

    supports_masking = True

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = l1, l2
        self._build_at_init()

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = {**super().get_config(), "l1": self.l1, "l2": self.l2}
        config.pop("activity_regularizer", None)
        return config
