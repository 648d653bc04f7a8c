"""The masks of the attention layers: Keras masks, causality and a sliding window ANDed into one
(B, T, S) boolean mask, and masked logits as Keras's ``ops.dot_product_attention`` writes them."""
import numpy as np

from minikeras.dtypes import as_dtype
from minikeras.ops.array import expand_dims
from minikeras.ops.elementwise import logical_and
from minikeras.ops.math import cast, where
from minikeras.tensor import Tensor, to_array


def as_bool(mask):
    """``mask`` (a Tensor or anything array-like) as a boolean Tensor."""
    mask = mask if isinstance(mask, Tensor) else Tensor(to_array(mask))
    return mask if mask.dtype.name == "bool" else cast(mask, "bool")


def combined_attention_mask(owner, query, value, key, query_mask=None, value_mask=None, key_mask=None,
                            attention_mask=None, use_causal_mask=False, sliding_window=None):
    """The (B, T..., S...) mask where a query position may attend to a key position, or None.

    ``attention_mask`` (broadcastable to (batch, target, source)), the inputs' masks (``query_mask``
    as (B, T, 1), ``value_mask``/``key_mask`` as (B, 1, S)), causality (position i attends to
    positions <= i) and ``sliding_window`` (|i - j| < window), ANDed. ``owner`` names the layer in
    errors (``"MultiHeadAttention 'mha'"``)."""
    t, s = query.shape[1], value.shape[1]
    auto = None
    for name, mask, axis, tensor in (("query_mask", query_mask, -1, query), ("value_mask", value_mask, -2, value),
                                     ("key_mask", key_mask, -2, key)):
        if mask is None:
            continue
        mask = as_bool(mask)
        if tuple(mask.shape) != tuple(tensor.shape[:mask.ndim]) or mask.ndim != tensor.ndim - 1:
            raise ValueError(f"{owner}: `{name}` must have the shape of its input without the last axis, "
                             f"{tuple(tensor.shape[:-1])}. Received: {name}.shape={tuple(mask.shape)}")
        mask = expand_dims(mask, axis)
        auto = mask if auto is None else logical_and(auto, mask)
    rows, cols = np.arange(t)[:, None], np.arange(s)[None, :]
    if use_causal_mask:
        auto = _and_constant(auto, rows >= cols)
    if sliding_window is not None:
        auto = _and_constant(auto, np.abs(rows - cols) < sliding_window)
    if attention_mask is not None:
        attention_mask = as_bool(attention_mask)
        expected = (query.shape[0],) + tuple(query.shape[1:-1]) + tuple(value.shape[1:-1])
        shape = tuple(attention_mask.shape)
        if len(shape) > len(expected) or any(m not in (1, n) for m, n in zip(shape[::-1], expected[::-1])):
            raise ValueError(f"{owner}: `attention_mask` must be broadcastable to (batch, target, source) = "
                             f"{expected}. Received: attention_mask.shape={shape}")
    if auto is not None:
        attention_mask = auto if attention_mask is None else logical_and(attention_mask, auto)
    return attention_mask


def masked_logits(logits, mask):
    """``logits`` (B, N, T, S) where ``mask`` (B, T, S) holds, a large negative number elsewhere.

    Not -inf, as Keras's ``ops.dot_product_attention``: a row with nothing to attend to then
    attends uniformly instead of giving NaN."""
    if mask is None:
        return logits
    while mask.ndim < logits.ndim:  # the same for every head
        mask = expand_dims(mask, -3)
    return where(mask, logits, float(-0.7 * np.finfo(as_dtype(logits.dtype)).max))


def _and_constant(mask, band):
    """``mask`` ANDed with the (T, S) boolean array ``band``, as (1, T, S)."""
    band = Tensor(to_array(band[None]))
    return band if mask is None else logical_and(mask, band)
