"""What Dense and Conv2D share: a kernel, an optional bias, an activation and their settings."""
from minikeras import activations, constraints, initializers, regularizers
from minikeras.layers.base import Layer


class KernelBiasLayer(Layer):
    """A layer computing ``activation(linear(inputs, kernel) + bias)``; subclasses call
    ``_set_kernel_bias`` in ``__init__`` and ``_build_kernel_bias`` in ``build``, and give
    ``_kernel_bias_output(linear)`` the linear part from ``call``."""

    def _set_kernel_bias(self, activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer=None,
                         bias_regularizer=None, kernel_constraint=None, bias_constraint=None):
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel = None
        self.bias = None

    def _build_kernel_bias(self, kernel_shape, bias_axis=-1):
        """The kernel of ``kernel_shape`` and, with ``use_bias``, a bias over its ``bias_axis``."""
        self.kernel = self.add_weight("kernel", tuple(kernel_shape), self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", (kernel_shape[bias_axis],), self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def _kernel_bias_output(self, linear):
        return self.activation(linear + self.bias if self.use_bias else linear)

    def _kernel_bias_config(self):
        return {"activation": activations.serialize(self.activation), "use_bias": self.use_bias,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "kernel_constraint": constraints.serialize(self.kernel_constraint),
                "bias_constraint": constraints.serialize(self.bias_constraint)}
