"""Dropout: zeroes a random fraction of inputs while training."""
from minikeras.layers.base import Layer
from minikeras.ops.nn import dropout
from minikeras.saving.registry import register_builtin


@register_builtin("minikeras.layers")
class Dropout(Layer):
    """Sets a fraction ``rate`` of inputs to 0 when ``training=True`` and scales the rest by
    ``1 / (1 - rate)``; the identity otherwise. Each call draws a fresh mask (also compiled)."""

    supports_masking = True

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= float(rate) < 1:
            raise ValueError(f"Dropout: `rate` must be in [0, 1), received rate={rate!r}")
        self.rate = float(rate)
        self.noise_shape = noise_shape
        self.seed = seed
        self._build_at_init()

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        return dropout(inputs, self.rate, noise_shape=self.noise_shape, seed=self.seed)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape, "seed": self.seed}
