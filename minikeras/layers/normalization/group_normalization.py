"""GroupNormalization: normalizes each example over groups of channels (Wu & He, 2018)."""
from minikeras import constraints, initializers, regularizers
from minikeras.dtypes import is_floating
from minikeras.layers.base import Layer
from minikeras.ops.array import reshape
from minikeras.ops.math import cast, rsqrt, squared_difference
from minikeras.ops.reduce import reduce_mean


class GroupNormalization(Layer):
    """The channels (``axis``) split into ``groups``; each example's values of a group (over every
    non-batch axis) normalized to zero mean and unit variance, then ``* gamma + beta`` per channel.

    Args:
      groups: the number of groups (default 32; -1: one per channel, instance normalization).
        The channels must be a multiple of it.
      axis: the channel axis (default -1).
      epsilon: added to the variance (default 1e-3).
      center, scale: whether to learn ``beta`` / ``gamma`` (created gamma first, as Keras).
      beta_initializer ('zeros'), gamma_initializer ('ones'), beta_regularizer, gamma_regularizer,
      beta_constraint, gamma_constraint (applied after each update).
    """

    supports_masking = True

    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, **kwargs):
        if isinstance(groups, bool) or not isinstance(groups, int) or (groups <= 0 and groups != -1):
            raise ValueError(f"Received an invalid value for argument `groups`, expected a positive integer (or `-1` "
                             f"for instance normalization). Received: groups={groups}")
        super().__init__(**kwargs)
        self.autocast = False  # statistics in float32, output in the compute dtype, as Keras 3
        self.groups, self.axis, self.epsilon = groups, axis, epsilon
        self.center, self.scale = center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)
        self.gamma = self.beta = None

    def build(self, input_shape):
        dim = input_shape[self.axis]
        if dim is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined dimension but the layer "
                             f"received an input with shape {tuple(input_shape)}.")
        if self.groups == -1:
            self.groups = dim
        if dim < self.groups:
            raise ValueError(f"Number of groups ({self.groups}) cannot be more than the number of channels ({dim}).")
        if dim % self.groups:
            raise ValueError(f"Number of groups ({self.groups}) must be a multiple of the number of channels ({dim}).")
        self._ndim = len(input_shape)
        if self.scale:
            self.gamma = self.add_weight("gamma", (dim,), self.gamma_initializer, regularizer=self.gamma_regularizer,
                                         constraint=self.gamma_constraint, autocast=False)
        if self.center:
            self.beta = self.add_weight("beta", (dim,), self.beta_initializer, regularizer=self.beta_regularizer,
                                        constraint=self.beta_constraint, autocast=False)
        self.built = True

    def call(self, inputs):
        x = cast(inputs, "float32") if is_floating(inputs.dtype) and inputs.dtype.itemsize < 4 else inputs
        axis = self.axis % x.ndim
        shape = tuple(x.shape)
        grouped_shape = shape[:axis] + (self.groups, shape[axis] // self.groups) + shape[axis + 1:]
        grouped = reshape(x, grouped_shape)
        reduce_axes = tuple(i for i in range(1, len(grouped_shape)) if i != axis)
        mean = reduce_mean(grouped, axis=reduce_axes, keepdims=True)
        variance = reduce_mean(squared_difference(grouped, mean), axis=reduce_axes, keepdims=True)
        inv = rsqrt(variance + self.epsilon)
        broadcast = [1] * len(grouped_shape)
        broadcast[axis], broadcast[axis + 1] = self.groups, shape[axis] // self.groups
        if self.gamma is not None:
            inv = inv * cast(reshape(self.gamma, broadcast), x.dtype)
        shift = -(mean * inv)
        if self.beta is not None:
            shift = shift + cast(reshape(self.beta, broadcast), x.dtype)
        return cast(reshape(grouped * inv + shift, shape), self.compute_dtype)

    def compute_output_shape(self, input_shape):
        if not -len(input_shape) <= self.axis < len(input_shape):
            raise ValueError(f"Axis {self.axis} is out of bounds for input shape {tuple(input_shape)}. Received: "
                             f"axis={self.axis}")
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "groups": self.groups, "axis": self.axis, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale,
                "beta_initializer": initializers.serialize(self.beta_initializer),
                "gamma_initializer": initializers.serialize(self.gamma_initializer),
                "beta_regularizer": regularizers.serialize(self.beta_regularizer),
                "gamma_regularizer": regularizers.serialize(self.gamma_regularizer),
                "beta_constraint": constraints.serialize(self.beta_constraint),
                "gamma_constraint": constraints.serialize(self.gamma_constraint)}
