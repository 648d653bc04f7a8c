"""Dense, Activation, Flatten, Reshape and Dropout (and, re-exported, the Input placeholder)."""
import numpy as np

from minikeras import activations
from minikeras.layers.base import Layer
from minikeras.layers.input_layer import Input, InputLayer  # noqa: F401 - their former home
from minikeras.layers.kernel_bias import KernelBiasLayer
from minikeras.ops.array import reshape
from minikeras.ops.linalg import matmul
from minikeras.ops.nn import dropout
from minikeras.saving.registry import register_builtin


@register_builtin("minikeras.layers")
class Dense(KernelBiasLayer):
    """``activation(inputs @ kernel + bias)`` on the last axis.

    Args:
      units: size of the output's last axis.
      activation: name or callable (default: none).
      use_bias, kernel_initializer ('glorot_uniform'), bias_initializer ('zeros').
      kernel_regularizer, bias_regularizer, activity_regularizer: penalties in ``layer.losses``.

    >>> mk.layers.Dense(10)(mk.ones((2, 784))).shape
    (2, 10)
    """

    supports_masking = True

    min_ndim = 2

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 **kwargs):
        super().__init__(**kwargs)
        if not isinstance(units, (int, np.integer)) or units <= 0:
            raise ValueError(f"Dense: received an invalid value for `units`, expected a positive integer. "
                             f"Received: units={units!r}")
        self.units = int(units)
        self._set_kernel_bias(activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                              bias_regularizer)

    def build(self, input_shape):
        self._build_kernel_bias((input_shape[-1], self.units))

    def _check_input(self, inputs):
        super()._check_input(inputs)
        if self.kernel is not None and inputs.shape[-1] != self.kernel.shape[0]:
            raise ValueError(
                f"Dense '{self.name}' expects input with last dimension {self.kernel.shape[0]}, received shape "
                f"{inputs.shape}")

    def call(self, inputs):
        return self._kernel_bias_output(
            matmul(inputs, self.kernel) if inputs.ndim == 2 else _dot_last_axis(inputs, self.kernel))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def get_config(self):
        return {**super().get_config(), "units": self.units, **self._kernel_bias_config()}


def _dot_last_axis(inputs, kernel):
    flat = reshape(inputs, (-1, inputs.shape[-1]))
    return reshape(matmul(flat, kernel), inputs.shape[:-1] + (kernel.shape[1],))


@register_builtin("minikeras.layers")
class Activation(Layer):
    """Applies an activation function (by name or callable)."""

    supports_masking = True

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "activation": activations.serialize(self.activation)}


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

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        return dropout(inputs, self.rate, noise_shape=self.noise_shape, seed=self.seed)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape, "seed": self.seed}
