"""BatchNormalization with moving statistics kept in non-trainable Variables."""
from minikeras import constraints, initializers, regularizers
from minikeras.dtypes import is_floating
from minikeras.layers.base import Layer
from minikeras.ops.array import reshape
from minikeras.ops.math import cast, rsqrt
from minikeras.ops.reduce import reduce_mean
from minikeras.saving.registry import register_builtin


@register_builtin("minikeras.layers")
class BatchNormalization(Layer):
    """Normalizes each feature over the batch (training) or with moving statistics (inference).

    In training mode the batch mean and variance normalize the input and update
    ``moving = moving * momentum + batch_stat * (1 - momentum)`` (eagerly and inside
    ``mk.function``). Keras defaults: ``axis=-1``, ``momentum=0.99``, ``epsilon=1e-3``. ``beta`` and
    ``gamma`` take regularizers and constraints, as Keras's.
    Under a mixed policy the statistics and the normalization are computed in float32 (the
    weights are read uncast) and the output is cast to the compute dtype, as in Keras 3.
    """

    supports_masking = True

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", moving_mean_initializer="zeros",
                 moving_variance_initializer="ones", beta_regularizer=None, gamma_regularizer=None,
                 beta_constraint=None, gamma_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.center = center
        self.scale = scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)
        self.gamma = self.beta = None

    def build(self, input_shape):
        ndim = len(input_shape)
        self._axis = self.axis % ndim
        n = input_shape[self._axis]
        if self.scale:
            self.gamma = self.add_weight("gamma", (n,), self.gamma_initializer, autocast=False,
                                         regularizer=self.gamma_regularizer, constraint=self.gamma_constraint)
        if self.center:
            self.beta = self.add_weight("beta", (n,), self.beta_initializer, autocast=False,
                                        regularizer=self.beta_regularizer, constraint=self.beta_constraint)
        self.moving_mean = self.add_weight("moving_mean", (n,), self.moving_mean_initializer, trainable=False,
                                           autocast=False)
        self.moving_variance = self.add_weight("moving_variance", (n,), self.moving_variance_initializer,
                                               trainable=False, autocast=False)
        self._reduce_axes = tuple(i for i in range(ndim) if i != self._axis)
        self._built_ndim = ndim
        self.built = True

    def _check_input(self, inputs):
        super()._check_input(inputs)
        if not self.built:
            return
        if inputs.ndim != self._built_ndim:
            raise ValueError(f"Input 0 of layer '{self.name}' is incompatible with the layer: expected "
                             f"ndim={self._built_ndim}, found ndim={inputs.ndim}. Full shape received: {inputs.shape}")
        if inputs.shape[self._axis] != self.moving_mean.shape[0]:
            raise ValueError(f"BatchNormalization '{self.name}' expects {self.moving_mean.shape[0]} features on axis "
                             f"{self.axis}, received shape {inputs.shape}")

    def call(self, inputs, training=None):
        compute_dtype = inputs.dtype
        if is_floating(compute_dtype) and compute_dtype.itemsize < 4:  # float16/bfloat16 statistics overflow
            inputs = cast(inputs, "float32")
        broadcast_shape = tuple(n if i == self._axis else 1 for i, n in enumerate(inputs.shape))
        if training and self.trainable:  # a frozen BatchNormalization runs in inference mode (Keras 3)
            mean = reduce_mean(inputs, axis=self._reduce_axes)
            centered = inputs - reshape(mean, broadcast_shape)
            variance = reduce_mean(centered * centered, axis=self._reduce_axes)
            m = self.momentum
            self.moving_mean.assign(self.moving_mean * m + mean * (1.0 - m))
            self.moving_variance.assign(self.moving_variance * m + variance * (1.0 - m))
        else:
            mean, variance = self.moving_mean, self.moving_variance
            centered = inputs - reshape(mean, broadcast_shape)
        outputs = centered * reshape(rsqrt(variance + self.epsilon), broadcast_shape)
        if self.scale:
            outputs = outputs * reshape(self.gamma, broadcast_shape)
        if self.center:
            outputs = outputs + reshape(self.beta, broadcast_shape)
        return cast(outputs, compute_dtype)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "momentum": self.momentum, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale,
                "beta_initializer": initializers.serialize(self.beta_initializer),
                "gamma_initializer": initializers.serialize(self.gamma_initializer),
                "moving_mean_initializer": initializers.serialize(self.moving_mean_initializer),
                "moving_variance_initializer": initializers.serialize(self.moving_variance_initializer),
                "beta_regularizer": regularizers.serialize(self.beta_regularizer),
                "gamma_regularizer": regularizers.serialize(self.gamma_regularizer),
                "beta_constraint": constraints.serialize(self.beta_constraint),
                "gamma_constraint": constraints.serialize(self.gamma_constraint)}
