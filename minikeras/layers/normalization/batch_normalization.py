"""BatchNormalization with moving statistics kept in non-trainable Variables."""
from minikeras import constraints, initializers, regularizers
from minikeras.dtypes import is_floating
from minikeras.layers.base import Layer
from minikeras.ops.array import reshape, stop_gradient
from minikeras.ops.batch_norm import batch_norm_training, batch_statistics
from minikeras.ops.elementwise import sqrt
from minikeras.ops.math import cast, maximum, minimum, rsqrt
from minikeras.ops.nn import relu
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

    Batch renormalization (``renorm=True``, Ioffe 2017, as Keras 3.15): three more non-trainable
    weights, ``moving_stddev``, ``renorm_mean`` and ``renorm_stddev`` (the stddevs start at the
    square root of ``moving_variance_initializer``'s values). In training, with the batch's
    ``mean``, ``variance`` and ``stddev = sqrt(variance + epsilon)``, the normalized batch is
    corrected to ``x_hat * r + d``: ``r = stddev / s`` and ``d = (mean - renorm_mean) / s`` with
    ``s = max(renorm_stddev, sqrt(epsilon))``, clipped by ``renorm_clipping``'s ``rmin``/``rmax``
    and ``dmax`` (``r`` in [rmin, rmax], ``d`` in [-dmax, dmax]) and without gradient; then
    ``renorm_mean``/``renorm_stddev`` move toward ``mean``/``stddev`` with ``renorm_momentum``,
    ``moving_mean``/``moving_stddev`` with ``momentum``, and ``moving_variance`` becomes
    ``relu(moving_stddev**2 - epsilon)``. Inference is as without renorm.
    """

    supports_masking = True

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", moving_mean_initializer="zeros",
                 moving_variance_initializer="ones", beta_regularizer=None, gamma_regularizer=None,
                 beta_constraint=None, gamma_constraint=None, renorm=False, renorm_clipping=None,
                 renorm_momentum=0.99, **kwargs):
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
        self.renorm = bool(renorm)
        if self.renorm:
            renorm_clipping = _checked_clipping(renorm_clipping, self.name)
        self.renorm_clipping = renorm_clipping
        self.renorm_momentum = float(renorm_momentum)

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
        if self.renorm:
            def stddev_initializer(shape, dtype=None):
                return sqrt(cast(self.moving_variance_initializer(shape, dtype=dtype), dtype or "float32"))

            self.moving_stddev = self.add_weight("moving_stddev", (n,), stddev_initializer, trainable=False,
                                                 autocast=False)
            self.renorm_mean = self.add_weight("renorm_mean", (n,), self.moving_mean_initializer, trainable=False,
                                               autocast=False)
            self.renorm_stddev = self.add_weight("renorm_stddev", (n,), stddev_initializer, trainable=False,
                                                 autocast=False)
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
            # the statistics the op normalizes by, computed once with it in a compiled step
            mean, variance = batch_statistics(inputs, self._reduce_axes)
            if self.renorm:
                centered = inputs - reshape(mean, broadcast_shape)
                gamma, beta = self._renormalize(mean, variance)
                outputs = centered * reshape(rsqrt(variance + self.epsilon), broadcast_shape)
                return cast(outputs * reshape(gamma, broadcast_shape) + reshape(beta, broadcast_shape),
                            compute_dtype)
            m = self.momentum
            self.moving_mean.assign(self.moving_mean * m + mean * (1.0 - m))
            self.moving_variance.assign(self.moving_variance * m + variance * (1.0 - m))
            # the normalization as one op with its closed-form gradient (the statistics above
            # only update the moving ones: no gradient flows through them)
            gamma = reshape(self.gamma, broadcast_shape) if self.scale else None
            beta = reshape(self.beta, broadcast_shape) if self.center else None
            return cast(batch_norm_training(inputs, gamma, beta, self._reduce_axes, self.epsilon), compute_dtype)
        else:
            mean, variance = self.moving_mean, self.moving_variance
            centered = inputs - reshape(mean, broadcast_shape)
        outputs = centered * reshape(rsqrt(variance + self.epsilon), broadcast_shape)
        if self.scale:
            outputs = outputs * reshape(self.gamma, broadcast_shape)
        if self.center:
            outputs = outputs + reshape(self.beta, broadcast_shape)
        return cast(outputs, compute_dtype)

    def _renormalize(self, mean, variance):
        """The corrected scale and offset ``(r * gamma, d * gamma + beta)`` of a training step,
        after which the renorm and moving statistics are updated (see the class docstring)."""
        stddev = sqrt(variance + self.epsilon)
        floor = sqrt(cast(self.epsilon, stddev.dtype))
        renorm_stddev = maximum(self.renorm_stddev, floor)  # no division by ~0 early in training
        r = stddev / renorm_stddev
        d = (mean - self.renorm_mean) / renorm_stddev
        clipping = self.renorm_clipping
        if clipping.get("rmin") is not None:
            r = maximum(r, clipping["rmin"])
        if clipping.get("rmax") is not None:
            r = minimum(r, clipping["rmax"])
        if clipping.get("dmax") is not None:
            d = minimum(maximum(d, -clipping["dmax"]), clipping["dmax"])
        r, d = stop_gradient(r), stop_gradient(d)
        gamma = r * self.gamma if self.scale else r
        beta = d * self.gamma if self.scale else d
        if self.center:
            beta = beta + self.beta
        rm, m = self.renorm_momentum, self.momentum
        self.renorm_mean.assign(self.renorm_mean * rm + mean * (1.0 - rm))
        self.renorm_stddev.assign(self.renorm_stddev * rm + stddev * (1.0 - rm))
        self.moving_mean.assign(self.moving_mean * m + mean * (1.0 - m))
        moving_stddev = self.moving_stddev * m + stddev * (1.0 - m)
        self.moving_stddev.assign(moving_stddev)
        self.moving_variance.assign(relu(moving_stddev * moving_stddev - self.epsilon))
        return gamma, beta

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
                "gamma_constraint": constraints.serialize(self.gamma_constraint), "renorm": self.renorm,
                "renorm_clipping": self.renorm_clipping, "renorm_momentum": self.renorm_momentum}


def _checked_clipping(clipping, name):
    """``renorm_clipping`` as a dict, checked as Keras 3 checks it."""
    clipping = dict(clipping or {})
    keys = ["rmax", "rmin", "dmax"]
    if set(clipping) - set(keys):
        raise ValueError(f"BatchNormalization '{name}': Received invalid keys for `renorm_clipping` argument: "
                         f"{clipping}. Supported values: {keys}.")
    rmax, rmin, dmax = (clipping.get(k) for k in keys)
    if rmax is not None and rmin is not None and rmax < rmin:
        raise ValueError(f"BatchNormalization '{name}': rmax should be greater than rmin in the `renorm_clipping` "
                         f"argument. Received: rmax={rmax}, rmin={rmin}.")
    if dmax is not None and dmax < 0:
        raise ValueError(f"BatchNormalization '{name}': dmax should be non-negative in the `renorm_clipping` "
                         f"argument. Received: dmax={dmax}.")
    return clipping
