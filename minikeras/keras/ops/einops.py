"""``keras.ops.rearrange``: einops-style axis rearrangement (Keras 3's ``keras/src/ops/einops.py``).

    rearrange(images, "b (h1 h) (w1 w) c -> (b h1 w1) h w c", h1=2, w1=2)

Input axes may be split (``(h1 h)``, all but one length given as keywords), output axes
permuted and merged; the whole is one reshape, transpose and reshape, recorded as one op.
"""
import math
import re

import jax.numpy as jnp

from minikeras.keras.ops.keras_op import keras_op
from minikeras.keras.ops.numpy_call import keras_input, run

__all__ = ["rearrange"]


def _groups(side):
    return [re.findall(r"\w+", g) for g in re.findall(r"\w+|\(.*?\)", side)]


def _plan(pattern, shape, axes_lengths):
    """``(split_shape, order, out_shape)`` for ``pattern`` on a tensor of ``shape``."""
    left, right = re.split(r"\s*->\s*", pattern)
    ins, outs = _groups(left), _groups(right)
    if len(ins) != len(shape):
        raise ValueError(f"keras.ops.rearrange: the pattern {pattern!r} names {len(ins)} input axes, but the "
                         f"tensor has shape {tuple(shape)}")
    sizes = dict(axes_lengths)
    for group, dim in zip(ins, shape):
        unknown = [a for a in group if a not in sizes]
        if len(group) == 1 and not unknown:
            if sizes[group[0]] != dim:
                raise ValueError(f"keras.ops.rearrange: axis {group[0]!r} has length {dim}, not {sizes[group[0]]}")
            continue
        if len(unknown) > 1:
            raise ValueError(f"keras.ops.rearrange: give the lengths of all but one of the axes {group} in "
                             f"{pattern!r} as keywords")
        known = math.prod(sizes[a] for a in group if a in sizes)
        if unknown:
            sizes[unknown[0]] = dim // known
    flat_in = [a for g in ins for a in g]
    flat_out = [a for g in outs for a in g]
    if sorted(flat_in) != sorted(flat_out):
        raise ValueError(f"keras.ops.rearrange: the pattern {pattern!r} must name the same axes on both sides")
    split = tuple(sizes[a] for a in flat_in)
    order = tuple(flat_in.index(a) for a in flat_out)
    out_shape = tuple(math.prod(sizes[a] for a in g) for g in outs)
    return split, order, out_shape


def _rearrange(x, *, split, order, out_shape):
    return jnp.reshape(jnp.transpose(jnp.reshape(x, split), order), out_shape)


@keras_op("rearrange")
def rearrange(tensor, pattern, **axes_lengths):
    """``tensor`` with its axes rearranged as the einops ``pattern`` says (see the module docstring)."""
    tensor = keras_input(tensor)
    split, order, out_shape = _plan(pattern, tuple(tensor.shape), axes_lengths)
    return run("rearrange", _rearrange, tensor, split=split, order=order, out_shape=out_shape)
