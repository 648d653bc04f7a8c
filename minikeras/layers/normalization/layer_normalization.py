"""LayerNormalization: normalizes each example over its feature axes."""
from minikeras import constraints, initializers, regularizers
from minikeras.dtypes import is_floating
from minikeras.layers.base import Layer
from minikeras.ops.array import reshape
from minikeras.ops.layer_norm import layer_norm
from minikeras.ops.math import cast, rsqrt, squared_difference
from minikeras.ops.reduce import reduce_mean


class LayerNormalization(Layer):
    """``(x - mean) / sqrt(var + epsilon) * gamma + beta``, the statistics taken per example over
    ``axis`` (default -1; an int or a list), ``gamma``/``beta`` of the shape of those axes.

    Args:
      epsilon: default 1e-3 (Keras's).
      center, scale: whether to learn ``beta`` / ``gamma`` (created in that order: gamma, beta).
      rms_scaling: ``x / sqrt(var + epsilon) * gamma`` (no centering, as Keras 3 defines it).
      beta_initializer ('zeros'), gamma_initializer ('ones'), beta_regularizer, gamma_regularizer.
    """

    supports_masking = True

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, rms_scaling=False, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.autocast = False  # Keras 3: computed in float32 from uncast inputs and weights, output cast
        if isinstance(axis, (list, tuple)):
            self.axis = [int(a) for a in axis]
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise TypeError(f"Expected an int or a list/tuple of ints for the argument 'axis', but received: {axis}")
        self.epsilon = float(epsilon)
        self.center, self.scale, self.rms_scaling = bool(center), bool(scale), bool(rms_scaling)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)
        self.gamma = self.beta = None

    def build(self, input_shape):
        ndim = len(input_shape)
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        for a in axes:
            if not -ndim <= a < ndim:
                raise ValueError(f"LayerNormalization '{self.name}': axis {a} is out of range for an input of shape "
                                 f"{tuple(input_shape)}")
        self._axes = tuple(sorted(a % ndim for a in axes))
        shape = tuple(input_shape[a] for a in self._axes)
        self._ndim = ndim
        if self.scale or self.rms_scaling:
            self.gamma = self.add_weight("gamma", shape, self.gamma_initializer, regularizer=self.gamma_regularizer,
                                         constraint=self.gamma_constraint)
        if self.center and not self.rms_scaling:
            self.beta = self.add_weight("beta", shape, self.beta_initializer, regularizer=self.beta_regularizer,
                                        constraint=self.beta_constraint)
        self.built = True

    def _check_input(self, inputs):
        super()._check_input(inputs)
        if self.built and (inputs.ndim != self._ndim or (self.gamma is not None and tuple(
                inputs.shape[a] for a in self._axes) != self.gamma.shape)):
            raise ValueError(f"LayerNormalization '{self.name}' was built for inputs of rank {self._ndim} with "
                             f"{self.gamma.shape if self.gamma is not None else ''} on axes {self._axes}, received "
                             f"shape {inputs.shape}")

    def call(self, inputs):
        if is_floating(inputs.dtype) and inputs.dtype.itemsize < 4:  # float16/bfloat16 statistics overflow
            inputs = cast(inputs, "float32")
        return cast(self._normalized(inputs), self.compute_dtype)

    def _normalized(self, inputs):
        broadcast = tuple(n if i in self._axes else 1 for i, n in enumerate(inputs.shape))
        weights = [w for w in (self.gamma, self.beta) if w is not None]
        if not self.rms_scaling and all(w.dtype == inputs.dtype for w in weights):  # one op, its gradient fused
            return layer_norm(inputs, *[None if w is None else reshape(w, broadcast) for w in (self.gamma, self.beta)],
                              axes=self._axes, epsilon=self.epsilon)
        mean = reduce_mean(inputs, axis=self._axes, keepdims=True)
        variance = reduce_mean(squared_difference(inputs, mean), axis=self._axes, keepdims=True)
        inv = rsqrt(variance + self.epsilon)
        if self.rms_scaling:
            return inputs * inv * reshape(self.gamma, broadcast)
        if self.gamma is not None:
            inv = inv * reshape(self.gamma, broadcast)
        shift = -(mean * inv)
        if self.beta is not None:
            shift = shift + reshape(self.beta, broadcast)
        return inputs * inv + shift

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon, "center": self.center,
                "scale": self.scale, "rms_scaling": self.rms_scaling,
                "beta_initializer": initializers.serialize(self.beta_initializer),
                "gamma_initializer": initializers.serialize(self.gamma_initializer),
                "beta_regularizer": regularizers.serialize(self.beta_regularizer),
                "gamma_regularizer": regularizers.serialize(self.gamma_regularizer),
                "beta_constraint": constraints.serialize(self.beta_constraint),
                "gamma_constraint": constraints.serialize(self.gamma_constraint)}
