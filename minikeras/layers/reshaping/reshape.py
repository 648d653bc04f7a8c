"""Reshape: every example to a target shape."""
import numpy as np

from minikeras.layers.base import Layer
from minikeras.ops.array import reshape
from minikeras.saving.registry import register_builtin


@register_builtin("minikeras.layers")
class Reshape(Layer):
    """Reshapes every example to ``target_shape`` (one -1 allowed); the batch axis is kept."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(n) for n in target_shape)

    def call(self, inputs):
        size = int(np.prod(inputs.shape[1:], dtype=np.int64))
        known = int(np.prod([n for n in self.target_shape if n != -1], dtype=np.int64))
        if (-1 not in self.target_shape and known != size) or (-1 in self.target_shape and size % known):
            raise ValueError(f"Reshape '{self.name}': cannot reshape examples of shape {inputs.shape[1:]} "
                             f"({size} values) to {self.target_shape}")
        return reshape(inputs, (inputs.shape[0],) + self.target_shape)

    def compute_output_shape(self, input_shape):
        if -1 not in self.target_shape or None in input_shape[1:]:
            return (input_shape[0],) + tuple(None if n == -1 else n for n in self.target_shape)
        size = int(np.prod(input_shape[1:], dtype=np.int64))
        known = int(np.prod([n for n in self.target_shape if n != -1], dtype=np.int64))
        return (input_shape[0],) + tuple(size // known if n == -1 else n for n in self.target_shape)

    def get_config(self):
        return {**super().get_config(), "target_shape": self.target_shape}
