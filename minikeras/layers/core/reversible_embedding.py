"""ReversibleEmbedding: an Embedding that also maps vectors back to logits over the ids."""
from minikeras.layers.core.embedding import Embedding
from minikeras.ops.array import transpose
from minikeras.ops.linalg import matmul
from minikeras.ops.math import cast, tanh


class ReversibleEmbedding(Embedding):
    """``layer(ids)`` looks up embeddings as ``Embedding``; ``layer(vectors, reverse=True)`` gives
    logits ``vectors @ embeddings.T`` (or ``@ reverse_embeddings``, an ``(output_dim, input_dim)``
    weight of its own with ``tie_weights=False``), as Keras 3's (a language model's tied output
    projection).

    Args:
      input_dim, output_dim, embeddings_initializer, embeddings_regularizer,
      embeddings_constraint, mask_zero: as ``Embedding``.
      tie_weights: reuse ``embeddings`` for the reverse projection (default True).
      reverse_dtype: a dtype both sides of the reverse product are cast to (default None: as they are).
      logit_soft_cap: if set, logits become ``tanh(logits / cap) * cap``.

    >>> layer = mk.layers.ReversibleEmbedding(100, 8)
    >>> layer(layer(mk.constant([[1, 2]])), reverse=True).shape
    (1, 2, 100)
    """

    def __init__(self, input_dim, output_dim, tie_weights=True, embeddings_initializer="uniform",
                 embeddings_regularizer=None, embeddings_constraint=None, mask_zero=False, reverse_dtype=None,
                 logit_soft_cap=None, quantization_config=None, **kwargs):
        if quantization_config is not None:
            raise NotImplementedError(f"ReversibleEmbedding: quantization is not supported, received "
                                      f"quantization_config={quantization_config!r}")
        super().__init__(input_dim, output_dim, embeddings_initializer=embeddings_initializer,
                         embeddings_regularizer=embeddings_regularizer, embeddings_constraint=embeddings_constraint,
                         mask_zero=mask_zero, **kwargs)
        self.tie_weights = bool(tie_weights)
        self.reverse_dtype = reverse_dtype
        self.logit_soft_cap = logit_soft_cap
        self.reverse_embeddings = None
        self._reverse = False

    def build(self, input_shape=None):
        super().build(input_shape)
        if not self.tie_weights and self.reverse_embeddings is None:
            self.reverse_embeddings = self.add_weight("reverse_embeddings", (self.output_dim, self.input_dim),
                                                      self.embeddings_initializer)
        self.built = True

    def __call__(self, inputs, *args, reverse=False, **kwargs):
        # the input conversion, checks and output shape of a reverse call are not the lookup's
        previous, self._reverse = self._reverse, bool(reverse)
        try:
            return super().__call__(inputs, *args, reverse=bool(reverse), **kwargs)
        finally:
            self._reverse = previous

    def _convert_inputs(self, inputs):
        return super(Embedding, self)._convert_inputs(inputs) if self._reverse else super()._convert_inputs(inputs)

    def _check_input(self, inputs):
        if self._reverse:
            if inputs.shape[-1] != self.output_dim:
                raise ValueError(f"ReversibleEmbedding '{self.name}' reverse call expects vectors of size "
                                 f"{self.output_dim} (last axis), received shape {inputs.shape}")
            return
        super()._check_input(inputs)

    def call(self, inputs, reverse=False):
        if not reverse:
            return super().call(inputs)
        kernel = transpose(self.embeddings) if self.tie_weights else self.reverse_embeddings
        if self.reverse_dtype is not None:
            inputs, kernel = cast(inputs, self.reverse_dtype), cast(kernel, self.reverse_dtype)
        logits = matmul(inputs, kernel)
        if self.logit_soft_cap is not None:
            logits = tanh(logits / self.logit_soft_cap) * self.logit_soft_cap
        return logits

    def compute_mask(self, inputs, mask=None):
        return None if self._reverse else super().compute_mask(inputs, mask)

    def compute_output_shape(self, input_shape, reverse=None):
        reverse = self._reverse if reverse is None else reverse
        if reverse:
            return tuple(input_shape[:-1]) + (self.input_dim,)
        return super().compute_output_shape(input_shape)

    def get_config(self):
        config = {**super().get_config(), "tie_weights": self.tie_weights, "reverse_dtype": self.reverse_dtype,
                  "logit_soft_cap": self.logit_soft_cap, "quantization_config": None}
        config.setdefault("activity_regularizer", None)
        return config
