"""SpectralNormalization: a wrapped layer's kernel divided by its largest singular value while training."""
from minikeras import initializers
from minikeras.backend import epsilon
from minikeras.layers.base import Layer
from minikeras.ops.array import reshape, stop_gradient, transpose
from minikeras.ops.linalg import matmul
from minikeras.ops.math import cast, minimum, rsqrt, square, where
from minikeras.ops.reduce import reduce_sum
from minikeras.saving.registry import deserialize_keras_object, serialize_keras_object


def _normalize(v):
    return v * minimum(rsqrt(reduce_sum(square(v))), 1.0 / epsilon())  # Keras's normalize floor


class SpectralNormalization(Layer):
    """Wraps a layer with a ``kernel`` (or ``embeddings``): with ``training=True`` the kernel is
    replaced by ``kernel / sigma``, ``sigma`` its largest singular value estimated by
    ``power_iterations`` steps of power iteration from the non-trainable ``vector_u`` (updated
    too), then the layer is called (Miyato et al., 2018), as Keras 3 does. An all-zero kernel
    is left as it is.

    Args:
      layer: the wrapped layer.
      power_iterations: steps per training call (default 1).
    """

    def __init__(self, layer, power_iterations=1, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `SpectralNormalization` layer with a `keras.layers.Layer` "
                             f"instance. Received: {layer}")
        super().__init__(**kwargs)
        if power_iterations <= 0:
            raise ValueError(f"`power_iterations` should be greater than zero. Received: "
                             f"`power_iterations={power_iterations}`")
        self.layer = layer
        self.power_iterations = power_iterations

    def build(self, input_shape):
        if not self.layer.built:
            self.layer.build(input_shape)
            self.layer.built = True
        kernel = getattr(self.layer, "kernel", None)
        if kernel is None:
            kernel = getattr(self.layer, "embeddings", None)
        if kernel is None:
            raise ValueError(f"{type(self.layer).__name__} object has no attribute 'kernel' nor 'embeddings'")
        self.kernel = kernel
        self.vector_u = self.add_weight("vector_u", (1, kernel.shape[-1]), initializers.TruncatedNormal(stddev=0.02),
                                        trainable=False, dtype=kernel.dtype)
        self.built = True

    def _normalized_weights(self):
        shape = tuple(self.kernel.shape)
        kernel = stop_gradient(self.kernel.value())
        weights = reshape(kernel, (-1, shape[-1]))
        u = self.vector_u.value()
        for _ in range(self.power_iterations):
            v = _normalize(matmul(u, transpose(weights)))
            u = _normalize(matmul(v, weights))
        sigma = matmul(matmul(v, weights), transpose(u))
        return u, reshape(kernel / sigma, shape)

    def call(self, inputs, training=None):
        if training:
            new_u, new_kernel = self._normalized_weights()
            zero = reduce_sum(square(self.kernel.value())) == 0
            self.vector_u.assign(where(zero, self.vector_u.value(), new_u))
            self.kernel.assign(where(zero, self.kernel.value(), new_kernel))
        return cast(self.layer(inputs), inputs.dtype)

    def compute_output_shape(self, input_shape):
        return self.layer.compute_output_shape(input_shape)

    def get_config(self):
        return {**super().get_config(), "layer": serialize_keras_object(self.layer),
                "power_iterations": self.power_iterations}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        config["layer"] = deserialize_keras_object(config["layer"], custom_objects=custom_objects)
        return cls(**config)
