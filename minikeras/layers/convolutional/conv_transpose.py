"""Transposed convolutions (upsampling by ``strides``): Conv1DTranspose, Conv2DTranspose, Conv3DTranspose."""
from minikeras.layers.convolutional import conv_args as ca
from minikeras.layers.kernel_bias import KernelBiasLayer
from minikeras.ops.nn import conv2d_transpose
from minikeras.ops.nn_conv_general import conv_nd_transpose
from minikeras.ops.reshape import reshape


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


class BaseConvTranspose(KernelBiasLayer):
    """Transposed convolution over ``rank`` spatial axes: (batch, *spatial, channels) ->
    (batch, *spatial', filters), with ``n' = n * stride`` for 'same' padding and
    ``(n - 1) * stride + max(kernel, stride)`` for 'valid' (without ``output_padding``).

    Args:
      filters: number of output channels.
      kernel_size, strides, dilation_rate: an int or ``rank`` ints; padding: 'valid' (default) or 'same'.
      output_padding: an int or ``rank`` ints (each < the stride) added to the output's end; None
        picks the lengths above.
      data_format: 'channels_last' or 'channels_first'.
      activation, use_bias, kernel_initializer ('glorot_uniform'), bias_initializer ('zeros'),
      kernel_regularizer, bias_regularizer, activity_regularizer: as in the convolutions.

    The kernel has shape ``kernel_size + (filters, input_channels)``, as in Keras.
    """

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", output_padding=None,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.rank = rank
        self.input_ndim = rank + 2
        self.filters = ca.positive(filters, "filters")
        self.kernel_size = ca.standardize_tuple(kernel_size, rank, "kernel_size")
        self.strides = ca.standardize_tuple(strides, rank, "strides")
        self.dilation_rate = ca.standardize_tuple(dilation_rate, rank, "dilation_rate")
        self.padding = ca.standardize_padding(padding)
        self.output_padding = (None if output_padding is None else
                               ca.standardize_tuple(output_padding, rank, "output_padding", allow_zero=True))
        self.data_format = ca.standardize_data_format(data_format)
        if self.output_padding is not None:
            for axis, (p, s) in enumerate(zip(self.output_padding, self.strides)):
                if p >= s:
                    raise ValueError(f"`output_padding` must be strictly less than `strides` for all dimensions. "
                                     f"At dimension {axis}, `output_padding` is {p} but `strides` is {s}. Received: "
                                     f"output_padding={self.output_padding}, strides={self.strides}")
        ca.check_strides_dilation(self.strides, self.dilation_rate)
        self._set_kernel_bias(activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                              bias_regularizer, kernel_constraint, bias_constraint)

    def build(self, input_shape):
        channels = ca.channels_of(input_shape, self.data_format)
        self._build_kernel_bias(self.kernel_size + (self.filters, channels), bias_axis=-2)

    def _check_input(self, inputs):
        super()._check_input(inputs)
        if self.kernel is not None and inputs.ndim == self.rank + 2:
            if ca.channels_of(inputs.shape, self.data_format) != self.kernel.shape[-1]:
                raise ValueError(f"{type(self).__name__} '{self.name}' expects inputs with {self.kernel.shape[-1]} "
                                 f"channels, received shape {inputs.shape}")

    def _geometry(self, spatial):
        """The output's spatial shape and the convolution padding whose input gradient this layer is."""
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
        x = ca.to_channels_last(inputs, self.data_format)
        kernel, strides, dilations = self.kernel, self.strides, self.dilation_rate
        spatial, pads = self._geometry(x.shape[1:-1])
        if self.rank == 1:  # a 1-D transposed convolution is a 2-D one of height 1
            x = reshape(x, (x.shape[0], 1) + tuple(x.shape[1:]))
            kernel = reshape(kernel, (1,) + tuple(kernel.shape))
            strides, dilations = (1,) + strides, (1,) + dilations
            spatial, pads = (1,) + spatial, [(0, 0)] + pads
        if x.ndim == 4:
            y = conv2d_transpose(x, kernel, (x.shape[0],) + spatial + (self.filters,), strides=strides,
                                 padding=[[0, 0], *pads, [0, 0]], dilations=dilations)
        else:
            y = conv_nd_transpose(x, kernel, spatial, strides=strides, padding=tuple(pads), dilations=dilations)
        y = self._kernel_bias_output(y)
        if self.rank == 1:
            y = reshape(y, (y.shape[0],) + tuple(y.shape[2:]))
        return ca.from_channels_last(y, self.data_format)

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        if self.data_format == "channels_last":
            return (input_shape[0],) + self._geometry(input_shape[1:-1])[0] + (self.filters,)
        return (input_shape[0], self.filters) + self._geometry(input_shape[2:])[0]

    def get_config(self):
        config = {**super().get_config(), "filters": self.filters, "kernel_size": self.kernel_size,
                  "strides": self.strides, "padding": self.padding, "output_padding": self.output_padding,
                  "data_format": self.data_format, "dilation_rate": self.dilation_rate, **self._kernel_bias_config()}
        config.setdefault("activity_regularizer", None)
        return config


def _transpose_class(rank, name, default):
    def __init__(self, filters, kernel_size, strides=default, padding="valid", output_padding=None, data_format=None,
                 dilation_rate=default, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        BaseConvTranspose.__init__(
            self, rank, filters, kernel_size, strides=strides, padding=padding, output_padding=output_padding,
            data_format=data_format, dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
            kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
            activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
            bias_constraint=bias_constraint, **kwargs)
    doc = (f"Transposed {rank}-D convolution (Keras 3's ``{name}``): see ``BaseConvTranspose``.\n\n"
           f"    >>> mk.layers.{name}(8, 3, strides=2, padding='same')(mk.ones((1,) + (5,) * {rank} + (4,))).shape\n"
           f"    {(1,) + (10,) * rank + (8,)}\n")
    return type(name, (BaseConvTranspose,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


Conv1DTranspose = _transpose_class(1, "Conv1DTranspose", 1)
Conv2DTranspose = _transpose_class(2, "Conv2DTranspose", (1, 1))
Conv3DTranspose = _transpose_class(3, "Conv3DTranspose", (1, 1, 1))
