"""GroupQueryAttention (Keras 3's ``GroupedQueryAttention``): fewer key/value heads than query heads."""
import numpy as np

from minikeras import activations, constraints, initializers, regularizers
from minikeras.layers.activations.activation_layers import Softmax
from minikeras.layers.attention.attention_masks import as_bool, combined_attention_mask, masked_logits
from minikeras.layers.base import Layer
from minikeras.layers.core.einsum_dense import EinsumDense
from minikeras.layers.mask_flow import set_mask
from minikeras.layers.regularization.dropout import Dropout
from minikeras.ops.array import expand_dims, gather
from minikeras.ops.einsum import einsum
from minikeras.saving.registry import register_builtin
from minikeras.tensor import Tensor

_DOT_PRODUCT = "bquh,bkuh->buqk"
_COMBINE = "buqk,bkuh->bquh"


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"GroupQueryAttention: `{name}` must be a positive integer. Received: {name}={value!r}")
    return int(value)


@register_builtin("minikeras.layers", name="GroupQueryAttention")
class GroupedQueryAttention(Layer):
    """Grouped-query attention (Ainslie et al., 2023), as Keras 3's ``layers.GroupQueryAttention``.

    ``query`` (B, T, dim) is projected to ``num_query_heads`` heads of ``head_dim``; ``key``
    (B, S, dim_k; default ``value``) and ``value`` (B, S, dim_v) to ``num_key_value_heads``
    heads, each shared by ``num_query_heads // num_key_value_heads`` consecutive query heads.
    Scaled dot products are softmaxed over the key positions, average the values, and the heads
    are projected back to ``dim`` (``attention_output``). One key/value head is multi-query
    attention; as many as query heads is multi-head attention.

    Args:
      head_dim, num_query_heads, num_key_value_heads (must divide ``num_query_heads``),
      dropout (on the attention probabilities, in training), use_bias, sliding_window (attend
      only to keys fewer than that many positions away), kernel_initializer, bias_initializer,
      kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
      bias_constraint (of the projections), use_gate (a sigmoid gate of the query on the heads),
      seed (of the dropout).

    Call arguments: ``query, value, key=None, attention_mask=None`` ((B, T, S), True attends),
    ``return_attention_scores=False`` (then also the (B, num_query_heads, T, S) probabilities),
    ``training``, ``use_causal_mask=False``. The Keras masks the inputs carry are combined with
    ``attention_mask``. A query row that may attend to nothing averages every value (Keras's
    ``dot_product_attention``) unless scores or dropout are asked for (then it gives zeros).

    Weights, in Keras 3's order and file layout (``_query_dense``, ``_key_dense``, ``_gate_dense``,
    ``_value_dense``, ``_output_dense``): ``query`` kernel (dim, num_query_heads, head_dim),
    ``key``/``value`` kernels (dim, num_key_value_heads, head_dim), biases without the first
    axis; ``attention_output`` kernel (num_query_heads, head_dim, dim), bias (dim,).

    >>> gqa = mk.layers.GroupQueryAttention(head_dim=4, num_query_heads=4, num_key_value_heads=2)
    >>> out, scores = gqa(mk.ones((1, 3, 8)), mk.ones((1, 5, 8)), return_attention_scores=True)
    >>> out.shape, scores.shape
    ((1, 3, 8), (1, 4, 3, 5))
    """

    supports_masking = True

    def __init__(self, head_dim, num_query_heads, num_key_value_heads, dropout=0.0, use_bias=True,
                 sliding_window=None, flash_attention=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, use_gate=False, seed=None, **kwargs):
        self.head_dim = _positive_int(head_dim, "head_dim")
        self.num_query_heads = _positive_int(num_query_heads, "num_query_heads")
        self.num_key_value_heads = _positive_int(num_key_value_heads, "num_key_value_heads")
        if self.num_query_heads % self.num_key_value_heads != 0:
            raise ValueError("`num_query_heads` must be divisible by `num_key_value_heads`. Received: "
                             f"num_query_heads={num_query_heads}, num_key_value_heads={num_key_value_heads}")
        if sliding_window is not None and (isinstance(sliding_window, bool) or
                                           not isinstance(sliding_window, (int, np.integer)) or sliding_window <= 0):
            raise ValueError("`sliding_window` must be `None` or a positive integer. "
                             f"Received: sliding_window={sliding_window}")
        super().__init__(**kwargs)
        if flash_attention:
            raise NotImplementedError(f"GroupQueryAttention '{self.name}': flash_attention is not supported")
        self.num_repeats = self.num_query_heads // self.num_key_value_heads
        self.dropout = float(dropout)
        self.use_bias = bool(use_bias)
        self.use_gate = bool(use_gate)
        self.sliding_window = None if sliding_window is None else int(sliding_window)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.seed = seed
        self._inverse_sqrt_head_dim = 1.0 / float(np.sqrt(float(self.head_dim)))
        # the query head each of the num_query_heads heads reads its key and value from
        self._kv_head_of = np.arange(self.num_query_heads, dtype=np.int32) // self.num_repeats
        self._value_shapes = None

    def get_config(self):
        return {**super().get_config(), "head_dim": self.head_dim, "num_query_heads": self.num_query_heads,
                "num_key_value_heads": self.num_key_value_heads, "use_bias": self.use_bias,
                "use_gate": self.use_gate, "sliding_window": self.sliding_window, "dropout": self.dropout,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "activity_regularizer": regularizers.serialize(self.activity_regularizer),
                "kernel_constraint": constraints.serialize(self.kernel_constraint),
                "bias_constraint": constraints.serialize(self.bias_constraint), "seed": self.seed}

    # -- building --------------------------------------------------------------------------
    def __call__(self, query, value=None, key=None, **kwargs):
        if value is None and "value" not in kwargs:
            raise TypeError(f"GroupQueryAttention '{self.name}' must be called with query and value: "
                            "layer(query, value, key=None, ...)")
        if value is None:
            value = kwargs.pop("value")
        if not self.built:  # build() needs the value and key shapes, and Layer builds from the first argument
            self._value_shapes = (_shape_of(value), None if key is None else _shape_of(key))
        return super().__call__(query, value, key, **kwargs)

    def build(self, query_shape, value_shape=None, key_shape=None):
        if value_shape is None:
            if self._value_shapes is None:
                raise ValueError(f"GroupQueryAttention '{self.name}'.build needs query_shape and value_shape")
            value_shape, key_shape = self._value_shapes
        query_shape, value_shape = tuple(query_shape), tuple(value_shape)
        key_shape = value_shape if key_shape is None else tuple(key_shape)
        for name, shape in (("query", query_shape), ("value", value_shape), ("key", key_shape)):
            if len(shape) != 3:
                raise ValueError(f"GroupQueryAttention '{self.name}' expects `{name}` of shape (batch, sequence, "
                                 f"features). Received: {name}_shape={shape}")
        self.feature_dim = query_shape[-1]
        query_heads, kv_heads = (None, self.num_query_heads, self.head_dim), (None, self.num_key_value_heads,
                                                                             self.head_dim)
        self._query_dense = self._projection("bqm,muh->bquh", query_heads, "uh", "query")
        self._query_dense.build(query_shape)
        self._key_dense = self._projection("bkm,mvh->bkvh", kv_heads, "vh", "key")
        self._key_dense.build(key_shape)
        if self.use_gate:
            self._gate_dense = self._projection("bqm,muh->bquh", query_heads, "uh", "gate", activation="sigmoid")
            self._gate_dense.build(query_shape)
        self._value_dense = self._projection("bkm,mvh->bkvh", kv_heads, "vh", "value")
        self._value_dense.build(value_shape)
        self._softmax = Softmax(axis=-1, dtype=self.dtype_policy)
        self._dropout_layer = Dropout(rate=self.dropout, dtype=self.dtype_policy, seed=self.seed)
        self._output_dense = self._projection("bquh,uhm->bqm", (None, self.feature_dim), "m", "attention_output")
        self._output_dense.build((None, None, self.num_query_heads, self.head_dim))
        for layer in self._projections():
            layer.built = True
        self.built = True

    def _projections(self):
        gate = (self._gate_dense,) if self.use_gate else ()
        return (self._query_dense, self._key_dense) + gate + (self._value_dense, self._output_dense)

    def _projection(self, equation, output_shape, bias_axes, name, activation=None):
        return EinsumDense(
            equation, output_shape=list(output_shape), bias_axes=bias_axes if self.use_bias else None,
            activation=activation, name=name,
            kernel_initializer=initializers.get(initializers.serialize(self.kernel_initializer)),
            bias_initializer=initializers.get(initializers.serialize(self.bias_initializer)),
            kernel_regularizer=self.kernel_regularizer, bias_regularizer=self.bias_regularizer,
            activity_regularizer=self.activity_regularizer, kernel_constraint=self.kernel_constraint,
            bias_constraint=self.bias_constraint, dtype=self.dtype_policy)

    # -- calling ---------------------------------------------------------------------------
    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None, attention_mask=None,
             return_attention_scores=False, training=None, use_causal_mask=False):
        if key is None:
            key = value
        for tensor in (query, value, key):  # as Keras 3: the masks were taken as arguments
            if isinstance(tensor, Tensor):
                set_mask(tensor, None)
        self._check_shapes(query, value, key)
        attention_mask = self._attention_mask(query, value, query_mask, value_mask, key_mask, attention_mask,
                                              use_causal_mask)
        gate = self._gate_dense(query) if self.use_gate else None
        query = self._query_dense(query)
        key = gather(self._key_dense(key), self._kv_head_of, axis=2)  # (B, S, num_query_heads, head_dim)
        value = gather(self._value_dense(value), self._kv_head_of, axis=2)
        output, scores = self._compute_attention(query, key, value, attention_mask, training, return_attention_scores)
        output = self._output_dense(output * gate if gate is not None else output)
        if query_mask is not None:
            set_mask(output, as_bool(query_mask))
        return (output, scores) if return_attention_scores else output

    def _compute_attention(self, query, key, value, attention_mask, training, return_attention_scores):
        """``(output, scores)`` of the projected query (B, T, N, h), key and value (B, S, N, h)."""
        mask = attention_mask
        if mask is not None:
            while mask.ndim < 4:  # (B, T, S) -> (B, 1, T, S): the same for every head
                mask = expand_dims(mask, -3)
        if self.dropout == 0 and not return_attention_scores:
            # Keras's dot_product_attention: a row with nothing to attend to attends uniformly
            logits = einsum(_DOT_PRODUCT, query, key) * self._inverse_sqrt_head_dim
            logits = masked_logits(logits, mask)
            return einsum(_COMBINE, activations.softmax(logits, axis=-1), value), None
        scores = einsum(_DOT_PRODUCT, query * self._inverse_sqrt_head_dim, key)
        scores = self._softmax(scores, mask=mask)
        dropped = self._dropout_layer(scores, training=training) if self.dropout > 0 else scores
        return einsum(_COMBINE, dropped, value), scores

    def _check_shapes(self, query, value, key):
        if value.shape[1:-1] != key.shape[1:-1]:
            raise ValueError("All dimensions of `value` and `key`, except the last one, must be equal. Received: "
                             f"value_shape={tuple(value.shape)} and key_shape={tuple(key.shape)}")
        for name, tensor, layer in (("query", query, self._query_dense), ("key", key, self._key_dense),
                                    ("value", value, self._value_dense)):
            expected = layer.kernel.shape[0]
            if tensor.ndim != 3 or tensor.shape[-1] != expected:
                raise ValueError(f"GroupQueryAttention '{self.name}' expects `{name}` of shape (batch, sequence, "
                                 f"{expected}) (the shape it was built for); received `{name}` of shape "
                                 f"{tuple(tensor.shape)}")

    def _attention_mask(self, query, value, query_mask, value_mask, key_mask, attention_mask, use_causal_mask):
        """The (B, T, S) mask: ``attention_mask``, the inputs' masks, causality and the window, ANDed."""
        return combined_attention_mask(f"GroupQueryAttention '{self.name}'", query, value, value, query_mask,
                                       value_mask, key_mask, attention_mask, use_causal_mask, self.sliding_window)

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        query_shape = tuple(query_shape)
        if value_shape is not None:
            value_shape = tuple(value_shape)
            key_shape = value_shape if key_shape is None else tuple(key_shape)
            if query_shape[-1] != value_shape[-1]:
                raise ValueError("The last dimension of `query_shape` and `value_shape` must be equal, but are "
                                 f"{query_shape[-1]}, {value_shape[-1]}. Received: query_shape={query_shape}, "
                                 f"value_shape={value_shape}")
            if value_shape[1:-1] != key_shape[1:-1]:
                raise ValueError("All dimensions of `value` and `key`, except the last one, must be equal. "
                                 f"Received: value_shape={value_shape} and key_shape={key_shape}")
        return query_shape


def _shape_of(x):
    return tuple(x.shape) if hasattr(x, "shape") else tuple(np.shape(x))

