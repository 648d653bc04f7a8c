"""``mk.Input``: the symbolic input of a functional model, and its ``InputLayer``."""
from minikeras.dtypes import dtype_name
from minikeras.layers.base import Layer
from minikeras.module import unique_name
from minikeras.saving.registry import register_builtin
from minikeras.symbolic import KerasTensor, Node, is_symbolic


@register_builtin("minikeras.layers")
class InputLayer(Layer):
    """The input of a model: holds the KerasTensor that stands for it (``layer.output``) and
    passes values through unchanged.

    Args:
      shape: the shape of one example (no batch axis); ``None`` for a size not known.
      batch_size: a fixed batch size (default: any).
      batch_shape: the whole shape instead (``(None,) + shape``).
      input_tensor: a KerasTensor the layer adopts as its output (Keras's ``Input(tensor=...)``):
        the tensor becomes a model input; ``shape``, ``batch_size``, ``batch_shape`` and ``dtype``,
        if given, must agree with it.
    """

    takes_strings = True  # a model's input may be strings (for its leading preprocessing layers)

    def __init__(self, shape=None, batch_size=None, dtype=None, input_shape=None, name=None, batch_shape=None,
                 batch_input_shape=None, input_tensor=None, **kwargs):
        shape = shape if shape is not None else input_shape
        batch_shape = batch_shape if batch_shape is not None else batch_input_shape
        if input_tensor is not None:
            batch_shape, dtype = _adopted_shape_and_dtype(input_tensor, shape, batch_size, batch_shape, dtype)
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
        tensor = input_tensor if input_tensor is not None else KerasTensor(self._batch_input_shape, self.dtype,
                                                                           name=self.name)
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


def _adopted_shape_and_dtype(input_tensor, shape, batch_size, batch_shape, dtype):
    """The batch shape and dtype of ``input_tensor`` after Keras's checks: it is a KerasTensor, and
    what else was given agrees with it."""
    if not is_symbolic(input_tensor):
        raise ValueError("Argument `input_tensor` must be a KerasTensor. Received invalid type: "
                         f"input_tensor={input_tensor} (of type {type(input_tensor)})")
    tensor_shape = tuple(input_tensor.shape)
    if batch_size is not None and (len(tensor_shape) < 1 or tensor_shape[0] != batch_size):
        raise ValueError("When providing the `input_tensor` argument, you cannot provide an incompatible `batch_size` "
                         f"argument. Received: batch_size={batch_size}, input_tensor.shape={tensor_shape}")
    if shape is not None:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if shape != tensor_shape[1:]:
            raise ValueError("When providing the `input_tensor` argument, you cannot provide an incompatible `shape` "
                             f"argument. Received: shape={shape}, input_tensor.shape={tensor_shape}")
    if batch_shape is not None and tuple(batch_shape) != tensor_shape:
        raise ValueError("When providing the `input_tensor` argument, you cannot provide an incompatible "
                         f"`batch_shape` argument. Received: batch_shape={tuple(batch_shape)}, "
                         f"input_tensor.shape={tensor_shape}")
    if dtype is not None and dtype_name(dtype) != dtype_name(input_tensor.dtype):
        raise ValueError("When providing the `input_tensor` argument, you cannot provide an incompatible `dtype` "
                         f"argument. Received: dtype={dtype_name(dtype)}, "
                         f"input_tensor.dtype={dtype_name(input_tensor.dtype)}")
    return tensor_shape, input_tensor.dtype


def Input(shape=None, batch_size=None, dtype=None, name=None, batch_shape=None, tensor=None):  # noqa: N802 - Keras's name
    """A symbolic input (a ``KerasTensor``) of shape ``(batch_size,) + shape``, to build a
    functional model with ``mk.Model(inputs, outputs)``, or to start a ``Sequential``.
    ``tensor``, a KerasTensor, is returned as a new model input (as in Keras, a concrete tensor
    is refused: build the model on ``mk.Input(shape)`` and call it on the tensor).

    >>> x = mk.Input(shape=(784,), name="pixels")
    >>> x.shape
    (None, 784)
    """
    return InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, name=name, batch_shape=batch_shape,
                      input_tensor=tensor).output
