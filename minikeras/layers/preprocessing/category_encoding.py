"""``CategoryEncoding``: integer ids to one-hot, multi-hot or count vectors (compiled ops)."""
import jax.numpy as jnp

from minikeras.backend import is_tracer
from minikeras.errors import invalid_argument
from minikeras.layers.base import Layer
from minikeras.layers.preprocessing.encoding import encode_tensor
from minikeras.layers.preprocessing.host_layer import as_input_tensor
from minikeras.ops.elementwise import cast


class CategoryEncoding(Layer):
    """Encodes integer features (ids in ``[0, num_tokens)``) as Keras 3's ``CategoryEncoding``.

        mk.layers.CategoryEncoding(num_tokens=4, output_mode="one_hot")([3, 2, 0, 1])   # (4, 4)
        mk.layers.CategoryEncoding(num_tokens=4)([[0, 1], [0, 0], [1, 2], [3, 1]])       # multi-hot (4, 4)

    A normal op: it runs inside compiled steps. Ids outside the range give no count.

    Args:
      num_tokens: the number of ids (the output's last dimension).
      output_mode: 'multi_hot' (default), 'one_hot' or 'count' ('binary' is 'multi_hot').
      sparse: False only.
    """

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode not in ("count", "one_hot", "multi_hot"):
            raise ValueError(f"Unknown arg for output_mode: {output_mode}")
        if num_tokens is None:
            raise ValueError("num_tokens must be set to use this layer. If the number of tokens is not known "
                             "beforehand, use the IntegerLookup layer instead.")
        if num_tokens < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        if sparse:
            raise ValueError(f"CategoryEncoding '{self.name}': `sparse=True` needs sparse tensors, which minikeras "
                             "does not have")
        self.num_tokens = num_tokens
        self.output_mode = output_mode
        self.sparse = sparse

    def _convert_inputs(self, inputs):  # a list is one array of ids, as Keras takes it
        return as_input_tensor(inputs)

    def call(self, inputs, count_weights=None):
        if inputs.dtype == object:
            raise TypeError(f"CategoryEncoding '{self.name}' expects integer ids, received strings; map them to ids "
                            "with StringLookup first")
        if count_weights is not None and self.output_mode != "count":
            raise ValueError(f"`count_weights` is not used when `output_mode` is not `'count'`. Received "
                             f"`count_weights={count_weights}`.")
        ids = inputs if inputs.dtype.kind in "iu" else cast(inputs, "int32")
        if self.output_mode != "one_hot" and not is_tracer(ids._value) and ids._value.size:
            lowest = int(jnp.min(ids._value))
            if lowest < 0:  # TF's bincount refuses it (a compiled step cannot raise: there it counts for nothing)
                raise invalid_argument("DenseBincount", f"CategoryEncoding '{self.name}': Input 'in' must be "
                                                        f"non-negative! Negative input value found: {lowest}")
        return encode_tensor(ids, self.output_mode, self.num_tokens, f"CategoryEncoding '{self.name}'", self.dtype,
                             count_weights)

    def compute_output_shape(self, input_shape):
        if len(input_shape) == 0:
            return (self.num_tokens,)
        if self.output_mode == "one_hot":
            if input_shape[-1] != 1 or len(input_shape) == 1:
                return tuple(input_shape) + (self.num_tokens,)
            return tuple(input_shape[:-1]) + (self.num_tokens,)
        return tuple(input_shape[:-1]) + (self.num_tokens,)

    def get_config(self):
        config = super().get_config()
        config.update({"num_tokens": self.num_tokens, "output_mode": self.output_mode})
        return config
