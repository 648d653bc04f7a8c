"""Pooling over the steps of (batch, steps, channels): MaxPooling1D, AveragePooling1D,
GlobalAveragePooling1D (1-D windows are 2-D windows of height 1)."""
from minikeras.layers.base import Layer
from minikeras.layers.convolutional.conv2d import conv_output_length, normalize_padding, normalize_tuple
from minikeras.ops import nn
from minikeras.ops.array import expand_dims, reshape
from minikeras.ops.creation import zeros_like
from minikeras.ops.math import cast, where
from minikeras.ops.reduce import reduce_max, reduce_mean, reduce_sum


class _Pooling1D(Layer):
    input_ndim = 3
    _kind = None

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        if data_format not in (None, "channels_last"):
            raise ValueError(f"{name} supports data_format='channels_last' only, received {data_format!r}")
        self.pool_size = normalize_tuple(pool_size, 1, "pool_size", name)
        self.strides = self.pool_size if strides is None else normalize_tuple(strides, 1, "strides", name)
        if min(self.pool_size + self.strides) <= 0:
            raise ValueError(f"{name}: `pool_size` and `strides` must be positive, received "
                             f"pool_size={self.pool_size}, strides={self.strides}")
        self.padding = normalize_padding(padding, name)

    def _check_input(self, inputs):
        super()._check_input(inputs)
        if self.padding == "valid" and inputs.shape[1] < self.pool_size[0]:
            raise ValueError(f"{type(self).__name__} '{self.name}': pool_size {self.pool_size[0]} is larger than the "
                             f"{inputs.shape[1]} steps of the input (shape {inputs.shape}); use padding='same'")

    def call(self, inputs):
        pool = nn.max_pool2d if self._kind == "max" else nn.avg_pool2d
        y = pool(expand_dims(inputs, 1), ksize=(1, self.pool_size[0]), strides=(1, self.strides[0]),
                 padding=self.padding.upper())
        return reshape(y, (y.shape[0],) + y.shape[2:])

    def compute_output_shape(self, input_shape):
        steps = conv_output_length(input_shape[1], self.pool_size[0], self.strides[0], self.padding)
        return (input_shape[0], steps, input_shape[2])

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "padding": self.padding,
                "strides": self.strides, "data_format": "channels_last"}


class MaxPooling1D(_Pooling1D):
    """The maximum of each ``pool_size`` window of steps (default 2, strides = pool_size)."""

    _kind = "max"


class AveragePooling1D(_Pooling1D):
    """The mean of each ``pool_size`` window of steps (for 'same' padding, over the valid steps only)."""

    _kind = "avg"


class GlobalAveragePooling1D(Layer):
    """The mean over the steps: (batch, steps, channels) -> (batch, channels) (keepdims: (batch, 1,
    channels)). ``layer(x, mask=m)`` averages over the steps where ``m`` (batch, steps) is True."""

    input_ndim = 3

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"GlobalAveragePooling1D supports data_format='channels_last' only, "
                             f"received {data_format!r}")
        self.keepdims = bool(keepdims)

    supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return reduce_mean(inputs, axis=1, keepdims=self.keepdims)
        if tuple(mask.shape) != tuple(inputs.shape[:2]):
            raise ValueError(f"GlobalAveragePooling1D '{self.name}': `mask` must have shape (batch, steps) = "
                             f"{tuple(inputs.shape[:2])}. Received: mask.shape={tuple(mask.shape)}")
        keep = expand_dims(cast(mask, "bool"), 2)
        total = reduce_sum(where(keep, inputs, zeros_like(inputs)), axis=1, keepdims=self.keepdims)
        return total / reduce_sum(cast(keep, inputs.dtype), axis=1, keepdims=self.keepdims)

    def compute_mask(self, inputs, mask=None):
        return None  # the steps are gone

    def compute_output_shape(self, input_shape):
        if self.keepdims:
            return (input_shape[0], 1, input_shape[2])
        return (input_shape[0], input_shape[2])

    def get_config(self):
        return {**super().get_config(), "data_format": "channels_last", "keepdims": self.keepdims}


MaxPool1D = MaxPooling1D
AvgPool1D = AveragePooling1D
GlobalAvgPool1D = GlobalAveragePooling1D


class GlobalMaxPooling1D(Layer):
    """The maximum over the steps: (batch, steps, channels) -> (batch, channels) (keepdims:
    (batch, 1, channels)).

    >>> mk.layers.GlobalMaxPooling1D()(mk.ones((2, 5, 3))).shape
    (2, 3)
    """

    input_ndim = 3

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"GlobalMaxPooling1D supports data_format='channels_last' only, received {data_format!r}")
        self.keepdims = bool(keepdims)

    def call(self, inputs):
        return reduce_max(inputs, axis=1, keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], 1, input_shape[2]) if self.keepdims else (input_shape[0], input_shape[2])

    def get_config(self):
        return {**super().get_config(), "data_format": "channels_last", "keepdims": self.keepdims}


GlobalMaxPool1D = GlobalMaxPooling1D
