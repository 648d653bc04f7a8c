"""Embedding: integer ids -> rows of a trainable (input_dim, output_dim) matrix."""
import jax
import numpy as np

from minikeras import constraints, initializers, regularizers
from minikeras.layers.base import Layer
from minikeras.layers.lora import LoRAMixin, LoRAWeight
from minikeras.ops.math import cast, not_equal
from minikeras.ops.nn_extra import take_rows


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value} "
                         f"(of type {type(value).__name__}).")
    return int(value)


class Embedding(LoRAMixin, Layer):
    """Looks up rows of ``embeddings`` (shape ``(input_dim, output_dim)``): an input of shape
    (batch, ...) of ids in [0, input_dim) gives (batch, ..., output_dim).

    Args:
      input_dim: the number of ids (largest id + 1).
      output_dim: the size of each embedding vector.
      embeddings_initializer: default 'uniform' (RandomUniform(-0.05, 0.05)), as Keras.
      embeddings_regularizer: a penalty of the matrix in ``layer.losses``.
      embeddings_constraint: a ``keras.constraints`` object applied after each optimizer update.
      mask_zero: whether id 0 is padding: the output then carries the mask ``ids != 0``
        (``compute_mask``), which the layers after it use (Keras 3's mask propagation).
      weights: optional initial matrix.
      lora_rank, lora_alpha: LoRA enabled at build (``minikeras.layers.lora``; factors
        ``lora_embeddings_a``/``_b``); as Keras 3's Embedding, the build enables it with
        ``lora_alpha = lora_rank`` (``enable_lora(rank, lora_alpha=...)`` takes another).

    Ids outside [0, input_dim) raise an IndexError naming the layer and the id when the layer
    runs eagerly (Keras 3 on JAX returns NaN rows for them, TensorFlow raises); inside
    ``mk.function`` they cannot be checked and give NaN rows, as in Keras on JAX (ids in
    [-input_dim, 0) count from the end there).

    >>> mk.layers.Embedding(1000, 64)(mk.constant([[4, 20, 7]])).shape
    (1, 3, 64)
    """

    embeddings = LoRAWeight("embeddings")
    _lora_matrix = "embeddings"
    _lora_alpha_at_build = False

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 embeddings_constraint=None, mask_zero=False, weights=None, lora_rank=None, lora_alpha=None,
                 **kwargs):
        kwargs.pop("input_length", None)  # deprecated in Keras 3, ignored
        self.input_dim = _positive_int(input_dim, "input_dim")
        self.output_dim = _positive_int(output_dim, "output_dim")
        super().__init__(**kwargs)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.mask_zero = bool(mask_zero)
        self.supports_masking = self.mask_zero  # as Keras 3: only a mask_zero Embedding makes a mask
        self.embeddings = None
        self._set_lora(lora_rank, lora_alpha)
        if weights is not None:
            self.build(None)
            self.built = True
            self.set_weights(weights if isinstance(weights, list) and len(weights) == 1 else [weights])

    def build(self, input_shape=None):
        if self.embeddings is None:
            self.embeddings = self.add_weight("embeddings", (self.input_dim, self.output_dim),
                                              self.embeddings_initializer, regularizer=self.embeddings_regularizer,
                                              constraint=self.embeddings_constraint)
        self.built = True
        self._build_lora()

    def _convert_inputs(self, inputs):
        inputs = super()._convert_inputs(inputs)
        if inputs.dtype.name not in ("int32", "int64"):
            inputs = cast(inputs, "int32")
        return inputs

    def _check_input(self, inputs):
        super()._check_input(inputs)
        if isinstance(inputs._value, jax.core.Tracer):
            return
        ids = np.asarray(inputs._value)
        bad = np.argwhere((ids < 0) | (ids >= self.input_dim))
        if len(bad):
            where = tuple(int(i) for i in bad[0])
            raise IndexError(f"Embedding '{self.name}' received id {int(ids[where])} at position {where} of its input "
                             f"(shape {ids.shape}), outside [0, input_dim={self.input_dim}): every id must be in "
                             f"[0, {self.input_dim})")

    def call(self, inputs):
        return take_rows(self.embeddings, inputs)

    def compute_mask(self, inputs, mask=None):
        if not self.mask_zero:
            return None
        return not_equal(inputs, 0)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.output_dim,)

    def get_config(self):
        return {**super().get_config(), "input_dim": self.input_dim, "output_dim": self.output_dim,
                "embeddings_initializer": initializers.serialize(self.embeddings_initializer),
                "embeddings_regularizer": regularizers.serialize(self.embeddings_regularizer),
                "embeddings_constraint": constraints.serialize(self.embeddings_constraint),
                "mask_zero": self.mask_zero, **self._lora_config()}
