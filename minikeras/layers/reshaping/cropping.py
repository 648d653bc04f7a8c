"""Cropping1D, Cropping2D, Cropping3D: values removed at the borders of the spatial axes."""
from minikeras.layers.base import Layer
from minikeras.layers.convolutional import conv_args as ca
from minikeras.layers.reshaping.spatial import pairs_per_axis, spatial_axes
from minikeras.ops.array import getitem


class BaseCropping(Layer):
    """Removes ``cropping`` values before and after each spatial axis.

    Args:
      cropping: an int (every side), one int per spatial axis (both sides), or one (before, after)
        pair per spatial axis.
      data_format: 'channels_last' or 'channels_first' (Cropping1D: channels last only, as Keras).
    """

    rank = None

    def __init__(self, cropping, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = ca.standardize_data_format(data_format) if self.rank > 1 else "channels_last"
        if self.rank == 1:
            self.cropping = ca.standardize_tuple(cropping, 2, "cropping", allow_zero=True)
        else:
            self.cropping = pairs_per_axis(cropping, self.rank, "cropping")
        self.input_ndim = self.rank + 2

    def _pairs(self):
        return (self.cropping,) if self.rank == 1 else self.cropping

    def _check_input(self, inputs):
        super()._check_input(inputs)
        if inputs.ndim == self.input_ndim:
            self._cropped_shape(inputs.shape, "inputs.shape")

    def call(self, inputs):
        index = [slice(None)] * inputs.ndim
        for axis, (before, after) in zip(spatial_axes(self.rank, self.data_format), self._pairs()):
            index[axis] = slice(before, inputs.shape[axis] - after)
        return getitem(inputs, tuple(index))

    def compute_output_shape(self, input_shape):
        return self._cropped_shape(input_shape, "input_shape")

    def _cropped_shape(self, input_shape, what):
        shape = list(input_shape)
        for axis, (before, after) in zip(spatial_axes(self.rank, self.data_format), self._pairs()):
            if shape[axis] is not None:
                shape[axis] -= before + after
                if shape[axis] <= 0:
                    if self.rank == 1:
                        raise ValueError(f"`cropping` parameter of `Cropping1D` layer must be smaller than the "
                                         f"input length. Received: {what}={tuple(input_shape)}, "
                                         f"cropping={self.cropping}")
                    raise ValueError(f"Values in `cropping` argument should be smaller than the corresponding "
                                     f"spatial dimension of the input. Received: {what}={tuple(input_shape)}, "
                                     f"cropping={self.cropping}")
        return tuple(shape)

    def get_config(self):
        config = {**super().get_config(), "cropping": self.cropping}
        if self.rank > 1:
            config["data_format"] = self.data_format
        return config


class Cropping1D(BaseCropping):
    """Removes steps at the start and end: ``cropping`` an int or (start, end); default (1, 1).

    >>> mk.layers.Cropping1D((1, 2))(mk.ones((1, 6, 2))).shape
    (1, 3, 2)
    """

    rank = 1

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(cropping, **kwargs)


class Cropping2D(BaseCropping):
    """Removes rows and columns at the borders: ``cropping`` as ZeroPadding2D's ``padding``
    (default none).

    >>> mk.layers.Cropping2D(((1, 0), (2, 1)))(mk.ones((1, 4, 5, 2))).shape
    (1, 3, 2, 2)
    """

    rank = 2

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)


class Cropping3D(BaseCropping):
    """Removes values around a volume: ``cropping`` an int, 3 ints or 3 pairs; default 1 everywhere.

    >>> mk.layers.Cropping3D(1)(mk.ones((1, 4, 4, 4, 3))).shape
    (1, 2, 2, 2, 3)
    """

    rank = 3

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)
