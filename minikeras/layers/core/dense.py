"""Dense: a densely connected layer."""
import numpy as np

from minikeras.layers.kernel_bias import KernelBiasLayer
from minikeras.layers.lora import LoRAMixin, LoRAWeight
from minikeras.ops.array import reshape
from minikeras.ops.fused import dense_bias
from minikeras.ops.linalg import matmul
from minikeras.saving.registry import register_builtin


@register_builtin("minikeras.layers")
class Dense(LoRAMixin, KernelBiasLayer):
    """``activation(inputs @ kernel + bias)`` on the last axis.

    Args:
      units: size of the output's last axis.
      activation: name or callable (default: none).
      use_bias, kernel_initializer ('glorot_uniform'), bias_initializer ('zeros').
      kernel_regularizer, bias_regularizer, activity_regularizer: penalties in ``layer.losses``.
      kernel_constraint, bias_constraint: ``keras.constraints`` applied after each optimizer update.
      lora_rank, lora_alpha: LoRA enabled at build with this rank (``minikeras.layers.lora``); as
        Keras 3's Dense, the build enables it with ``lora_alpha = lora_rank``
        (``enable_lora(rank, lora_alpha=...)`` takes another).

    >>> mk.layers.Dense(10)(mk.ones((2, 784))).shape
    (2, 10)
    """

    supports_masking = True

    min_ndim = 2
    kernel = LoRAWeight("kernel")
    _lora_alpha_at_build = False

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, lora_rank=None, lora_alpha=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(units, (int, np.integer)) or units <= 0:
            raise ValueError(f"Dense: received an invalid value for `units`, expected a positive integer. "
                             f"Received: units={units!r}")
        self.units = int(units)
        self._set_kernel_bias(activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                              bias_regularizer, kernel_constraint, bias_constraint)
        self._set_lora(lora_rank, lora_alpha)

    def build(self, input_shape):
        self._build_kernel_bias((input_shape[-1], self.units))
        self._build_lora()

    def _check_input(self, inputs):
        super()._check_input(inputs)
        if self.kernel is not None and inputs.shape[-1] != self.kernel.shape[0]:
            raise ValueError(
                f"Dense '{self.name}' expects input with last dimension {self.kernel.shape[0]}, received shape "
                f"{inputs.shape}")

    def call(self, inputs):
        kernel = self.kernel
        flat = inputs if inputs.ndim == 2 else reshape(inputs, (-1, inputs.shape[-1]))
        linear = dense_bias(flat, kernel, self.bias) if self.use_bias else None  # one op where it applies
        if linear is None:  # no bias, or operands dense_bias does not take: the product, then the bias
            return self._kernel_bias_output(_last_axis_back(matmul(flat, kernel), inputs))
        return self.activation(_last_axis_back(linear, inputs))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def get_config(self):
        return {**super().get_config(), "units": self.units, **self._kernel_bias_config(),
                **self._lora_config()}


def _last_axis_back(flat_output, inputs):
    """The (rows, units) output of flattened ``inputs`` in ``inputs``' leading shape."""
    if inputs.ndim == 2:
        return flat_output
    return reshape(flat_output, inputs.shape[:-1] + (flat_output.shape[-1],))
