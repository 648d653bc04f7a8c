"""How a Keras mask rides on tensors and flows from layer to layer (Keras 3's rules).

A layer's output carries its mask as the attribute ``_keras_mask`` (a boolean Tensor, or a
KerasTensor while a functional model is built). ``Layer.__call__`` reads the masks of its
arguments and passes them to ``call`` when ``call`` takes them:

- one tensor argument (a Tensor or a list/dict of them) and a ``mask`` parameter: ``mask=``
  the argument's mask(s), in the argument's structure;
- several tensor arguments (``MultiHeadAttention(query, value, key)``): each ``<name>_mask``
  parameter gets the mask of the argument ``<name>``.

A mask given explicitly is left as it is. After the call, a layer whose ``supports_masking``
is True sets each output's mask from ``compute_mask(first argument, previous mask)``, unless
every output already has one; a layer that does not support masking drops the mask, with a
warning, as Keras 3 does.
"""
import warnings

import jax
import numpy as np

from minikeras.symbolic import KerasTensor
from minikeras.tensor import Tensor, Variable

_TENSORS = (Tensor, Variable, KerasTensor, np.ndarray, jax.Array)


def get_mask(x):
    """The mask ``x`` carries (``x._keras_mask``), or None."""
    return getattr(x, "_keras_mask", None)


def set_mask(x, mask):
    """Makes ``x`` carry ``mask`` (None clears it); ``x`` must be a Tensor or KerasTensor."""
    if mask is None:
        if getattr(x, "_keras_mask", None) is not None:
            del x._keras_mask
        return
    x._keras_mask = mask


def _is_tensor(x):
    return isinstance(x, _TENSORS)


def _leaves(structure):
    return jax.tree_util.tree_leaves(structure, is_leaf=_is_tensor)


def masks_of(structure):
    """``structure`` with each tensor replaced by its mask (None where it has none)."""
    if _is_tensor(structure):
        return get_mask(structure)
    if isinstance(structure, (list, tuple)):
        return type(structure)(masks_of(x) for x in structure)
    if isinstance(structure, dict):
        return {k: masks_of(v) for k, v in structure.items()}
    return None


def _holds_tensor(value):
    return any(_is_tensor(leaf) for leaf in _leaves(value))


def mask_parameters(parameters):
    """What ``Layer.__call__`` fills in for a ``call`` with these parameters (an
    ``inspect.Signature``'s): ``(names, takes_mask, takes_named_masks)``; None if nothing."""
    names = list(parameters)
    takes_mask = "mask" in parameters
    named = tuple(n for n in names if n.endswith("_mask") and n[:-len("_mask")] in parameters)
    if not takes_mask and not named:
        return None
    return names, takes_mask, named


def fill_masks(signature, spec, inputs, args, kwargs):
    """Adds the masks ``call`` takes to ``kwargs`` (in place), from the masks the tensor
    arguments carry; ``spec`` is ``mask_parameters``'s. Returns the previous mask: the
    ``mask`` argument if one is given, else the first argument's masks."""
    names, takes_mask, named = spec
    if takes_mask and kwargs.get("mask") is None and not args and all(
            k in ("training",) or not _holds_tensor(v) for k, v in kwargs.items()):
        mask = masks_of(inputs)  # the common case: one tensor argument, passed first
        if any(m is not None for m in _leaves_or_none(mask)):
            kwargs["mask"] = mask
    elif takes_mask or named:
        bound = signature.bind_partial(inputs, *args, **kwargs).arguments
        tensors = {k: v for k, v in bound.items() if _holds_tensor(v)}
        if len(tensors) == 1 and takes_mask and bound.get("mask") is None:
            mask = masks_of(next(iter(tensors.values())))
            if any(m is not None for m in _leaves_or_none(mask)):
                kwargs["mask"] = mask
        elif len(tensors) > 1:
            for name, value in tensors.items():
                if f"{name}_mask" in named and bound.get(f"{name}_mask") is None:
                    mask = masks_of(value)
                    if any(m is not None for m in _leaves_or_none(mask)):
                        kwargs[f"{name}_mask"] = mask
    if kwargs.get("mask") is not None:
        return kwargs["mask"]
    return masks_of(inputs)


def _leaves_or_none(structure):
    if isinstance(structure, (list, tuple)):
        return [m for x in structure for m in _leaves_or_none(x)]
    if isinstance(structure, dict):
        return [m for x in structure.values() for m in _leaves_or_none(x)]
    return [structure]


def set_output_masks(layer, inputs, outputs, previous_mask):
    """Sets the outputs' masks after ``layer`` ran (see the module docstring)."""
    if not layer.supports_masking:
        if any(m is not None for m in _leaves_or_none(previous_mask)):
            warnings.warn(f"Layer '{layer.name}' (of type {type(layer).__name__}) was passed an input with a mask "
                          "attached to it. However, this layer does not support masking and will therefore destroy "
                          "the mask information. Downstream layers will not see the mask.", stacklevel=3)
        return
    flat = [x for x in _leaves(outputs) if isinstance(x, (Tensor, KerasTensor))]
    if not flat or all(get_mask(x) is not None for x in flat):
        return
    masks = layer.compute_mask(inputs, previous_mask)
    if masks is None:
        return
    for tensor, mask in zip(flat, _leaves_or_none(masks)):
        if mask is not None and get_mask(tensor) is None:
            set_mask(tensor, mask)
