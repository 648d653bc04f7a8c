"""Attention (Luong-style dot product) and AdditiveAttention (Bahdanau-style), as in Keras 3."""
import numpy as np

from minikeras import activations
from minikeras.layers.attention.attention_masks import as_bool
from minikeras.layers.base import Layer
from minikeras.ops.array import expand_dims, transpose
from minikeras.ops.creation import zeros_like
from minikeras.ops.elementwise import logical_and, logical_not, tanh
from minikeras.ops.linalg import matmul
from minikeras.ops.math import where
from minikeras.ops.nn import dropout
from minikeras.ops.reduce import reduce_sum
from minikeras.saving.registry import register_builtin
from minikeras.tensor import Tensor, to_array


@register_builtin("minikeras.layers")
class Attention(Layer):
    """Dot-product attention: ``softmax(query @ key^T [* scale]) @ value``.

    Called on ``[query (B, Tq, dim), value (B, Tv, dim_v)]`` or ``[query, value, key (B, Tv, dim)]``;
    ``mask=[query_mask (B, Tq), value_mask (B, Tv)]`` (or the Keras masks the inputs carry): key
    positions where ``value_mask`` is False get no weight, output rows where ``query_mask`` is
    False are 0. ``use_causal_mask=True``: position i attends to positions <= i.
    ``return_attention_scores=True`` also returns the (B, Tq, Tv) weights.

    Args:
      use_scale: a trainable scalar ``scale`` multiplies the scores.
      score_mode: 'dot' (``query @ key^T``) or 'concat' (``sum(tanh(query + key))``, times a
        trainable scalar ``concat_score_weight``).
      dropout: the fraction of attention weights dropped in training; seed: its seed.

    >>> mk.layers.Attention()([mk.ones((2, 3, 4)), mk.ones((2, 5, 4))]).shape
    (2, 3, 4)
    """

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.use_scale = bool(use_scale)
        self.score_mode = score_mode
        self.dropout = float(dropout)
        self.seed = seed
        if score_mode not in ("dot", "concat"):
            raise ValueError("Invalid value for argument score_mode. Expected one of {'dot', 'concat'}. "
                             f"Received: score_mode={score_mode}")
        self.scale = None
        self.concat_score_weight = None

    def build(self, input_shape):
        self._validate_inputs(input_shape)
        if self.use_scale:
            self.scale = self.add_weight("scale", (), "ones")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight("concat_score_weight", (), "ones")
        self.built = True

    def _calculate_scores(self, query, key):
        if self.score_mode == "dot":
            scores = matmul(query, transpose(key, _swap_last(key.ndim)))
            return scores * self.scale if self.scale is not None else scores
        summed = expand_dims(query, -2) + expand_dims(key, -3)
        if self.scale is not None:
            summed = self.scale * summed
        return self.concat_score_weight * reduce_sum(tanh(summed), axis=-1)

    def _apply_scores(self, scores, value, scores_mask=None, training=False):
        if scores_mask is not None:
            padding = logical_not(scores_mask)
            if padding.ndim == 2:
                padding = expand_dims(padding, -2)
            big = 65504.0 if scores.dtype.name == "float16" else 1.0e9
            scores = where(padding, scores - big, scores)
        weights = activations.softmax(scores, axis=-1)
        if training and self.dropout > 0:
            weights = dropout(weights, self.dropout, seed=self.seed)
        return matmul(weights, value), weights

    def call(self, inputs, mask=None, training=False, return_attention_scores=False, use_causal_mask=False):
        self._validate_inputs(inputs, mask)
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) > 2 else value
        self._check_dims(query, value, key)
        q_mask = as_bool(mask[0]) if mask and mask[0] is not None else None
        v_mask = as_bool(mask[1]) if mask and mask[1] is not None else None
        for name, m, x in (("query", q_mask, query), ("value", v_mask, value)):
            if m is not None and tuple(m.shape) != tuple(x.shape[:-1]):
                raise ValueError(f"{type(self).__name__} '{self.name}': the {name} mask must have the shape of the "
                                 f"{name} without its last axis, {tuple(x.shape[:-1])}. Received: mask shape "
                                 f"{tuple(m.shape)}")
        scores = self._calculate_scores(query, key)
        scores_mask = v_mask
        if use_causal_mask:
            tq, tv = scores.shape[-2], scores.shape[-1]
            causal = Tensor(to_array(np.tril(np.ones((1, tq, tv), bool))))
            scores_mask = causal if v_mask is None else logical_and(expand_dims(v_mask, -2), causal)
        output, weights = self._apply_scores(scores, value, scores_mask, training=training)
        if q_mask is not None:
            output = where(expand_dims(q_mask, -1), output, zeros_like(output))
        return (output, weights) if return_attention_scores else output

    def _check_dims(self, query, value, key):
        if self.score_mode == "dot" or type(self) is not Attention:
            if query.shape[-1] != key.shape[-1]:
                raise ValueError(f"{type(self).__name__} '{self.name}': the query and the key must have the same "
                                 f"last dimension. Received: query shape {tuple(query.shape)}, key shape "
                                 f"{tuple(key.shape)}")
        if key.shape[:-1] != value.shape[:-1]:
            raise ValueError(f"{type(self).__name__} '{self.name}': the key and the value must have the same shape "
                             f"but for the last axis. Received: value shape {tuple(value.shape)}, key shape "
                             f"{tuple(key.shape)}")

    def compute_mask(self, inputs, mask=None):
        self._validate_inputs(inputs, mask)
        if mask is None or mask[0] is None:
            return None
        return as_bool(mask[0])

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[0][:-1]) + (input_shape[1][-1],)

    def _validate_inputs(self, inputs, mask=None):
        name = type(self).__name__
        if not isinstance(inputs, list):
            raise ValueError(f"{name} layer must be called on a list of inputs, namely [query, value] or [query, "
                             f"value, key]. Received: inputs={getattr(inputs, 'shape', inputs)}.")
        if len(inputs) < 2 or len(inputs) > 3:
            raise ValueError(f"{name} layer accepts inputs list of length 2 or 3, namely [query, value] or [query, "
                             f"value, key]. Received length: {len(inputs)}.")
        if mask is not None:
            if not isinstance(mask, list):
                raise ValueError(f"{name} layer mask must be a list, namely [query_mask, value_mask]. Received: "
                                 f"mask={mask}.")
            if len(mask) < 2 or len(mask) > 3:
                raise ValueError(f"{name} layer accepts mask list of length 2 or 3. Received: mask={mask}.")

    def get_config(self):
        return {**super().get_config(), "use_scale": self.use_scale, "score_mode": self.score_mode,
                "dropout": self.dropout, "seed": self.seed}


@register_builtin("minikeras.layers")
class AdditiveAttention(Attention):
    """Additive (Bahdanau) attention: scores ``sum(scale * tanh(query + key), axis=-1)``, with a
    trainable ``scale`` of shape (dim,) (``use_scale=True``, the default); otherwise as ``Attention``.

    >>> mk.layers.AdditiveAttention()([mk.ones((2, 3, 4)), mk.ones((2, 5, 4))]).shape
    (2, 3, 4)
    """

    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape):
        self._validate_inputs(input_shape)
        if self.use_scale:
            self.scale = self.add_weight("scale", (input_shape[0][-1],), "glorot_uniform")
        self.built = True

    def _calculate_scores(self, query, key):
        summed = tanh(expand_dims(query, -2) + expand_dims(key, -3))
        return reduce_sum(self.scale * summed if self.use_scale else summed, axis=-1)

    def get_config(self):
        config = super().get_config()
        del config["score_mode"]
        return config


def _swap_last(ndim):
    return tuple(range(ndim - 2)) + (ndim - 1, ndim - 2)

