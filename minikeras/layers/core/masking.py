"""Masking: skips the time steps whose features all equal ``mask_value``."""
from minikeras.layers.base import Layer
from minikeras.layers.mask_flow import set_mask
from minikeras.ops.array import squeeze
from minikeras.ops.creation import zeros_like
from minikeras.ops.elementwise import not_equal
from minikeras.ops.math import where
from minikeras.ops.reduce import reduce_any
from minikeras.saving.registry import register_builtin


@register_builtin("minikeras.layers")
class Masking(Layer):
    """Masks the steps (axis 1 of ``(batch, steps, features)``) whose features all equal
    ``mask_value``: their outputs are 0, and the output carries the mask ``any(x != mask_value,
    axis=-1)`` for the layers after it (``LSTM``, ``GlobalAveragePooling1D``, ...).

    >>> x = np.array([[[1., 2.], [0., 0.]]])
    >>> mk.layers.Masking()(x)._keras_mask
    mk.Tensor([[ True False]], shape=(1, 2), dtype=bool)
    """

    supports_masking = True

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value
        self._build_at_init()

    def compute_mask(self, inputs, mask=None):
        return reduce_any(not_equal(inputs, self.mask_value), axis=-1)

    def call(self, inputs):
        keep = reduce_any(not_equal(inputs, self.mask_value), axis=-1, keepdims=True)
        outputs = where(keep, inputs, zeros_like(inputs))
        set_mask(outputs, squeeze(keep, axis=-1))
        return outputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "mask_value": self.mask_value}
