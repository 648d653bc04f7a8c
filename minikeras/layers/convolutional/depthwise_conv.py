"""Depthwise convolutions: DepthwiseConv1D, DepthwiseConv2D (each channel convolved with its own filters)."""
from minikeras import constraints, initializers, regularizers
from minikeras.layers.convolutional import conv_args as ca
from minikeras.layers.kernel_bias import KernelBiasLayer
from minikeras.ops.nn_conv_general import depthwise_conv_nd


class BaseDepthwiseConv(KernelBiasLayer):
    """Each input channel convolved with ``depth_multiplier`` filters of its own: (batch, *spatial,
    channels) -> (batch, *spatial', channels * depth_multiplier); output channel ``c * depth_multiplier + m``.

    Args:
      depth_multiplier: filters per input channel.
      kernel_size, strides, dilation_rate: an int or ``rank`` ints; padding: 'valid' or 'same'.
      data_format: 'channels_last' or 'channels_first'.
      activation, use_bias, depthwise_initializer ('glorot_uniform'), bias_initializer ('zeros'),
      depthwise_regularizer, bias_regularizer, activity_regularizer.

    The weights are ``kernel`` of shape ``kernel_size + (channels, depth_multiplier)`` and ``bias``
    of shape ``(channels * depth_multiplier,)``, as Keras names them.
    """

    def __init__(self, rank, depth_multiplier, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.rank = rank
        self.input_ndim = rank + 2
        self.depth_multiplier = ca.positive(depth_multiplier, "depth_multiplier")
        self.kernel_size = ca.standardize_tuple(kernel_size, rank, "kernel_size")
        self.strides = ca.standardize_tuple(strides, rank, "strides")
        self.dilation_rate = ca.standardize_tuple(dilation_rate, rank, "dilation_rate")
        self.padding = ca.standardize_padding(padding)
        self.data_format = ca.standardize_data_format(data_format)
        ca.check_strides_dilation(self.strides, self.dilation_rate)
        self._set_kernel_bias(activation, use_bias, depthwise_initializer, bias_initializer, depthwise_regularizer,
                              bias_regularizer, depthwise_constraint, bias_constraint)

    def build(self, input_shape):
        channels = ca.channels_of(input_shape, self.data_format)
        self.compute_output_shape(input_shape)
        self.kernel = self.add_weight("kernel", self.kernel_size + (channels, self.depth_multiplier),
                                      self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", (channels * self.depth_multiplier,), self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def _check_input(self, inputs):
        super()._check_input(inputs)
        if self.kernel is not None and inputs.ndim == self.rank + 2:
            if ca.channels_of(inputs.shape, self.data_format) != self.kernel.shape[-2]:
                raise ValueError(f"{type(self).__name__} '{self.name}' expects inputs with {self.kernel.shape[-2]} "
                                 f"channels, received shape {inputs.shape}")

    def call(self, inputs):
        x = ca.to_channels_last(inputs, self.data_format)
        y = depthwise_conv_nd(x, self.kernel, self.strides, self.padding.upper(), self.dilation_rate)
        return ca.from_channels_last(self._kernel_bias_output(y), self.data_format)

    def compute_output_shape(self, input_shape):
        channels = ca.channels_of(input_shape, self.data_format)
        return ca.conv_output_shape(input_shape, channels * self.depth_multiplier, self.kernel_size, self.strides,
                                    self.padding, self.data_format, self.dilation_rate)

    def get_config(self):
        return {**super().get_config(), "depth_multiplier": self.depth_multiplier, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate, "activation": self._kernel_bias_config()["activation"],
                "use_bias": self.use_bias,
                "depthwise_initializer": initializers.serialize(self.kernel_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "depthwise_regularizer": regularizers.serialize(self.kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "activity_regularizer": regularizers.serialize(self.activity_regularizer),
                "depthwise_constraint": constraints.serialize(self.kernel_constraint),
                "bias_constraint": constraints.serialize(self.bias_constraint)}


class DepthwiseConv1D(BaseDepthwiseConv):
    """Depthwise 1-D convolution (see ``BaseDepthwiseConv``).

    >>> mk.layers.DepthwiseConv1D(3, depth_multiplier=2)(mk.ones((1, 8, 4))).shape
    (1, 6, 8)
    """

    def __init__(self, kernel_size, strides=1, padding="valid", depth_multiplier=1, data_format=None,
                 dilation_rate=1, activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(1, depth_multiplier, kernel_size, strides, padding, data_format, dilation_rate, activation,
                         use_bias, depthwise_initializer, bias_initializer, depthwise_regularizer, bias_regularizer,
                         activity_regularizer, depthwise_constraint, bias_constraint, **kwargs)


class DepthwiseConv2D(BaseDepthwiseConv):
    """Depthwise 2-D convolution (see ``BaseDepthwiseConv``), MobileNet's building block.

    >>> mk.layers.DepthwiseConv2D(3, padding="same")(mk.ones((1, 8, 8, 4))).shape
    (1, 8, 8, 4)
    """

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(2, depth_multiplier, kernel_size, strides, padding, data_format, dilation_rate, activation,
                         use_bias, depthwise_initializer, bias_initializer, depthwise_regularizer, bias_regularizer,
                         activity_regularizer, depthwise_constraint, bias_constraint, **kwargs)
