"""UnitNormalization: each example scaled to unit L2 norm over ``axis``."""
from minikeras.layers.base import Layer
from minikeras.ops.math import minimum, rsqrt, square
from minikeras.ops.reduce import reduce_sum


class UnitNormalization(Layer):
    """``x * min(1 / sqrt(sum(x**2)), 1e12)`` over ``axis`` (an int or a list; default -1), as Keras 3.

    >>> mk.layers.UnitNormalization()(mk.constant([[3.0, 4.0]])).numpy()
    array([[0.6, 0.8]], dtype=float32)
    """

    supports_masking = True

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis = list(axis)
        elif isinstance(axis, int) and not isinstance(axis, bool):
            self.axis = axis
        else:
            raise TypeError(f"Invalid value for `axis` argument: expected an int or a list/tuple of ints. Received: "
                            f"axis={axis}")
        self._build_at_init()

    def call(self, inputs):
        axis = tuple(self.axis) if isinstance(self.axis, list) else self.axis
        inv = minimum(rsqrt(reduce_sum(square(inputs), axis=axis, keepdims=True)), 1e12)
        return inputs * inv

    def compute_output_shape(self, input_shape):
        for axis in self.axis if isinstance(self.axis, list) else [self.axis]:
            if not -len(input_shape) <= axis < len(input_shape):
                raise ValueError(f"Axis {self.axis} is out of bounds for input shape {tuple(input_shape)}.")
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}
