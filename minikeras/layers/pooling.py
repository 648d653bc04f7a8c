"""Max and average pooling over channels_last images, and their global variants."""
from minikeras.layers.base import Layer
from minikeras.layers.conv import normalize_padding, normalize_tuple
from minikeras.ops.reduce import reduce_max, reduce_mean


class _Pooling2D(Layer):
    input_ndim = 4
    _kind = None

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"{type(self).__name__} supports data_format='channels_last' only, received {data_format!r}")
        self.pool_size = normalize_tuple(pool_size, 2, "pool_size", type(self).__name__)
        self.strides = self.pool_size if strides is None else normalize_tuple(strides, 2, "strides", type(self).__name__)
        self.padding = normalize_padding(padding, type(self).__name__)

    def call(self, inputs):
        from minikeras.ops import nn
        pool = nn.max_pool2d if self._kind == "max" else nn.avg_pool2d
        return pool(inputs, ksize=self.pool_size, strides=self.strides, padding=self.padding.upper())

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "strides": self.strides, "padding": self.padding}


class MaxPooling2D(_Pooling2D):
    """The maximum of each ``pool_size`` window (default 2x2, strides = pool_size)."""

    _kind = "max"


class AveragePooling2D(_Pooling2D):
    """The mean of each ``pool_size`` window (for 'same' padding, over the valid values only)."""

    _kind = "avg"


class GlobalAveragePooling2D(Layer):
    """The mean over height and width: (batch, h, w, c) -> (batch, c)."""

    input_ndim = 4

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.keepdims = keepdims

    def call(self, inputs):
        return reduce_mean(inputs, axis=(1, 2), keepdims=self.keepdims)


class GlobalMaxPooling2D(Layer):
    """The maximum over height and width: (batch, h, w, c) -> (batch, c)."""

    input_ndim = 4

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.keepdims = keepdims

    def call(self, inputs):
        return reduce_max(inputs, axis=(1, 2), keepdims=self.keepdims)


MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D
