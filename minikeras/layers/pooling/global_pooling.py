"""Global pooling: the mean or maximum over all spatial axes, 1 to 3 of them (GlobalAveragePooling1D
... GlobalMaxPooling3D), either data_format, with ``keepdims``."""
from minikeras.layers.base import Layer
from minikeras.layers.convolutional import conv_args as ca
from minikeras.ops.array import expand_dims
from minikeras.ops.creation import zeros_like
from minikeras.ops.math import cast, where
from minikeras.ops.reduce import reduce_max, reduce_mean, reduce_sum


class BaseGlobalPooling(Layer):
    """Reduces every spatial axis: (batch, *spatial, channels) -> (batch, channels), or with
    ``keepdims=True`` (batch, 1, ..., 1, channels) (channels_first: (batch, channels, 1, ...)).

    Args:
      data_format: 'channels_last' or 'channels_first'; None: ``backend.image_data_format()``.
      keepdims: keep the spatial axes with length 1.
    """

    pool_dimensions = None
    _reduce = None

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = ca.standardize_data_format(data_format)
        self.keepdims = bool(keepdims)
        self.input_ndim = self.pool_dimensions + 2
        self._build_at_init()

    def _axes(self):
        first = 1 if self.data_format == "channels_last" else 2
        return tuple(range(first, first + self.pool_dimensions))

    def call(self, inputs):
        return type(self)._reduce(inputs, axis=self._axes(), keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        axes = self._axes()
        if self.keepdims:
            return tuple(1 if i in axes else n for i, n in enumerate(input_shape))
        return tuple(n for i, n in enumerate(input_shape) if i not in axes)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format, "keepdims": self.keepdims}


def _global(name, rank, reduce, what, doc_in, doc_out):
    doc = (f"The {what} over the {rank} spatial axes (see ``BaseGlobalPooling``).\n\n"
           f"    >>> mk.layers.{name}()(mk.ones({doc_in})).shape\n    {doc_out}\n    ")
    return type(name, (BaseGlobalPooling,), {"pool_dimensions": rank, "_reduce": staticmethod(reduce),
                                             "__doc__": doc, "__module__": __name__})


class GlobalAveragePooling1D(BaseGlobalPooling):
    """The mean over the steps: (batch, steps, channels) -> (batch, channels) (keepdims: (batch, 1,
    channels)). ``layer(x, mask=m)`` averages over the steps where ``m`` (batch, steps) is True.

    >>> mk.layers.GlobalAveragePooling1D()(mk.ones((2, 5, 3))).shape
    (2, 3)
    """

    pool_dimensions = 1
    supports_masking = True
    _reduce = staticmethod(reduce_mean)

    def call(self, inputs, mask=None):
        if mask is None:
            return reduce_mean(inputs, axis=self._axes(), keepdims=self.keepdims)
        steps_axis = self._axes()[0]
        if tuple(mask.shape) != (inputs.shape[0], inputs.shape[steps_axis]):
            raise ValueError(f"GlobalAveragePooling1D '{self.name}': `mask` must have shape (batch, steps) = "
                             f"{(inputs.shape[0], inputs.shape[steps_axis])}. Received: mask.shape={tuple(mask.shape)}")
        keep = expand_dims(cast(mask, "bool"), 2 if self.data_format == "channels_last" else 1)
        total = reduce_sum(where(keep, inputs, zeros_like(inputs)), axis=steps_axis, keepdims=self.keepdims)
        return total / reduce_sum(cast(keep, inputs.dtype), axis=steps_axis, keepdims=self.keepdims)

    def compute_mask(self, inputs, mask=None):
        return None  # the steps are gone


GlobalAveragePooling2D = _global("GlobalAveragePooling2D", 2, reduce_mean, "mean", "(2, 4, 4, 3)", "(2, 3)")
GlobalAveragePooling3D = _global("GlobalAveragePooling3D", 3, reduce_mean, "mean", "(2, 3, 4, 4, 3)", "(2, 3)")
GlobalMaxPooling1D = _global("GlobalMaxPooling1D", 1, reduce_max, "maximum", "(2, 5, 3)", "(2, 3)")
GlobalMaxPooling2D = _global("GlobalMaxPooling2D", 2, reduce_max, "maximum", "(2, 4, 4, 3)", "(2, 3)")
GlobalMaxPooling3D = _global("GlobalMaxPooling3D", 3, reduce_max, "maximum", "(2, 3, 4, 4, 3)", "(2, 3)")

GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D = GlobalAveragePooling1D, GlobalAveragePooling2D, \
    GlobalAveragePooling3D
GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D = GlobalMaxPooling1D, GlobalMaxPooling2D, GlobalMaxPooling3D
