"""RMSNormalization: ``x / sqrt(mean(x**2) + epsilon) * scale`` over the feature axes."""
from minikeras.dtypes import is_floating
from minikeras.layers.base import Layer
from minikeras.ops.math import cast, rsqrt, square
from minikeras.ops.reduce import reduce_mean


class RMSNormalization(Layer):
    """Root-mean-square normalization (Zhang & Sennrich, 2019), as Keras 3's: each example divided
    by the root mean square of its values over ``axis`` (plus ``epsilon``), times a learned
    ``scale`` of those axes' shape (initialized to ones).

    Args:
      axis: an int or a list of ints (default -1).
      epsilon: default 1e-6.
    """

    def __init__(self, axis=-1, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis
        self.epsilon = epsilon
        self.scale = None

    def build(self, input_shape):
        self.compute_output_shape(input_shape)
        if isinstance(self.axis, (list, tuple)):
            self.axis = sorted(self.axis)
            shape = tuple(input_shape[a] for a in self.axis)
        else:
            shape = (input_shape[self.axis],)
            self.axis = [self.axis]
        self.scale = self.add_weight("scale", shape, "ones")
        self.built = True

    def call(self, inputs):
        x = cast(inputs, "float32") if is_floating(inputs.dtype) and inputs.dtype.itemsize < 4 else inputs
        inv = rsqrt(reduce_mean(square(x), axis=tuple(self.axis), keepdims=True) + self.epsilon)
        return cast(x * inv * cast(self.scale, x.dtype), inputs.dtype)

    def compute_output_shape(self, input_shape):
        for axis in self.axis if isinstance(self.axis, (list, tuple)) else [self.axis]:
            if not -len(input_shape) <= axis < len(input_shape):
                raise ValueError(f"Axis {axis} is out of bounds for input shape {tuple(input_shape)}. Received: "
                                 f"axis={self.axis}")
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon}
