"""Layers that move values around: UpSampling2D, ZeroPadding2D, Cropping2D, RepeatVector, Permute."""
import jax
import numpy as np

from minikeras.layers.base import Layer
from minikeras.ops.array import broadcast_to, getitem, pad, reshape, transpose
from minikeras.ops.linalg import matmul

_INTERPOLATIONS = ("bilinear", "nearest", "lanczos3", "lanczos5", "bicubic")


def _channels_last(layer, data_format):
    if data_format not in (None, "channels_last"):
        raise ValueError(f"{layer} supports data_format='channels_last' only, received {data_format!r}")


def _int_pair(value, name, layer):
    """An int or a pair of ints (Keras's ``size``) -> a pair."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * 2
    value = tuple(value)
    if len(value) != 2 or not all(isinstance(v, (int, np.integer)) for v in value):
        raise ValueError(f"{layer}: `{name}` should be an int or a tuple of 2 ints. Received: {name}={value}.")
    return tuple(int(v) for v in value)


def _pairs_of_pairs(value, name):
    """Keras's ZeroPadding2D/Cropping2D argument: int | (sym_h, sym_w) | ((top, bottom), (left, right))."""
    if isinstance(value, int):
        return ((value, value), (value, value))
    if not hasattr(value, "__len__") or len(value) != 2:
        raise ValueError(f"`{name}` should have two elements. Received: {name}={value}.")
    pairs = []
    for item in value:
        item = (item, item) if isinstance(item, int) else tuple(item)
        if len(item) != 2 or not all(isinstance(v, int) and v >= 0 for v in item):
            raise ValueError(f"`{name}` should be an int, a tuple of 2 ints or a tuple of 2 tuples of 2 "
                             f"non-negative ints. Received: {name}={value}.")
        pairs.append(item)
    return tuple(pairs)


class UpSampling2D(Layer):
    """Repeats rows and columns ``size`` times ('nearest', default) or resizes by that factor with
    'bilinear', 'bicubic', 'lanczos3' or 'lanczos5' interpolation (``jax.image.resize``'s
    formulas, as Keras on JAX).

    >>> mk.layers.UpSampling2D(2)(mk.ones((1, 3, 3, 4))).shape
    (1, 6, 6, 4)
    """

    input_ndim = 4

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        _channels_last("UpSampling2D", data_format)
        self.size = _int_pair(size, "size", "UpSampling2D")
        if interpolation not in _INTERPOLATIONS:
            raise ValueError(f"Invalid value for argument `interpolation`. Expected of one {_INTERPOLATIONS}. "
                             f"Received: interpolation={interpolation}")
        self.interpolation = interpolation

    def call(self, inputs):
        b, h, w, c = inputs.shape
        sh, sw = self.size
        if self.interpolation == "nearest":
            x = reshape(inputs, (b, h, 1, w, 1, c))
            return reshape(broadcast_to(x, (b, h, sh, w, sw, c)), (b, h * sh, w * sw, c))
        # a separable linear map: rows = A @ x along height, then B along width
        rows, cols = (_resize_matrix(n, n * s, self.interpolation, inputs.dtype) for n, s in ((h, sh), (w, sw)))
        x = reshape(transpose(inputs, (1, 0, 2, 3)), (h, b * w * c))
        x = transpose(reshape(matmul(rows, x), (h * sh, b, w, c)), (2, 1, 0, 3))  # (w, b, H, c)
        x = reshape(matmul(cols, reshape(x, (w, -1))), (w * sw, b, h * sh, c))
        return transpose(x, (1, 2, 0, 3))

    def compute_output_shape(self, input_shape):
        b, h, w, c = input_shape
        return (b, None if h is None else h * self.size[0], None if w is None else w * self.size[1], c)

    def get_config(self):
        return {**super().get_config(), "size": self.size, "data_format": "channels_last",
                "interpolation": self.interpolation}


def _resize_matrix(n, m, method, dtype):
    """The (m, n) matrix of ``jax.image.resize`` from length n to m along one axis."""
    with jax.ensure_compile_time_eval():
        eye = np.eye(n, dtype=np.float32)
        return np.asarray(jax.image.resize(eye, (m, n), method=method)).astype(np.dtype(dtype))


class ZeroPadding2D(Layer):
    """Adds rows and columns of zeros: ``padding`` is an int, (rows, cols) added on both sides, or
    ((top, bottom), (left, right)). Default 1 on every side."""

    input_ndim = 4

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last("ZeroPadding2D", data_format)
        self.padding = _pairs_of_pairs(padding, "padding")

    def call(self, inputs):
        return pad(inputs, ((0, 0),) + self.padding + ((0, 0),))

    def compute_output_shape(self, input_shape):
        b, h, w, c = input_shape
        (t, bo), (le, r) = self.padding
        return (b, None if h is None else h + t + bo, None if w is None else w + le + r, c)

    def get_config(self):
        return {**super().get_config(), "padding": self.padding, "data_format": "channels_last"}


class Cropping2D(Layer):
    """Removes rows and columns at the borders: ``cropping`` as ZeroPadding2D's ``padding``
    (default none)."""

    input_ndim = 4

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last("Cropping2D", data_format)
        self.cropping = _pairs_of_pairs(cropping, "cropping")

    def _check_input(self, inputs):
        super()._check_input(inputs)
        (t, b), (le, r) = self.cropping
        if t + b >= inputs.shape[1] or le + r >= inputs.shape[2]:
            raise ValueError(f"Values in `cropping` argument should be smaller than the corresponding spatial "
                             f"dimension of the input. Received: inputs.shape={inputs.shape}, "
                             f"cropping={self.cropping} (layer '{self.name}')")

    def call(self, inputs):
        (t, b), (le, r) = self.cropping
        h, w = inputs.shape[1:3]
        return getitem(inputs, (slice(None), slice(t, h - b), slice(le, w - r)))

    def compute_output_shape(self, input_shape):
        b, h, w, c = input_shape
        (t, bo), (le, r) = self.cropping
        return (b, None if h is None else h - t - bo, None if w is None else w - le - r, c)

    def get_config(self):
        return {**super().get_config(), "cropping": self.cropping, "data_format": "channels_last"}


class RepeatVector(Layer):
    """(batch, features) -> (batch, n, features): the input repeated ``n`` times."""

    input_ndim = 2

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        if n <= 0:
            raise ValueError(f"Argument `n` should be a positive integer. Received: n={n}")
        self.n = int(n)

    def call(self, inputs):
        b, f = inputs.shape
        return broadcast_to(reshape(inputs, (b, 1, f)), (b, self.n, f))

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.n, input_shape[1])

    def get_config(self):
        return {**super().get_config(), "n": self.n}


class Permute(Layer):
    """Permutes the non-batch axes: ``dims`` numbers them from 1 (``Permute((2, 1))`` swaps the two)."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Invalid permutation argument `dims` for Permute Layer. The set of indices in `dims` "
                             f"must be consecutive and start from 1. Received dims={self.dims}")

    def _check_input(self, inputs):
        super()._check_input(inputs)
        if inputs.ndim != len(self.dims) + 1:
            raise ValueError(f"Permute '{self.name}' with dims={self.dims} expects inputs of rank "
                             f"{len(self.dims) + 1}, received shape {inputs.shape}")

    def call(self, inputs):
        return transpose(inputs, (0,) + self.dims)

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + tuple(input_shape[d] for d in self.dims)

    def get_config(self):
        return {**super().get_config(), "dims": self.dims}
