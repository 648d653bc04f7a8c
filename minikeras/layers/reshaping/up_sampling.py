"""UpSampling1D, UpSampling2D, UpSampling3D: spatial axes repeated (or resized) by integer factors."""
import jax
import numpy as np

from minikeras.layers.base import Layer
from minikeras.layers.convolutional import conv_args as ca
from minikeras.layers.reshaping.spatial import repeat, spatial_axes
from minikeras.ops.array import reshape, transpose
from minikeras.ops.linalg import matmul

_INTERPOLATIONS = ("bilinear", "nearest", "lanczos3", "lanczos5", "bicubic")


def _scaled_shape(input_shape, size, axes):
    shape = list(input_shape)
    for axis, s in zip(axes, size):
        shape[axis] = None if shape[axis] is None else shape[axis] * s
    return tuple(shape)


class UpSampling1D(Layer):
    """Each step repeated ``size`` times: (batch, steps, features) -> (batch, steps * size, features).

    >>> mk.layers.UpSampling1D(3)(mk.ones((1, 4, 2))).shape
    (1, 12, 2)
    """

    input_ndim = 3

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(size, int) or isinstance(size, bool):
            raise TypeError(f"Expected an integer value for `size`, got {type(size)}.")
        if size <= 0:
            raise ValueError(f"Argument `size` should be a positive integer. Received: size={size}")
        self.size = size

    def call(self, inputs):
        return repeat(inputs, 1, self.size)

    def compute_output_shape(self, input_shape):
        return _scaled_shape(input_shape, (self.size,), (1,))

    def get_config(self):
        return {**super().get_config(), "size": self.size}


class UpSampling2D(Layer):
    """Repeats rows and columns ``size`` times ('nearest', default) or resizes by that factor with
    'bilinear', 'bicubic', 'lanczos3' or 'lanczos5' interpolation (``jax.image.resize``'s
    formulas, as Keras on JAX); either data_format.

    >>> mk.layers.UpSampling2D(2)(mk.ones((1, 3, 3, 4))).shape
    (1, 6, 6, 4)
    """

    input_ndim = 4

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        self.data_format = ca.standardize_data_format(data_format)
        self.size = ca.standardize_tuple(size, 2, "size")
        if interpolation not in _INTERPOLATIONS:
            raise ValueError(f"Invalid value for argument `interpolation`. Expected of one {_INTERPOLATIONS}. "
                             f"Received: interpolation={interpolation}")
        self.interpolation = interpolation

    def call(self, inputs):
        if self.interpolation == "nearest":
            y = inputs
            for axis, s in zip(spatial_axes(2, self.data_format), self.size):
                y = repeat(y, axis, s)
            return y
        x = ca.to_channels_last(inputs, self.data_format)
        b, h, w, c = x.shape
        sh, sw = self.size
        # a separable linear map: rows = A @ x along height, then B along width
        rows, cols = (_resize_matrix(n, n * s, self.interpolation, x.dtype) for n, s in ((h, sh), (w, sw)))
        x = reshape(transpose(x, (1, 0, 2, 3)), (h, b * w * c))
        x = transpose(reshape(matmul(rows, x), (h * sh, b, w, c)), (2, 1, 0, 3))  # (w, b, H, c)
        x = reshape(matmul(cols, reshape(x, (w, -1))), (w * sw, b, h * sh, c))
        return ca.from_channels_last(transpose(x, (1, 2, 0, 3)), self.data_format)

    def compute_output_shape(self, input_shape):
        return _scaled_shape(input_shape, self.size, spatial_axes(2, self.data_format))

    def get_config(self):
        return {**super().get_config(), "size": self.size, "data_format": self.data_format,
                "interpolation": self.interpolation}


def _resize_matrix(n, m, method, dtype):
    """The (m, n) matrix of ``jax.image.resize`` from length n to m along one axis."""
    with jax.ensure_compile_time_eval():
        eye = np.eye(n, dtype=np.float32)
        return np.asarray(jax.image.resize(eye, (m, n), method=method)).astype(np.dtype(dtype))


class UpSampling3D(Layer):
    """Each value of a volume repeated ``size`` (3 ints, default (2, 2, 2)) times along depth,
    height and width; either data_format.

    >>> mk.layers.UpSampling3D((1, 2, 3))(mk.ones((1, 2, 2, 2, 3))).shape
    (1, 2, 4, 6, 3)
    """

    input_ndim = 5

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = ca.standardize_data_format(data_format)
        self.size = ca.standardize_tuple(size, 3, "size")

    def call(self, inputs):
        y = inputs
        for axis, s in zip(spatial_axes(3, self.data_format), self.size):
            y = repeat(y, axis, s)
        return y

    def compute_output_shape(self, input_shape):
        return _scaled_shape(input_shape, self.size, spatial_axes(3, self.data_format))

    def get_config(self):
        return {**super().get_config(), "size": self.size, "data_format": self.data_format}
