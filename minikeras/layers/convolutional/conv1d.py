"""Conv1D: 1-D convolution over (batch, steps, channels), as a conv2d of height 1."""
from minikeras.layers.convolutional.conv2d import conv_output_length, normalize_tuple
from minikeras.layers.kernel_bias import KernelBiasLayer
from minikeras.ops.array import concat, reshape, split
from minikeras.ops.nn import conv2d


class Conv1D(KernelBiasLayer):
    """1-D convolution: (batch, steps, channels) -> (batch, steps', filters).

    Args:
      filters: number of output channels.
      kernel_size, strides, dilation_rate: an int (or a 1-tuple).
      padding: 'valid' (default), 'same', or 'causal' (left-padded so output t sees inputs <= t).
      groups: input channels and filters are split into this many groups, convolved apart.
      activation, use_bias, kernel_initializer ('glorot_uniform'), bias_initializer ('zeros'),
      kernel_regularizer, bias_regularizer, activity_regularizer.

    The kernel has shape ``(kernel_size, channels // groups, filters)``, as in Keras.

    >>> mk.layers.Conv1D(8, 3, padding="causal")(mk.ones((2, 10, 4))).shape
    (2, 10, 8)
    """

    input_ndim = 3

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1, groups=1,
                 activation=None, use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(filters, bool) or not isinstance(filters, int) or filters <= 0:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. "
                             f"Received filters={filters}.")
        if data_format not in (None, "channels_last"):
            raise ValueError(f"Conv1D supports data_format='channels_last' only, received {data_format!r}")
        padding = str(padding).lower()
        if padding not in ("valid", "same", "causal"):
            raise ValueError(f"The `padding` argument must be a list/tuple or one of {{'same', 'causal', 'valid'}}. "
                             f"Received: {padding}")
        if not isinstance(groups, int) or groups <= 0 or filters % groups:
            raise ValueError(f"The number of filters must be evenly divisible by the number of groups. Received: "
                             f"groups={groups}, filters={filters}.")
        self.filters, self.groups, self.padding = filters, groups, padding
        self.kernel_size = normalize_tuple(kernel_size, 1, "kernel_size", "Conv1D")
        self.strides = normalize_tuple(strides, 1, "strides", "Conv1D")
        self.dilation_rate = normalize_tuple(dilation_rate, 1, "dilation_rate", "Conv1D")
        if self.strides[0] > 1 and self.dilation_rate[0] > 1:
            raise ValueError(f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                             f"strides={self.strides} and dilation_rate={self.dilation_rate}")
        self._set_kernel_bias(activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                              bias_regularizer)

    def build(self, input_shape):
        channels = input_shape[-1]
        if channels % self.groups:
            raise ValueError(f"The number of input channels must be evenly divisible by the number of groups. "
                             f"Received groups={self.groups}, but the input has {channels} channels (full input "
                             f"shape is {tuple(input_shape)}).")
        self._build_kernel_bias(self.kernel_size + (channels // self.groups, self.filters))

    def _check_input(self, inputs):
        super()._check_input(inputs)
        if self.kernel is not None and inputs.shape[-1] != self.kernel.shape[1] * self.groups:
            raise ValueError(f"Conv1D '{self.name}' expects inputs with {self.kernel.shape[1] * self.groups} "
                             f"channels (last axis), received shape {inputs.shape}")

    def call(self, inputs):
        k, d = self.kernel_size[0], self.dilation_rate[0]
        if self.padding == "causal":
            padding = [[0, 0], [0, 0], [(k - 1) * d, 0], [0, 0]]
        else:
            padding = self.padding.upper()
        x = reshape(inputs, (inputs.shape[0], 1) + inputs.shape[1:])
        kernel = reshape(self.kernel, (1,) + self.kernel.shape)
        xs = split(x, self.groups, axis=3) if self.groups > 1 else [x]
        ks = split(kernel, self.groups, axis=3) if self.groups > 1 else [kernel]
        ys = [conv2d(xg, kg, strides=(1, self.strides[0]), padding=padding, dilations=(1, d))
              for xg, kg in zip(xs, ks)]
        y = concat(ys, axis=3) if len(ys) > 1 else ys[0]
        return self._kernel_bias_output(reshape(y, (y.shape[0],) + y.shape[2:]))

    def compute_output_shape(self, input_shape):
        n = input_shape[1]
        if self.padding == "causal":
            n = None if n is None else n + (self.kernel_size[0] - 1) * self.dilation_rate[0]
        steps = conv_output_length(n, self.kernel_size[0], self.strides[0],
                                   "valid" if self.padding == "causal" else self.padding, self.dilation_rate[0])
        return (input_shape[0], steps, self.filters)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding, "data_format": "channels_last",
                "dilation_rate": self.dilation_rate, "groups": self.groups, **self._kernel_bias_config()}
