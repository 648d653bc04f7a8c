"""ZeroPadding1D, ZeroPadding2D, ZeroPadding3D: zeros added at the borders of the spatial axes."""
from minikeras.layers.base import Layer
from minikeras.layers.convolutional import conv_args as ca
from minikeras.layers.reshaping.spatial import pairs_per_axis, spatial_axes
from minikeras.ops.array import pad


class BaseZeroPadding(Layer):
    """Adds ``padding`` zeros before and after each spatial axis.

    Args:
      padding: an int (every side), one int per spatial axis (both sides), or one (before, after)
        pair per spatial axis.
      data_format: 'channels_last' or 'channels_first'; None: ``backend.image_data_format()``.
    """

    rank = None

    def __init__(self, padding, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = ca.standardize_data_format(data_format)
        if self.rank == 1:
            self.padding = ca.standardize_tuple(padding, 2, "padding", allow_zero=True)
        else:
            self.padding = pairs_per_axis(padding, self.rank, "padding")
        self.input_ndim = self.rank + 2

    def _pairs(self):
        return (self.padding,) if self.rank == 1 else self.padding

    def call(self, inputs):
        pads = [(0, 0)] * inputs.ndim
        for axis, pair in zip(spatial_axes(self.rank, self.data_format), self._pairs()):
            pads[axis] = pair
        return pad(inputs, pads)

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        for axis, (before, after) in zip(spatial_axes(self.rank, self.data_format), self._pairs()):
            if shape[axis] is not None:
                shape[axis] += before + after
        return tuple(shape)

    def get_config(self):
        return {**super().get_config(), "padding": self.padding, "data_format": self.data_format}


class ZeroPadding1D(BaseZeroPadding):
    """Zeros before and after the steps: ``padding`` an int or (before, after); default 1.

    >>> mk.layers.ZeroPadding1D((1, 2))(mk.ones((1, 3, 2))).shape
    (1, 6, 2)
    """

    rank = 1

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


class ZeroPadding2D(BaseZeroPadding):
    """Rows and columns of zeros: ``padding`` an int, (rows, cols) added on both sides, or
    ((top, bottom), (left, right)); default 1 on every side.

    >>> mk.layers.ZeroPadding2D(((1, 2), (0, 3)))(mk.ones((1, 3, 3, 2))).shape
    (1, 6, 6, 2)
    """

    rank = 2

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


class ZeroPadding3D(BaseZeroPadding):
    """Zeros around a volume: ``padding`` an int, 3 ints or 3 (before, after) pairs; default 1.

    >>> mk.layers.ZeroPadding3D(1)(mk.ones((1, 2, 2, 2, 3))).shape
    (1, 4, 4, 4, 3)
    """

    rank = 3

    def __init__(self, padding=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)
