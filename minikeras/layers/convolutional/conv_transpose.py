"""Conv2DTranspose: the transpose of a 2-D convolution (upsampling by ``strides``), channels_last."""
from minikeras.layers.convolutional.conv2d import normalize_padding, normalize_tuple
from minikeras.layers.kernel_bias import KernelBiasLayer
from minikeras.ops.nn import conv2d_transpose


def transpose_padding(kernel, stride, dilation, padding, output_padding):
    """Keras 3's (left, right) padding of the stride-dilated input (as ``jax.lax.conv_transpose``
    takes it) along one axis; the output length is ``(n - 1) * stride + left + right - k + 2``
    with ``k`` the dilated kernel size."""
    kernel = (kernel - 1) * dilation + 1
    if padding == "valid":
        output_padding = max(kernel, stride) - kernel if output_padding is None else output_padding
        return kernel - 1, kernel - 1 + output_padding
    total = stride + kernel - 2 if output_padding is None else kernel + kernel % 2 - 2 + output_padding
    left = min(total // 2 + total % 2, kernel - 1)
    return left, total - left


class Conv2DTranspose(KernelBiasLayer):
    """Transposed 2-D convolution: (batch, h, w, channels) -> (batch, h', w', filters), with
    ``h' = h * stride`` for 'same' padding and ``(h - 1) * stride + max(kernel, stride)`` for 'valid'
    (without ``output_padding``).

    Args:
      filters: number of output channels.
      kernel_size, strides, dilation_rate: an int or a pair; padding: 'valid' (default) or 'same'.
      output_padding: an int or a pair (each < the stride) added to the output's bottom/right; None
        picks the lengths above.
      activation, use_bias, kernel_initializer ('glorot_uniform'), bias_initializer ('zeros'),
      kernel_regularizer, bias_regularizer, activity_regularizer: as in Conv2D.

    The kernel has shape ``kernel_size + (filters, input_channels)``, as in Keras.

    >>> mk.layers.Conv2DTranspose(8, 3, strides=2, padding="same")(mk.ones((1, 7, 7, 4))).shape
    (1, 14, 14, 8)
    """

    input_ndim = 4

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", output_padding=None, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        if isinstance(filters, bool) or not isinstance(filters, int) or filters <= 0:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. "
                             f"Received filters={filters}.")
        if data_format not in (None, "channels_last"):
            raise ValueError(f"{name} supports data_format='channels_last' only, received {data_format!r}")
        self.filters = filters
        self.kernel_size = normalize_tuple(kernel_size, 2, "kernel_size", name)
        self.strides = normalize_tuple(strides, 2, "strides", name)
        self.padding = normalize_padding(padding, name)
        self.dilation_rate = normalize_tuple(dilation_rate, 2, "dilation_rate", name)
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                             f"strides={self.strides} and dilation_rate={self.dilation_rate}")
        self.output_padding = None if output_padding is None else normalize_tuple(output_padding, 2,
                                                                                    "output_padding", name)
        if self.output_padding is not None:
            for axis, (p, s) in enumerate(zip(self.output_padding, self.strides)):
                if p >= s:
                    raise ValueError(f"`output_padding` must be strictly less than `strides` for all dimensions. "
                                     f"At dimension {axis}, `output_padding` is {p} but `strides` is {s}. Received: "
                                     f"output_padding={self.output_padding}, strides={self.strides}")
        self._set_kernel_bias(activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                              bias_regularizer)

    def build(self, input_shape):
        self._build_kernel_bias(self.kernel_size + (self.filters, input_shape[-1]), bias_axis=-2)

    def _check_input(self, inputs):
        super()._check_input(inputs)
        if self.kernel is not None and inputs.shape[-1] != self.kernel.shape[3]:
            raise ValueError(f"{type(self).__name__} '{self.name}' expects inputs with {self.kernel.shape[3]} "
                             f"channels (last axis), received shape {inputs.shape}")

    def _geometry(self, spatial):
        """The output's spatial shape and the conv2d padding whose input gradient this layer is."""
        out, pads = [], []
        for i, n in enumerate(spatial):
            k, s, d = self.kernel_size[i], self.strides[i], self.dilation_rate[i]
            op = None if self.output_padding is None else self.output_padding[i]
            left, right = transpose_padding(k, s, d, self.padding, op)
            effective = (k - 1) * d + 1
            out.append(None if n is None else (n - 1) * s + left + right - effective + 2)
            pads.append((effective - 1 - left, max(0, effective - 1 - right)))
        return tuple(out), pads

    def call(self, inputs):
        (rows, cols), pads = self._geometry(inputs.shape[1:3])
        outputs = conv2d_transpose(inputs, self.kernel, (inputs.shape[0], rows, cols, self.filters),
                                   strides=self.strides, padding=[[0, 0], *pads, [0, 0]],
                                   dilations=self.dilation_rate)
        return self._kernel_bias_output(outputs)

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + self._geometry(input_shape[1:3])[0] + (self.filters,)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding, "output_padding": self.output_padding,
                "data_format": "channels_last", "dilation_rate": self.dilation_rate, **self._kernel_bias_config()}
