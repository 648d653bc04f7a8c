"""Max and average pooling over channels_last images, and their global variants."""
from minikeras.layers.base import Layer
from minikeras.layers.convolutional.conv2d import conv_output_length, normalize_padding, normalize_tuple
from minikeras.ops import nn
from minikeras.ops.reduce import reduce_max, reduce_mean
from minikeras.saving.registry import register_builtin


class _Pooling2D(Layer):
    input_ndim = 4
    _kind = None

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"{type(self).__name__} supports data_format='channels_last' only, "
                             f"received {data_format!r}")
        self.pool_size = normalize_tuple(pool_size, 2, "pool_size", type(self).__name__)
        self.strides = (self.pool_size if strides is None
                        else normalize_tuple(strides, 2, "strides", type(self).__name__))
        self.padding = normalize_padding(padding, type(self).__name__)

    def call(self, inputs):
        pool = nn.max_pool2d if self._kind == "max" else nn.avg_pool2d
        return pool(inputs, ksize=self.pool_size, strides=self.strides, padding=self.padding.upper())

    def compute_output_shape(self, input_shape):
        rows, cols = (conv_output_length(n, k, s, self.padding) for n, k, s in
                      zip(input_shape[1:3], self.pool_size, self.strides))
        return (input_shape[0], rows, cols, input_shape[3])

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "strides": self.strides, "padding": self.padding}


@register_builtin("minikeras.layers")
class MaxPooling2D(_Pooling2D):
    """The maximum of each ``pool_size`` window (default 2x2, strides = pool_size)."""

    _kind = "max"


@register_builtin("minikeras.layers")
class AveragePooling2D(_Pooling2D):
    """The mean of each ``pool_size`` window (for 'same' padding, over the valid values only)."""

    _kind = "avg"


class _GlobalPooling2D(Layer):
    input_ndim = 4
    _reduce = None

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"{type(self).__name__} supports data_format='channels_last' only, "
                             f"received {data_format!r}")
        self.keepdims = bool(keepdims)

    def call(self, inputs):
        return type(self)._reduce(inputs, axis=(1, 2), keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        if self.keepdims:
            return (input_shape[0], 1, 1, input_shape[3])
        return (input_shape[0], input_shape[3])

    def get_config(self):
        return {**super().get_config(), "keepdims": self.keepdims}


@register_builtin("minikeras.layers")
class GlobalAveragePooling2D(_GlobalPooling2D):
    """The mean over height and width: (batch, h, w, c) -> (batch, c) (or (batch, 1, 1, c) with keepdims)."""

    _reduce = staticmethod(reduce_mean)


@register_builtin("minikeras.layers")
class GlobalMaxPooling2D(_GlobalPooling2D):
    """The maximum over height and width: (batch, h, w, c) -> (batch, c) (or (batch, 1, 1, c) with keepdims)."""

    _reduce = staticmethod(reduce_max)


MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D
