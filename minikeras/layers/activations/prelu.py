"""PReLU: a leaky ReLU whose negative slope is learned (per element, or shared along axes)."""
from minikeras import constraints, initializers, regularizers
from minikeras.layers.base import Layer
from minikeras.ops.nn import relu


class PReLU(Layer):
    """``x`` where positive, ``alpha * x`` elsewhere, with ``alpha`` a weight.

    Args:
      alpha_initializer: default 'Zeros' (starts as a ReLU).
      alpha_regularizer: a penalty on ``alpha`` in ``layer.losses``.
      alpha_constraint: a ``keras.constraints`` object applied to ``alpha`` after each update.
      shared_axes: axes (counted with the batch axis as 0) along which one ``alpha`` is shared,
        e.g. ``[1, 2]`` for one slope per channel of (batch, h, w, c) images.

    ``alpha`` has shape ``input_shape[1:]`` with the shared axes set to 1, named ``alpha`` as in Keras.
    """

    supports_masking = True

    def __init__(self, alpha_initializer="Zeros", alpha_regularizer=None, alpha_constraint=None, shared_axes=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        elif not isinstance(shared_axes, (list, tuple)):
            self.shared_axes = [shared_axes]
        else:
            self.shared_axes = list(shared_axes)
        self.alpha = None

    def build(self, input_shape):
        shape = list(input_shape[1:])
        for axis in self.shared_axes or ():
            if not 1 <= axis < len(input_shape):
                raise ValueError(f"PReLU '{self.name}': shared_axes {self.shared_axes} must count from 1 (the batch "
                                 f"axis is 0) and be < {len(input_shape)}, the input's rank (shape {input_shape})")
            shape[axis - 1] = 1
        if any(n is None for n in shape):
            raise ValueError(f"PReLU '{self.name}' needs every non-shared axis known to build alpha, received input "
                             f"shape {tuple(input_shape)}; share the unknown axes with shared_axes")
        self.alpha = self.add_weight("alpha", tuple(shape), self.alpha_initializer,
                                     regularizer=self.alpha_regularizer, constraint=self.alpha_constraint)
        self.built = True

    def call(self, inputs):
        return relu(inputs) - self.alpha * relu(-inputs)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "alpha_initializer": initializers.serialize(self.alpha_initializer),
                "alpha_regularizer": regularizers.serialize(self.alpha_regularizer),
                "alpha_constraint": constraints.serialize(self.alpha_constraint),
                "shared_axes": self.shared_axes}
