"""MultiHeadAttention (Keras 3's: EinsumDense projections named query/key/value/attention_output)."""
import string

import numpy as np

from minikeras import activations, constraints, initializers, regularizers
from minikeras.layers.activations.activation_layers import Softmax
from minikeras.layers.attention.attention_masks import as_bool, combined_attention_mask, masked_logits
from minikeras.layers.base import Layer
from minikeras.layers.core.einsum_dense import EinsumDense
from minikeras.layers.mask_flow import get_mask, set_mask
from minikeras.layers.regularization.dropout import Dropout
from minikeras.ops.array import expand_dims
from minikeras.ops.einsum import einsum, einsum_cotangent_last
from minikeras.saving.registry import register_builtin
from minikeras.tensor import Tensor
from minikeras.xla_cpu import tuning


@register_builtin("minikeras.layers")
class MultiHeadAttention(Layer):
    """Multi-head attention, as in "Attention is all you need" and Keras 3.

    ``query`` (B, T, dim), ``value`` (B, S, dim_v) and ``key`` (B, S, dim_k; default ``value``) are
    projected to ``num_heads`` heads (``query``/``key``: ``key_dim`` each, ``value``: ``value_dim``),
    the scaled dot products of queries and keys are softmaxed over the key positions, averaged into
    the values, and the heads projected back (``attention_output``) to ``output_shape`` (default:
    the query's last dimension).

    Args:
      num_heads, key_dim, value_dim (default ``key_dim``), dropout (on the attention probabilities,
        in training), use_bias, output_shape, attention_axes (the axes attention runs over; default
        all but the batch and last axes), kernel_initializer, bias_initializer, kernel_regularizer,
        bias_regularizer, activity_regularizer (of the projections), seed (of the dropout),
        use_gate (a sigmoid gate on the heads, Keras 3.10+), sliding_window (attend only within
        that many positions).

    Call arguments: ``query, value, key=None, attention_mask=None (B, T, S), bool: True attends``,
    ``return_attention_scores=False``, ``training``, ``use_causal_mask=False``. The Keras masks the
    inputs carry (``Embedding(mask_zero=True)``) are combined with ``attention_mask`` (a query mask
    as (B, T, 1), a value/key mask as (B, 1, S)); the output carries the query's mask.

    Weights: ``query``/``key``/``value`` kernels (dim, num_heads, key_dim | value_dim), biases
    (num_heads, key_dim | value_dim); ``attention_output`` kernel (num_heads, value_dim, out) and
    bias (out,), in Keras 3's order and file layout.

    >>> mha = mk.layers.MultiHeadAttention(num_heads=2, key_dim=8)
    >>> out, scores = mha(mk.ones((1, 4, 16)), mk.ones((1, 6, 16)), return_attention_scores=True)
    >>> out.shape, scores.shape
    ((1, 4, 16), (1, 2, 4, 6))
    """

    supports_masking = True

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True, output_shape=None,
                 attention_axes=None, sliding_window=None, flash_attention=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, use_gate=False, seed=None, **kwargs):
        if isinstance(num_heads, bool) or not isinstance(num_heads, (int, np.integer)) or num_heads <= 0:
            raise ValueError("Received an invalid value for argument `num_heads`, expected a positive integer. "
                             f"Received: num_heads={num_heads}")
        if isinstance(key_dim, bool) or not isinstance(key_dim, (int, np.integer)) or key_dim <= 0:
            raise ValueError("Received an invalid value for argument `key_dim`, expected a positive integer. "
                             f"Received: key_dim={key_dim}")
        if value_dim is not None and (not isinstance(value_dim, (int, np.integer)) or value_dim <= 0):
            raise ValueError("Received an invalid value for argument `value_dim`, expected a positive integer or "
                             f"`None`. Received: value_dim={value_dim}")
        if sliding_window is not None and (not isinstance(sliding_window, (int, np.integer)) or sliding_window <= 0):
            raise ValueError(f"`sliding_window` must be `None` or a positive integer. Received: "
                             f"sliding_window={sliding_window}")
        super().__init__(**kwargs)
        if flash_attention:
            raise NotImplementedError(f"MultiHeadAttention '{self.name}': flash_attention is not supported")
        self._num_heads = int(num_heads)
        self._key_dim = int(key_dim)
        self._value_dim = int(value_dim) if value_dim else self._key_dim
        self._dropout = float(dropout)
        self._use_bias = bool(use_bias)
        self._use_gate = bool(use_gate)
        if output_shape:
            output_shape = (output_shape,) if isinstance(output_shape, (int, np.integer)) else tuple(output_shape)
        self._output_shape_arg = output_shape or None
        if isinstance(attention_axes, int):
            attention_axes = (attention_axes,)
        elif attention_axes and not isinstance(attention_axes, (list, tuple)):
            raise ValueError(f"`attention_axes` must be an int, list, or tuple.Received: "
                             f"attention_axes={attention_axes}")
        self._attention_axes = tuple(attention_axes) if attention_axes else None
        self._sliding_window = sliding_window
        self._kernel_initializer = initializers.get(kernel_initializer)
        self._bias_initializer = initializers.get(bias_initializer)
        self._kernel_regularizer = regularizers.get(kernel_regularizer)
        self._bias_regularizer = regularizers.get(bias_regularizer)
        self._activity_regularizer = regularizers.get(activity_regularizer)
        self._kernel_constraint = constraints.get(kernel_constraint)
        self._bias_constraint = constraints.get(bias_constraint)
        self.seed = seed
        self._inverse_sqrt_key_dim = 1.0 / float(np.sqrt(float(self._key_dim)))
        self._value_shapes = None

    num_heads = property(lambda self: self._num_heads)
    key_dim = property(lambda self: self._key_dim)
    value_dim = property(lambda self: self._value_dim)
    dropout = property(lambda self: self._dropout)
    use_bias = property(lambda self: self._use_bias)
    attention_axes = property(lambda self: self._attention_axes)

    def get_config(self):
        return {**super().get_config(), "num_heads": self._num_heads, "key_dim": self._key_dim,
                "value_dim": self._value_dim, "dropout": self._dropout, "use_bias": self._use_bias,
                "use_gate": self._use_gate, "output_shape": self._output_shape_arg,
                "attention_axes": self._attention_axes, "sliding_window": self._sliding_window,
                "kernel_initializer": initializers.serialize(self._kernel_initializer),
                "bias_initializer": initializers.serialize(self._bias_initializer),
                "kernel_regularizer": regularizers.serialize(self._kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self._bias_regularizer),
                "activity_regularizer": regularizers.serialize(self._activity_regularizer),
                "kernel_constraint": constraints.serialize(self._kernel_constraint),
                "bias_constraint": constraints.serialize(self._bias_constraint), "seed": self.seed}

    # -- building --------------------------------------------------------------------------
    def __call__(self, query, value=None, key=None, **kwargs):
        if value is None and "value" not in kwargs:
            raise TypeError(f"MultiHeadAttention '{self.name}' must be called with query and value: "
                            "layer(query, value, key=None, ...)")
        if value is None:
            value = kwargs.pop("value")
        if not self.built:  # build() needs the value and key shapes, and Layer builds from the first argument
            self._value_shapes = (tuple(np.shape(value)) if not hasattr(value, "shape") else tuple(value.shape),
                                  None if key is None else tuple(key.shape if hasattr(key, "shape") else
                                                                 np.shape(key)))
        return super().__call__(query, value, key, **kwargs)

    def build(self, query_shape, value_shape=None, key_shape=None):
        if value_shape is None:
            if self._value_shapes is None:
                raise ValueError(f"MultiHeadAttention '{self.name}'.build needs query_shape and value_shape")
            value_shape, key_shape = self._value_shapes
        query_shape, value_shape = tuple(query_shape), tuple(value_shape)
        key_shape = value_shape if key_shape is None else tuple(key_shape)
        if value_shape[1:-1] != key_shape[1:-1]:
            raise ValueError("All dimensions of `value` and `key`, except the last one, must be equal. Received: "
                             f"value_shape={value_shape} and key_shape={key_shape}")
        if len(query_shape) != len(value_shape):
            raise ValueError(f"MultiHeadAttention '{self.name}': `query` and `value` must have the same rank. "
                             f"Received: query_shape={query_shape} and value_shape={value_shape}")
        if len(query_shape) < 3:
            raise ValueError(f"MultiHeadAttention '{self.name}' expects inputs of shape (batch, ..., features) with "
                             f"rank >= 3. Received: query_shape={query_shape}")
        rank = len(query_shape)
        heads_k, heads_v = [self._num_heads, self._key_dim], [self._num_heads, self._value_dim]
        self.query_dense = self._projection(rank, 1, heads_k, "query")
        self.query_dense.build(query_shape)
        self.key_dense = self._projection(rank, 1, heads_k, "key")
        self.key_dense.build(key_shape)
        if self._use_gate:
            self._gate_dense = self._projection(rank, 1, heads_v, "gate", activation="sigmoid")
            self._gate_dense.build(query_shape)
        self.value_dense = self._projection(rank, 1, heads_v, "value")
        self.value_dense.build(value_shape)
        projected_rank = rank + 1
        if self._attention_axes is None:
            self._attention_axes = tuple(range(1, projected_rank - 2))
        else:
            self._attention_axes = tuple(a if a >= 0 else (projected_rank - 1) + a for a in self._attention_axes)
        self._dot_product_equation, self._combine_equation, scores_rank = _attention_equations(
            projected_rank, self._attention_axes)
        norm_axes = tuple(range(scores_rank - len(self._attention_axes), scores_rank))
        self._softmax = Softmax(axis=norm_axes, dtype=self.dtype_policy)
        self._dropout_layer = Dropout(rate=self._dropout, dtype=self.dtype_policy, seed=self.seed)
        out_shape = self._output_shape_arg or (query_shape[-1],)
        self.output_dense = self._projection(rank, 2, list(out_shape), "attention_output")
        self.output_dense.build(tuple(query_shape[:-1]) + (self._num_heads, self._value_dim))
        for layer in (self.query_dense, self.key_dense, self.value_dense, self.output_dense):
            layer.built = True
        if self._use_gate:
            self._gate_dense.built = True
        self.built = True

    def _projection(self, rank, bound_dims, last_dims, name, activation=None):
        equation, bias_axes, output_rank = _projection_equation(rank - 1, bound_dims, len(last_dims))
        return EinsumDense(
            equation, output_shape=[None] * (output_rank - 1 - len(last_dims)) + list(last_dims),
            bias_axes=bias_axes if self._use_bias else None, activation=activation, name=name,
            kernel_initializer=initializers.get(initializers.serialize(self._kernel_initializer)),
            bias_initializer=initializers.get(initializers.serialize(self._bias_initializer)),
            kernel_regularizer=self._kernel_regularizer, bias_regularizer=self._bias_regularizer,
            activity_regularizer=self._activity_regularizer, kernel_constraint=self._kernel_constraint,
            bias_constraint=self._bias_constraint, dtype=self.dtype_policy)

    # -- calling ---------------------------------------------------------------------------
    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None, attention_mask=None,
             return_attention_scores=False, training=None, use_causal_mask=False):
        if key is None:
            key = value
        query_mask = get_mask(query) if get_mask(query) is not None else query_mask
        for tensor in (query, value, key):  # Keras 3 takes the masks off the inputs
            if isinstance(tensor, Tensor):
                set_mask(tensor, None)
        self._check_shapes(query, value, key)
        attention_mask = self._attention_mask(query, value, key, query_mask, value_mask, key_mask, attention_mask,
                                              use_causal_mask)
        gate = self._gate_dense(query) if self._use_gate else None
        query = self.query_dense(query)
        key = self.key_dense(key)
        value = self.value_dense(value)
        output, scores = self._compute_attention(query, key, value, attention_mask, training,
                                                 return_attention_scores)
        output = self.output_dense(output * gate if gate is not None else output)
        if query_mask is not None:
            set_mask(output, as_bool(query_mask))
        return (output, scores) if return_attention_scores else output

    def _compute_attention(self, query, key, value, attention_mask=None, training=None,
                           return_attention_scores=False):
        """``(output, scores)`` of the projected query (B, T, N, key_dim), key and value (B, S, N, d)."""
        fused = self._dropout == 0 and not return_attention_scores and query.ndim == 4
        if fused:  # Keras's ops.dot_product_attention: an all-masked row attends uniformly, not to nothing
            logits = self._scores(key, query) * self._inverse_sqrt_key_dim
            logits = masked_logits(logits, attention_mask)
            probs = activations.softmax(logits, axis=-1)
            return self._combine(probs, value), None
        query = query * self._inverse_sqrt_key_dim
        scores = self._scores(key, query)
        mask = attention_mask
        if mask is not None:
            for _ in range(scores.ndim - mask.ndim):
                mask = expand_dims(mask, -len(self._attention_axes) * 2 - 1)
        scores = self._softmax(scores, mask=mask)
        dropped = self._dropout_layer(scores, training=training) if self._dropout > 0 else scores
        return self._combine(dropped, value), scores

    # The same two products as Keras's einsums; with ``tuning.ATTENTION_OPERAND_ORDER`` their operands
    # (and their gradients' operands) in the order for which XLA:CPU moves whole rows of key_dim between
    # the projections' [batch, seq, heads, dim] and the products' [batch, heads, ...] layouts, rather
    # than transposing the query and the key's gradient across their last two axes: the query-key
    # product's gradients with the cotangent last, the combination with the values first.
    def _scores(self, key, query):
        if tuning.ATTENTION_OPERAND_ORDER:
            return einsum_cotangent_last(self._dot_product_equation, key, query)
        return einsum(self._dot_product_equation, key, query)

    def _combine(self, probs, value):
        if tuning.ATTENTION_OPERAND_ORDER:
            operands, out = self._combine_equation.split("->")
            probs_sub, value_sub = operands.split(",")
            return einsum(f"{value_sub},{probs_sub}->{out}", value, probs)
        return einsum(self._combine_equation, probs, value)

    def _check_shapes(self, query, value, key):
        if value.shape[1:-1] != key.shape[1:-1]:
            raise ValueError("All dimensions of `value` and `key`, except the last one, must be equal. Received: "
                             f"value_shape={tuple(value.shape)} and key_shape={tuple(key.shape)}")
        for name, tensor, layer in (("query", query, self.query_dense), ("key", key, self.key_dense),
                                    ("value", value, self.value_dense)):
            expected = layer.kernel.shape[0]
            if tensor.ndim != query.ndim or tensor.shape[-1] != expected:
                raise ValueError(f"MultiHeadAttention '{self.name}' expects `{name}` of rank {query.ndim} with last "
                                 f"dimension {expected} (the shape it was built for); received `{name}` of shape "
                                 f"{tuple(tensor.shape)}")

    def _attention_mask(self, query, value, key, query_mask, value_mask, key_mask, attention_mask, use_causal_mask):
        """The (B, T, S) mask: ``attention_mask``, the inputs' masks, causality and the window, ANDed."""
        return combined_attention_mask(f"MultiHeadAttention '{self.name}'", query, value, key, query_mask, value_mask,
                                       key_mask, attention_mask, use_causal_mask, self._sliding_window)

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        query_shape = tuple(query_shape)
        if self._output_shape_arg:
            return query_shape[:-1] + tuple(self._output_shape_arg)
        return query_shape


def _projection_equation(free_dims, bound_dims, output_dims):
    """Keras 3's ``_build_proj_equation``: ``(equation, bias_axes, output rank)``."""
    letters = string.ascii_lowercase
    free = letters[:free_dims]
    bound = letters[free_dims:free_dims + bound_dims]
    out = letters[free_dims + bound_dims:free_dims + bound_dims + output_dims]
    return f"{free}{bound},{bound}{out}->{free}{out}", out, len(free + out)


def _attention_equations(rank, attn_axes):
    """Keras 3's ``_build_attention_equation``: the query-key product and the combination
    einsums for projected tensors of ``rank``, and the rank of the scores."""
    letters = string.ascii_lowercase
    target = letters[:rank]
    batch_dims = tuple(np.delete(range(rank), attn_axes + (rank - 1,)))
    offset = rank
    source = ""
    for i in range(rank):
        if i in batch_dims or i == rank - 1:
            source += target[i]
        else:
            source += letters[offset]
            offset += 1
    product = "".join([target[i] for i in batch_dims] + [target[i] for i in attn_axes] +
                      [source[i] for i in attn_axes])
    return f"{source},{target}->{product}", f"{product},{source}->{target}", len(product)
