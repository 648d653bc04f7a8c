"""Layers that move values around: RepeatVector, Permute."""
import numpy as np

from minikeras.layers.base import Layer
from minikeras.ops.array import broadcast_to, reshape, transpose


class RepeatVector(Layer):
    """(batch, features) -> (batch, n, features): the input repeated ``n`` times."""

    input_ndim = 2

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        if n <= 0:
            raise ValueError(f"Argument `n` should be a positive integer. Received: n={n}")
        self.n = int(n)

    def call(self, inputs):
        b, f = inputs.shape
        return broadcast_to(reshape(inputs, (b, 1, f)), (b, self.n, f))

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.n, input_shape[1])

    def get_config(self):
        return {**super().get_config(), "n": self.n}


class Permute(Layer):
    """Permutes the non-batch axes: ``dims`` numbers them from 1 (``Permute((2, 1))`` swaps the two)."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Invalid permutation argument `dims` for Permute Layer. The set of indices in `dims` "
                             f"must be consecutive and start from 1. Received dims={self.dims}")

    def _check_input(self, inputs):
        super()._check_input(inputs)
        if inputs.ndim != len(self.dims) + 1:
            raise ValueError(f"Permute '{self.name}' with dims={self.dims} expects inputs of rank "
                             f"{len(self.dims) + 1}, received shape {inputs.shape}")

    def call(self, inputs):
        return transpose(inputs, (0,) + self.dims)

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + tuple(input_shape[d] for d in self.dims)

    def get_config(self):
        return {**super().get_config(), "dims": self.dims}
