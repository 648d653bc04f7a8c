"""Flatten: every axis but the batch axis into one."""
import numpy as np

from minikeras.backend import standardize_data_format
from minikeras.layers.base import Layer
from minikeras.ops.array import reshape, transpose
from minikeras.saving.registry import register_builtin


@register_builtin("minikeras.layers")
class Flatten(Layer):
    """Flattens every axis but the batch axis: (batch, ...) -> (batch, n).

    ``data_format='channels_first'`` moves axis 1 last before flattening, so the order of the
    values is that of the same data in channels_last (Keras 3's rule); the default is
    ``mk.backend.image_data_format()``.
    """

    min_ndim = 1

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)

    def call(self, inputs):
        if self.data_format == "channels_first" and inputs.ndim > 2:
            inputs = transpose(inputs, (0, *range(2, inputs.ndim), 1))
        return reshape(inputs, (inputs.shape[0], int(np.prod(inputs.shape[1:], dtype=np.int64))))

    def compute_output_shape(self, input_shape):
        rest = input_shape[1:]
        return (input_shape[0], None if None in rest else int(np.prod(rest, dtype=np.int64)))

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}
