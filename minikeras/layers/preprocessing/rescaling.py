"""Rescaling: ``inputs * scale + offset``."""
import numpy as np

from minikeras.dtypes import as_dtype
from minikeras.layers.base import Layer
from minikeras.ops.math import cast


class Rescaling(Layer):
    """``inputs * scale + offset`` in the layer's dtype (integer images become float32), e.g.
    ``Rescaling(1 / 255)``. ``scale`` and ``offset`` may be scalars or arrays broadcast to the input."""

    supports_masking = True

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale
        self.offset = offset

    def call(self, inputs):
        dtype = as_dtype(self.compute_dtype)
        x = inputs if inputs.dtype == dtype else cast(inputs, dtype)
        return x * np.asarray(self.scale, dtype) + np.asarray(self.offset, dtype)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}
