"""Activation functions as layers, with Keras 3's arguments: ReLU, LeakyReLU, ELU, Softmax."""
from minikeras import activations
from minikeras.layers.base import Layer
from minikeras.ops.math import exp, minimum, where
from minikeras.ops.reduce import reduce_logsumexp
from minikeras.tensor import Tensor, Variable, to_array


def _non_negative(value, message):
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(message)
    return float(value)


class _Elementwise(Layer):
    supports_masking = True

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)


class ReLU(_Elementwise):
    """``max(x, 0)``, with the options ``max_value`` (a cap), ``negative_slope`` (below
    ``threshold``) and ``threshold`` (values below it are zeroed or scaled)."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None:
            max_value = _non_negative(max_value, f"max_value of a ReLU layer cannot be a negative value. Received: "
                                                 f"max_value={max_value}")
        self.max_value = max_value
        self.negative_slope = _non_negative(
            negative_slope, f"negative_slope of a ReLU layer cannot be None or a negative value. Received: "
                            f"negative_slope={negative_slope}")
        self.threshold = _non_negative(threshold, f"threshold of a ReLU layer cannot be None or a negative value. "
                                                  f"Received: threshold={threshold}")
        self._build_at_init()

    def call(self, inputs):
        return activations.relu(inputs, negative_slope=self.negative_slope, max_value=self.max_value,
                                threshold=self.threshold)

    def get_config(self):
        return {**super().get_config(), "max_value": self.max_value, "negative_slope": self.negative_slope,
                "threshold": self.threshold}


class LeakyReLU(_Elementwise):
    """``x`` where positive, ``negative_slope * x`` elsewhere (default slope 0.3, Keras's;
    ``alpha`` is accepted as its old name)."""

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:
            negative_slope = kwargs.pop("alpha")
        super().__init__(**kwargs)
        self.negative_slope = _non_negative(
            negative_slope, f"The negative_slope value of a Leaky ReLU layer cannot be None or negative value. "
                            f"Expected a float. Received: negative_slope={negative_slope}")
        self._build_at_init()

    def call(self, inputs):
        return activations.leaky_relu(inputs, negative_slope=self.negative_slope)

    def get_config(self):
        return {**super().get_config(), "negative_slope": self.negative_slope}


class ELU(_Elementwise):
    """``x`` if ``x > 0`` else ``alpha * (exp(x) - 1)`` (default ``alpha=1.0``)."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)
        self._build_at_init()

    def call(self, inputs):
        if self.alpha == 1.0:
            return activations.elu(inputs)
        # exp of min(x, 0): the unused branch of where must not overflow (its gradient would be nan)
        return where(inputs > 0, inputs, (exp(minimum(inputs, 0.0)) - 1.0) * self.alpha)

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


class Softmax(_Elementwise):
    """Softmax along ``axis`` (an int or a tuple of ints; default -1). ``layer(x, mask=m)`` gives
    masked-out positions (``m`` False or <= 0.5) probability 0, as Keras 3 does."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = tuple(axis) if isinstance(axis, (list, tuple)) else int(axis)
        self._build_at_init()

    def _check_input(self, inputs):
        super()._check_input(inputs)
        for axis in self.axis if isinstance(self.axis, tuple) else (self.axis,):
            if not -inputs.ndim <= axis < inputs.ndim:
                raise ValueError(f"Softmax '{self.name}': axis {axis} is out of bounds for an input of shape "
                                 f"{inputs.shape}")

    def call(self, inputs, mask=None):
        if mask is not None:
            mask = _t(mask)
            if mask.ndim > inputs.ndim or any(m not in (1, n) for m, n in zip(mask.shape[::-1], inputs.shape[::-1])):
                raise ValueError(f"The `mask` must be broadcastable to `inputs`. Received: "
                                 f"inputs.shape={inputs.shape}, mask.shape={mask.shape}")
            if mask.dtype.name != "bool":
                mask = mask > 0.5
            inputs = where(mask, inputs, _large_negative(inputs.dtype))
        axis = self.axis
        if isinstance(axis, tuple) and len(axis) > 1:
            outputs = exp(inputs - reduce_logsumexp(inputs, axis=axis, keepdims=True))
        else:
            outputs = activations.softmax(inputs, axis=axis[0] if isinstance(axis, tuple) else axis)
        if mask is not None:  # an entirely masked axis gives zeros, not a uniform distribution
            outputs = where(mask, outputs, 0.0)
        return outputs

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


def _t(x):
    if isinstance(x, Variable):
        return x.value()
    return x if isinstance(x, Tensor) else Tensor(to_array(x))


def _large_negative(dtype):
    return -3e4 if dtype.name == "float16" else -1e9
