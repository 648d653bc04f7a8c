"""Conv2D: 2-D convolution over images (and the window helpers pooling layers share)."""
import jax

from minikeras.layers.convolutional.base_conv import BaseConv
from minikeras.saving.registry import register_builtin
from minikeras.tensor import Tensor, to_array


def normalize_tuple(value, n, name, layer):
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) != n:
        raise ValueError(f"{layer}: `{name}` must be an int or a tuple of {n} ints, received {value!r}")
    return value


def conv_output_length(length, kernel, stride, padding, dilation=1):
    """The output length of a convolution or pooling window along one axis (None stays None)."""
    if length is None:
        return None
    if padding == "same":
        return -(-length // stride)
    return max(0, (length - (kernel - 1) * dilation - 1) // stride + 1)


def normalize_padding(padding, layer):
    padding = str(padding).lower()
    if padding not in ("valid", "same"):
        raise ValueError(f"{layer}: `padding` must be 'valid' or 'same', received {padding!r}")
    return padding


@register_builtin("minikeras.layers")
class Conv2D(BaseConv):
    """2-D convolution: (batch, height, width, channels) -> (batch, h', w', filters)
    (``data_format="channels_first"``: (batch, channels, height, width) in and out).

    Args:
      filters: number of output channels.
      kernel_size: an int or (height, width).
      strides: an int or (sh, sw); padding: 'valid' (default) or 'same'; dilation_rate likewise.
      data_format: 'channels_last' or 'channels_first' (None: ``backend.image_data_format()``).
      groups: channel groups convolved apart (``filters`` and the input channels divisible by it).
      activation, use_bias, kernel_initializer ('glorot_uniform'), bias_initializer ('zeros').
      kernel_regularizer, bias_regularizer, activity_regularizer: penalties in ``layer.losses``.
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(2, filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, groups=groups, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                         bias_constraint=bias_constraint, **kwargs)

    def _check_input(self, inputs):
        if isinstance(inputs, Tensor) and inputs.ndim != 4:
            # Traced for its shapes, the batch axis is a placeholder: reported as None, as Keras does.
            shape = tuple(inputs.shape)
            if isinstance(to_array(inputs), jax.core.Tracer):
                shape = (None,) + shape[1:]
            hint = (f" For one-channel images add the channel axis: x.reshape(-1, {shape[1]}, {shape[2]}, 1) (or "
                    f"x[..., None]) and give the model input_shape=({shape[1]}, {shape[2]}, 1)."
                    if inputs.ndim == 3 else "")
            raise ValueError(f"Input 0 of layer '{self.name}' is incompatible with the layer: expected ndim=4, found "
                             f"ndim={inputs.ndim}. Full shape received: {shape}. Conv2D takes (batch, height, width, "
                             f"channels).{hint}")
        super()._check_input(inputs)
