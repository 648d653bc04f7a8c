"""Separable convolutions: SeparableConv1D, SeparableConv2D (a depthwise convolution, then a 1x1 one)."""
from minikeras import activations, constraints, initializers, regularizers
from minikeras.layers.base import Layer
from minikeras.layers.convolutional import conv_args as ca
from minikeras.ops.nn_conv_general import conv_nd, depthwise_conv_nd


class BaseSeparableConv(Layer):
    """A depthwise convolution (``depth_multiplier`` filters per input channel) followed by a
    pointwise (1x1) convolution to ``filters`` channels, plus a bias and an activation.

    Args:
      depth_multiplier, filters, kernel_size, strides, padding ('valid' or 'same'), data_format,
      dilation_rate, activation, use_bias: as Keras 3's.
      depthwise_initializer, pointwise_initializer ('glorot_uniform'), bias_initializer ('zeros'),
      depthwise_regularizer, pointwise_regularizer, bias_regularizer, activity_regularizer.

    The weights are ``depthwise_kernel`` (``kernel_size + (channels, depth_multiplier)``),
    ``pointwise_kernel`` (``(1,) * rank + (channels * depth_multiplier, filters)``) and ``bias``.
    """

    def __init__(self, rank, depth_multiplier, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 pointwise_initializer="glorot_uniform", bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.rank = rank
        self.input_ndim = rank + 2
        self.depth_multiplier = ca.positive(depth_multiplier, "depth_multiplier")
        self.filters = ca.positive(filters, "filters")
        self.kernel_size = ca.standardize_tuple(kernel_size, rank, "kernel_size")
        self.strides = ca.standardize_tuple(strides, rank, "strides")
        self.dilation_rate = ca.standardize_tuple(dilation_rate, rank, "dilation_rate")
        self.padding = ca.standardize_padding(padding)
        self.data_format = ca.standardize_data_format(data_format)
        ca.check_strides_dilation(self.strides, self.dilation_rate)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)
        self.pointwise_constraint = constraints.get(pointwise_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.depthwise_kernel = self.pointwise_kernel = self.bias = None

    def build(self, input_shape):
        channels = ca.channels_of(input_shape, self.data_format)
        self.compute_output_shape(input_shape)
        self.depthwise_kernel = self.add_weight("depthwise_kernel",
                                                self.kernel_size + (channels, self.depth_multiplier),
                                                self.depthwise_initializer, regularizer=self.depthwise_regularizer,
                                                constraint=self.depthwise_constraint)
        self.pointwise_kernel = self.add_weight("pointwise_kernel",
                                                (1,) * self.rank + (channels * self.depth_multiplier, self.filters),
                                                self.pointwise_initializer, regularizer=self.pointwise_regularizer,
                                                constraint=self.pointwise_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def _check_input(self, inputs):
        super()._check_input(inputs)
        if self.depthwise_kernel is not None and inputs.ndim == self.rank + 2:
            if ca.channels_of(inputs.shape, self.data_format) != self.depthwise_kernel.shape[-2]:
                raise ValueError(f"{type(self).__name__} '{self.name}' expects inputs with "
                                 f"{self.depthwise_kernel.shape[-2]} channels, received shape {inputs.shape}")

    def call(self, inputs):
        x = ca.to_channels_last(inputs, self.data_format)
        y = depthwise_conv_nd(x, self.depthwise_kernel, self.strides, self.padding.upper(), self.dilation_rate)
        y = conv_nd(y, self.pointwise_kernel)
        if self.use_bias:
            y = y + self.bias
        return ca.from_channels_last(self.activation(y), self.data_format)

    def compute_output_shape(self, input_shape):
        return ca.conv_output_shape(input_shape, self.filters, self.kernel_size, self.strides, self.padding,
                                    self.data_format, self.dilation_rate)

    def get_config(self):
        return {**super().get_config(), "depth_multiplier": self.depth_multiplier, "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides, "padding": self.padding,
                "data_format": self.data_format, "dilation_rate": self.dilation_rate,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
                "depthwise_initializer": initializers.serialize(self.depthwise_initializer),
                "pointwise_initializer": initializers.serialize(self.pointwise_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "depthwise_regularizer": regularizers.serialize(self.depthwise_regularizer),
                "pointwise_regularizer": regularizers.serialize(self.pointwise_regularizer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "activity_regularizer": regularizers.serialize(self.activity_regularizer),
                "depthwise_constraint": constraints.serialize(self.depthwise_constraint),
                "pointwise_constraint": constraints.serialize(self.pointwise_constraint),
                "bias_constraint": constraints.serialize(self.bias_constraint)}


class SeparableConv1D(BaseSeparableConv):
    """Separable 1-D convolution (see ``BaseSeparableConv``).

    >>> mk.layers.SeparableConv1D(6, 3, depth_multiplier=2)(mk.ones((1, 8, 4))).shape
    (1, 6, 6)
    """

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 depth_multiplier=1, activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 pointwise_initializer="glorot_uniform", bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(1, depth_multiplier, filters, kernel_size, strides, padding, data_format, dilation_rate,
                         activation, use_bias, depthwise_initializer, pointwise_initializer, bias_initializer,
                         depthwise_regularizer, pointwise_regularizer, bias_regularizer, activity_regularizer,
                         depthwise_constraint, pointwise_constraint, bias_constraint, **kwargs)


class SeparableConv2D(BaseSeparableConv):
    """Separable 2-D convolution (see ``BaseSeparableConv``), Xception's building block.

    >>> mk.layers.SeparableConv2D(6, 3, padding="same")(mk.ones((1, 8, 8, 4))).shape
    (1, 8, 8, 6)
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, pointwise_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(2, depth_multiplier, filters, kernel_size, strides, padding, data_format, dilation_rate,
                         activation, use_bias, depthwise_initializer, pointwise_initializer, bias_initializer,
                         depthwise_regularizer, pointwise_regularizer, bias_regularizer, activity_regularizer,
                         depthwise_constraint, pointwise_constraint, bias_constraint, **kwargs)
