"""Small stateless layers: Identity, Rescaling, Lambda, SpatialDropout2D."""
import inspect

import numpy as np

from minikeras.layers.base import Layer
from minikeras.ops.math import cast
from minikeras.ops.nn import dropout


class Identity(Layer):
    """Returns its input unchanged."""

    supports_masking = True

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)


class Rescaling(Layer):
    """``inputs * scale + offset`` in the layer's dtype (integer images become float32), e.g.
    ``Rescaling(1 / 255)``. ``scale`` and ``offset`` may be scalars or arrays broadcast to the input."""

    supports_masking = True

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale
        self.offset = offset

    def call(self, inputs):
        dtype = self.dtype
        x = inputs if inputs.dtype == dtype else cast(inputs, dtype)
        return x * np.asarray(self.scale, dtype.name) + np.asarray(self.offset, dtype.name)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}


class Lambda(Layer):
    """Wraps a function of tensors as a layer: ``Lambda(lambda x: x ** 2)``.

    Args:
      function: called as ``function(inputs, **arguments)`` (and with ``mask=``/``training=`` when
        it takes them).
      output_shape: for ``compute_output_shape`` (a tuple without the batch axis, or a function
        of the input shape); None infers it by evaluating the function abstractly.
      arguments: keyword arguments passed to ``function``.
    """

    takes_strings = True  # a function may compute on string Tensors (mk.strings)

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise TypeError(f"Lambda: `function` must be callable, received {function!r}")
        self.function = function
        self._output_shape_arg = output_shape
        self.mask = mask
        self.arguments = dict(arguments or {})
        try:
            params = inspect.signature(function).parameters
        except (TypeError, ValueError):
            params = {}
        self._fn_takes = {name for name in ("mask", "training") if name in params}
        self.built = True

    def call(self, inputs, mask=None, training=None):
        kwargs = dict(self.arguments)
        if "mask" in self._fn_takes:
            kwargs["mask"] = mask
        if "training" in self._fn_takes:
            kwargs["training"] = training
        return self.function(inputs, **kwargs)

    def compute_output_shape(self, input_shape):
        shape = self._output_shape_arg
        if shape is None:
            return super().compute_output_shape(input_shape)
        if callable(shape):
            return tuple(shape(input_shape))
        return (input_shape[0],) + tuple(shape)

    def get_config(self):
        raise NotImplementedError("Lambda layers wrap Python code: their config cannot be saved")


class SpatialDropout2D(Layer):
    """Dropout of whole feature maps: with ``training=True`` each (example, channel) map of a
    (batch, h, w, channels) input is zeroed with probability ``rate`` and the rest scaled by
    ``1 / (1 - rate)``; the identity otherwise."""

    input_ndim = 4

    def __init__(self, rate, data_format=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                             f"Received: rate={rate}")
        if data_format not in (None, "channels_last"):
            raise ValueError(f"SpatialDropout2D supports data_format='channels_last' only, received {data_format!r}")
        self.rate = float(rate)
        self.seed = seed

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            return inputs * 0.0
        return dropout(inputs, self.rate, noise_shape=(inputs.shape[0], 1, 1, inputs.shape[3]), seed=self.seed)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed, "data_format": "channels_last"}
