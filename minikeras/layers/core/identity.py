"""Identity: returns its input unchanged."""
from minikeras.layers.base import Layer


class Identity(Layer):
    """Returns its input unchanged."""

    supports_masking = True

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._build_at_init()

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)
