"""Activation: applies an activation function by name or callable."""
from minikeras import activations
from minikeras.layers.base import Layer
from minikeras.saving.registry import register_builtin


@register_builtin("minikeras.layers")
class Activation(Layer):
    """Applies an activation function (by name or callable)."""

    supports_masking = True

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)
        self._build_at_init()

    def call(self, inputs):
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "activation": activations.serialize(self.activation)}
