"""Conv2D: 2-D convolution over channels_last images."""
import jax

from minikeras.layers.kernel_bias import KernelBiasLayer
from minikeras.ops.fused import conv2d_bias_activation
from minikeras.saving.registry import register_builtin
from minikeras.tensor import Tensor, to_array


def normalize_tuple(value, n, name, layer):
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) != n:
        raise ValueError(f"{layer}: `{name}` must be an int or a tuple of {n} ints, received {value!r}")
    return value


def conv_output_length(length, kernel, stride, padding, dilation=1):
    """The output length of a convolution or pooling window along one axis (None stays None)."""
    if length is None:
        return None
    if padding == "same":
        return -(-length // stride)
    return max(0, (length - (kernel - 1) * dilation - 1) // stride + 1)


def normalize_padding(padding, layer):
    padding = str(padding).lower()
    if padding not in ("valid", "same"):
        raise ValueError(f"{layer}: `padding` must be 'valid' or 'same', received {padding!r}")
    return padding


@register_builtin("minikeras.layers")
class Conv2D(KernelBiasLayer):
    """2-D convolution: (batch, height, width, channels) -> (batch, h', w', filters).

    Args:
      filters: number of output channels.
      kernel_size: an int or (height, width).
      strides: an int or (sh, sw); padding: 'valid' (default) or 'same'; dilation_rate likewise.
      activation, use_bias, kernel_initializer ('glorot_uniform'), bias_initializer ('zeros').
      kernel_regularizer, bias_regularizer, activity_regularizer: penalties in ``layer.losses``.
    """

    input_ndim = 4

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 **kwargs):
        super().__init__(**kwargs)
        if not isinstance(filters, int) or filters <= 0:
            raise ValueError(f"Conv2D: `filters` must be a positive integer, received filters={filters!r}")
        if data_format not in (None, "channels_last"):
            raise ValueError(f"Conv2D supports data_format='channels_last' only, received {data_format!r}")
        self.filters = filters
        self.kernel_size = normalize_tuple(kernel_size, 2, "kernel_size", "Conv2D")
        self.strides = normalize_tuple(strides, 2, "strides", "Conv2D")
        self.padding = normalize_padding(padding, "Conv2D")
        self.dilation_rate = normalize_tuple(dilation_rate, 2, "dilation_rate", "Conv2D")
        if self.strides != (1, 1) and self.dilation_rate != (1, 1):
            raise ValueError("Conv2D: strides > 1 together with dilation_rate > 1 is not supported")
        self._set_kernel_bias(activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                              bias_regularizer)

    def build(self, input_shape):
        channels = input_shape[-1]
        self._build_kernel_bias(self.kernel_size + (channels, self.filters))

    def _check_input(self, inputs):
        if isinstance(inputs, Tensor) and inputs.ndim != 4:
            # Traced for its shapes, the batch axis is a placeholder: reported as None, as Keras does.
            shape = tuple(inputs.shape)
            if isinstance(to_array(inputs), jax.core.Tracer):
                shape = (None,) + shape[1:]
            hint = (f" For one-channel images add the channel axis: x.reshape(-1, {shape[1]}, {shape[2]}, 1) (or "
                    f"x[..., None]) and give the model input_shape=({shape[1]}, {shape[2]}, 1)."
                    if inputs.ndim == 3 else "")
            raise ValueError(f"Input 0 of layer '{self.name}' is incompatible with the layer: expected ndim=4, found "
                             f"ndim={inputs.ndim}. Full shape received: {shape}. Conv2D takes (batch, height, width, "
                             f"channels).{hint}")
        super()._check_input(inputs)
        if self.kernel is not None and inputs.shape[-1] != self.kernel.shape[2]:
            raise ValueError(f"Conv2D '{self.name}' expects inputs with {self.kernel.shape[2]} channels (last axis), "
                             f"received shape {inputs.shape}")

    def call(self, inputs):
        return conv2d_bias_activation(inputs, self.kernel, self.bias if self.use_bias else None, self.activation,
                                      strides=self.strides, padding=self.padding.upper(),
                                      dilations=self.dilation_rate)

    def compute_output_shape(self, input_shape):
        rows, cols = (conv_output_length(n, k, s, self.padding, d) for n, k, s, d in
                      zip(input_shape[1:3], self.kernel_size, self.strides, self.dilation_rate))
        return (input_shape[0], rows, cols, self.filters)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding, "dilation_rate": self.dilation_rate,
                **self._kernel_bias_config()}
