"""Flatten: every axis but the batch axis into one."""
import numpy as np

from minikeras.layers.base import Layer
from minikeras.ops.array import reshape
from minikeras.saving.registry import register_builtin


@register_builtin("minikeras.layers")
class Flatten(Layer):
    """Flattens every axis but the batch axis: (batch, ...) -> (batch, n)."""

    min_ndim = 1

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"Flatten supports data_format='channels_last' only, received {data_format!r}")

    def call(self, inputs):
        return reshape(inputs, (inputs.shape[0], int(np.prod(inputs.shape[1:], dtype=np.int64))))

    def compute_output_shape(self, input_shape):
        rest = input_shape[1:]
        return (input_shape[0], None if None in rest else int(np.prod(rest, dtype=np.int64)))
