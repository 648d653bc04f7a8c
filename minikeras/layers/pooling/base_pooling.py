"""BasePooling: Keras 3's max and average pooling over 1, 2 or 3 spatial axes, either data_format."""
from minikeras.layers.base import Layer
from minikeras.layers.convolutional import conv_args as ca
from minikeras.ops import nn
from minikeras.ops.array import expand_dims
from minikeras.ops.nn_pool_general import pool_nd
from minikeras.ops.reshape import reshape


def pooling_output_shape(input_shape, pool_size, strides, padding, data_format):
    """Keras's ``compute_pooling_output_shape`` (an output size <= 0 is an error)."""
    input_shape = tuple(input_shape)
    spatial = input_shape[1:-1] if data_format == "channels_last" else input_shape[2:]
    out = []
    for n, k, s in zip(spatial, pool_size, strides):
        if n is None:
            out.append(None)
        elif padding == "valid":
            size = (n - k) // s + 1
            if size <= 0:
                raise ValueError(f"Computed output size would be zero or negative. Received: "
                                 f"`inputs.shape={input_shape}`, `pool_size={list(pool_size)}`, "
                                 f"`strides={list(strides)}`, `padding={padding}`.")
            out.append(size)
        else:
            out.append((n - 1) // s + 1)
    if data_format == "channels_last":
        return (input_shape[0],) + tuple(out) + (input_shape[-1],)
    return input_shape[:2] + tuple(out)


class BasePooling(Layer):
    """The max (``pool_mode="max"``) or mean (``"average"``) of each ``pool_size`` window.

    Args:
      pool_size: an int or one per spatial axis.
      strides: likewise; None: ``pool_size``.
      pool_dimensions: 1, 2 or 3 spatial axes.
      padding: 'valid' or 'same' (average pooling then averages the in-bounds values only).
      data_format: 'channels_last' or 'channels_first'; None: ``backend.image_data_format()``.
    """

    def __init__(self, pool_size, strides, pool_dimensions, pool_mode="max", padding="valid", data_format=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.pool_size = ca.standardize_tuple(pool_size, pool_dimensions, "pool_size")
        self.strides = ca.standardize_tuple(pool_size if strides is None else strides, pool_dimensions, "strides")
        self.pool_dimensions = pool_dimensions
        self.pool_mode = pool_mode
        padding = str(padding).lower()
        if padding not in ("valid", "same"):
            raise ValueError(f"Argument `padding` must be either 'valid' or 'same'. Received: padding={padding}")
        self.padding = padding
        self.data_format = ca.standardize_data_format(data_format)
        self.input_ndim = pool_dimensions + 2
        self._build_at_init()

    def _check_input(self, inputs):
        super()._check_input(inputs)
        if inputs.ndim == self.input_ndim:
            pooling_output_shape(inputs.shape, self.pool_size, self.strides, self.padding, self.data_format)

    def call(self, inputs):
        x = ca.to_channels_last(inputs, self.data_format)
        if self.pool_dimensions <= 2:  # 1-D windows are 2-D ones of height 1, on the 2-D pooling ops
            if self.pool_dimensions == 1:
                x = expand_dims(x, 1)
            pool = nn.max_pool2d if self.pool_mode == "max" else nn.avg_pool2d
            size, strides = self.pool_size, self.strides
            if self.pool_dimensions == 1:
                size, strides = (1,) + size, (1,) + strides
            y = pool(x, ksize=size, strides=strides, padding=self.padding.upper())
            if self.pool_dimensions == 1:
                y = reshape(y, (y.shape[0],) + tuple(y.shape[2:]))
        else:
            y = pool_nd(x, self.pool_mode, self.pool_size, self.strides, self.padding.upper())
        return ca.from_channels_last(y, self.data_format)

    def compute_output_shape(self, input_shape):
        return pooling_output_shape(input_shape, self.pool_size, self.strides, self.padding, self.data_format)

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "padding": self.padding,
                "strides": self.strides, "data_format": self.data_format}
