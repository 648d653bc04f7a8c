"""``mk.Input``: the symbolic input of a functional model, and its ``InputLayer``."""
from minikeras.dtypes import dtype_name
from minikeras.layers.base import Layer
from minikeras.module import unique_name
from minikeras.saving.registry import register_builtin
from minikeras.symbolic import KerasTensor, Node


@register_builtin("minikeras.layers")
class InputLayer(Layer):
    """The input of a model: holds the KerasTensor that stands for it (``layer.output``) and
    passes values through unchanged.

    Args:
      shape: the shape of one example (no batch axis); ``None`` for a size not known.
      batch_size: a fixed batch size (default: any).
      batch_shape: the whole shape instead (``(None,) + shape``).
    """

    takes_strings = True  # a model's input may be strings (for its leading preprocessing layers)

    def __init__(self, shape=None, batch_size=None, dtype=None, input_shape=None, name=None, batch_shape=None,
                 batch_input_shape=None, input_tensor=None, **kwargs):
        shape = shape if shape is not None else input_shape
        batch_shape = batch_shape if batch_shape is not None else batch_input_shape
        if batch_shape is None:
            if shape is None:
                raise ValueError("InputLayer needs `shape`, the shape of one example (without the batch axis), "
                                 "e.g. mk.Input(shape=(784,))")
            if isinstance(shape, int):
                shape = (shape,)
            batch_shape = (batch_size,) + tuple(shape)
        for key in ("trainable", "sparse", "ragged", "optional"):
            kwargs.pop(key, None)
        super().__init__(name=name or unique_name("input_layer"), dtype=dtype, batch_input_shape=batch_shape,
                         **kwargs)
        self.built = True
        tensor = KerasTensor(self._batch_input_shape, self.dtype, name=self.name)
        self._inbound_nodes().append(Node(self, (), {}, tensor))
        self._output_shape = tensor.shape

    @property
    def batch_shape(self):
        return self._batch_input_shape

    def get_config(self):
        return {"name": self.name, "dtype": dtype_name(self.dtype), "batch_shape": self._batch_input_shape}

    supports_masking = True  # passes its input through, mask included

    def call(self, inputs):
        expected = self._batch_input_shape[1:]
        if inputs.shape[1:] != tuple(expected) and all(e is not None for e in expected):
            raise ValueError(f"Input '{self.name}' expects examples of shape {tuple(expected)}, received a batch of "
                             f"shape {inputs.shape}")
        return inputs


def Input(shape=None, batch_size=None, dtype=None, name=None, batch_shape=None, tensor=None):  # noqa: N802 - Keras's name
    """A symbolic input (a ``KerasTensor``) of shape ``(batch_size,) + shape``, to build a
    functional model with ``mk.Model(inputs, outputs)``, or to start a ``Sequential``.

    >>> x = mk.Input(shape=(784,), name="pixels")
    >>> x.shape
    (None, 784)
    """
    if tensor is not None:
        raise ValueError("mk.Input(tensor=...) is not supported: build the model from mk.Input(shape) and call it "
                         "on the tensor")
    return InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, name=name, batch_shape=batch_shape).output
