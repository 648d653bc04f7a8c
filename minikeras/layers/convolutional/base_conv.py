"""BaseConv: Keras 3's N-D convolution layer (Conv1D, Conv2D, Conv3D), any data_format, groups, dilation."""
from minikeras.layers.convolutional import conv_args as ca
from minikeras.layers.kernel_bias import KernelBiasLayer
from minikeras.layers.lora import LoRAMixin, LoRAWeight
from minikeras.ops.fused import conv2d_bias_activation
from minikeras.ops.nn_conv_general import conv_nd, depthwise_conv_nd
from minikeras.ops.reshape import reshape


class BaseConv(LoRAMixin, KernelBiasLayer):
    """``activation(conv(inputs, kernel) + bias)`` over ``rank`` spatial axes, as Keras 3's ``BaseConv``.

    Args:
      rank: 1, 2 or 3 spatial axes.
      filters: the number of output channels.
      kernel_size, strides, dilation_rate: an int or ``rank`` ints (strides > 1 with
        dilation_rate > 1 is refused, as Keras does).
      padding: 'valid', 'same', or for rank 1 'causal' (output t sees inputs <= t).
      data_format: 'channels_last' (batch, *spatial, channels) or 'channels_first'
        (batch, channels, *spatial); None: ``backend.image_data_format()``.
      groups: input channels and filters split into this many groups, convolved apart.
      activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
      bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint: as Keras's.
      lora_rank, lora_alpha: LoRA enabled at build (``minikeras.layers.lora``).

    The kernel has shape ``kernel_size + (channels // groups, filters)`` and the bias
    ``(filters,)``, named ``kernel`` and ``bias``, as in Keras (weights files go both ways).
    """

    kernel = LoRAWeight("kernel")

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, lora_rank=None, lora_alpha=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.rank = rank
        self.input_ndim = rank + 2
        self.filters = ca.positive(filters, "filters")
        if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
            raise ValueError(f"The number of groups must be a positive integer. Received: groups={groups}.")
        if filters % groups:
            raise ValueError(f"The number of filters must be evenly divisible by the number of groups. Received: "
                             f"groups={groups}, filters={filters}.")
        self.groups = groups
        self.kernel_size = ca.standardize_tuple(kernel_size, rank, "kernel_size")
        self.strides = ca.standardize_tuple(strides, rank, "strides")
        self.dilation_rate = ca.standardize_tuple(dilation_rate, rank, "dilation_rate")
        self.padding = ca.standardize_padding(padding, allow_causal=rank == 1)
        self.data_format = ca.standardize_data_format(data_format)
        ca.check_strides_dilation(self.strides, self.dilation_rate)
        self._set_kernel_bias(activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                              bias_regularizer, kernel_constraint, bias_constraint)
        self._set_lora(lora_rank, lora_alpha)

    def build(self, input_shape):
        channels = ca.channels_of(input_shape, self.data_format)
        if channels % self.groups:
            raise ValueError(f"The number of input channels must be evenly divisible by the number of groups. "
                             f"Received groups={self.groups}, but the input has {channels} channels (full input "
                             f"shape is {tuple(input_shape)}).")
        self.compute_output_shape(input_shape)
        self._build_kernel_bias(self.kernel_size + (channels // self.groups, self.filters))
        self._build_lora()

    def _check_input(self, inputs):
        super()._check_input(inputs)
        if self.kernel is not None and inputs.ndim == self.rank + 2:
            expected = self.kernel.shape[-2] * self.groups
            if ca.channels_of(inputs.shape, self.data_format) != expected:
                axis = -1 if self.data_format == "channels_last" else 1
                raise ValueError(f"{type(self).__name__} '{self.name}' expects inputs with {expected} channels "
                                 f"(axis {axis}), received shape {inputs.shape}")

    def _padding(self):
        if self.padding == "causal":
            return (((self.kernel_size[0] - 1) * self.dilation_rate[0], 0),)
        return self.padding.upper()

    def call(self, inputs):
        if type(self).convolution_op is not BaseConv.convolution_op:  # a subclass's own convolution
            y = self.convolution_op(inputs, self.kernel)
            if self.use_bias:
                channels_first = self.data_format == "channels_first"
                y = y + (reshape(self.bias, (self.filters,) + (1,) * self.rank) if channels_first else self.bias)
            return self.activation(y)
        return self._convolve(inputs, self.kernel, self.bias if self.use_bias else None, self.activation)

    def convolution_op(self, inputs, kernel):
        """Keras 3's hook: ``inputs`` convolved with ``kernel`` in the layer's strides, padding,
        dilation, groups and data_format, without bias or activation. A subclass overrides it
        to change the convolution (a standardized kernel, say); ``call`` then adds the bias and
        applies the activation. A subclass's own ``call`` may call it with any kernel."""
        return self._convolve(inputs, kernel, None, None)

    def _convolve(self, inputs, kernel, bias, activation):
        """``activation(conv(inputs, kernel) + bias)``; None for ``bias``/``activation`` leaves it out."""
        activation = activation if activation is not None else (lambda t: t)
        x = ca.to_channels_last(inputs, self.data_format)
        if self.rank == 1:  # a 1-D convolution is a 2-D one of height 1
            x = reshape(x, (x.shape[0], 1) + tuple(x.shape[1:]))
            kernel = reshape(kernel, (1,) + tuple(kernel.shape))
            strides, dilations = (1,) + self.strides, (1,) + self.dilation_rate
            padding = self._padding()
            padding = ((0, 0),) + padding if isinstance(padding, tuple) else padding
        else:
            strides, dilations, padding = self.strides, self.dilation_rate, self._padding()
        if x.ndim == 4 and self.groups == 1:
            explicit = [[0, 0], *map(list, padding), [0, 0]] if isinstance(padding, tuple) else padding
            y = conv2d_bias_activation(x, kernel, bias, activation, strides=strides, padding=explicit,
                                       dilations=dilations)
        elif self.groups > 1 and kernel.shape[-2] == 1:
            # one input channel per group (ConvNeXt's 7x7 "depthwise" Conv2D) is a depthwise
            # convolution, output channel c * m + j from channel c: the depthwise kernel is the same
            # numbers, and XLA:CPU's grouped convolution runs an order of magnitude slower
            depthwise_kernel = reshape(kernel, tuple(kernel.shape[:-2]) + (self.groups, self.filters // self.groups))
            y = depthwise_conv_nd(x, depthwise_kernel, strides, padding, dilations)
            y = activation(y + bias if bias is not None else y)
        else:
            y = conv_nd(x, kernel, strides, padding, dilations, self.groups)
            y = activation(y + bias if bias is not None else y)
        if self.rank == 1:
            y = reshape(y, (y.shape[0],) + tuple(y.shape[2:]))
        return ca.from_channels_last(y, self.data_format)

    def compute_output_shape(self, input_shape):
        padding = "valid" if self.padding == "causal" else self.padding
        shape = list(input_shape)
        if self.padding == "causal" and shape[1 if self.data_format == "channels_last" else 2] is not None:
            axis = 1 if self.data_format == "channels_last" else 2
            shape[axis] += (self.kernel_size[0] - 1) * self.dilation_rate[0]
        return ca.conv_output_shape(shape, self.filters, self.kernel_size, self.strides, padding, self.data_format,
                                    self.dilation_rate)

    def get_config(self):
        config = {**super().get_config(), "filters": self.filters, "kernel_size": self.kernel_size,
                  "strides": self.strides, "padding": self.padding, "data_format": self.data_format,
                  "dilation_rate": self.dilation_rate, "groups": self.groups, **self._kernel_bias_config(),
                  **self._lora_config()}
        config.setdefault("activity_regularizer", None)
        return config
