"""Conv3D: 3-D convolution over volumes (batch, depth, height, width, channels) (or channels_first)."""
from minikeras.layers.convolutional.base_conv import BaseConv


class Conv3D(BaseConv):
    """3-D convolution: (batch, d, h, w, channels) -> (batch, d', h', w', filters).

    Args:
      filters: number of output channels.
      kernel_size, strides, dilation_rate: an int or 3 ints; padding: 'valid' (default) or 'same'.
      data_format: 'channels_last' or 'channels_first' ((batch, channels, d, h, w)).
      groups: input channels and filters are split into this many groups, convolved apart.
      activation, use_bias, kernel_initializer ('glorot_uniform'), bias_initializer ('zeros'),
      kernel_regularizer, bias_regularizer, activity_regularizer.

    The kernel has shape ``kernel_size + (channels // groups, filters)``, as in Keras.

    >>> mk.layers.Conv3D(8, 3, padding="same")(mk.ones((1, 4, 5, 6, 2))).shape
    (1, 4, 5, 6, 8)
    """

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1, 1), groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(3, filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, groups=groups, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                         bias_constraint=bias_constraint, **kwargs)
