"""The arguments of ``gradient`` and ``jacobian``: targets, sources, seeds, and what to
answer for a source with no gradient."""
import enum

import jax
import numpy as np

from minikeras.tensor import Tensor, Variable, to_array


class UnconnectedGradients(str, enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"
    RAISE = "raise"


def unconnected_mode(value):
    """``value`` ('none', 'zero', 'raise' or an UnconnectedGradients) as an UnconnectedGradients."""
    try:
        return UnconnectedGradients(getattr(value, "value", value))
    except ValueError:
        raise ValueError(f"unconnected_gradients must be 'none', 'zero' or 'raise', received {value!r}") from None


def flatten(structure):
    """The leaves (Tensors, Variables and Nones) of a nest, and its treedef."""
    return jax.tree_util.tree_flatten(structure, is_leaf=lambda x: x is None or isinstance(x, (Tensor, Variable)))


def flat_sources(sources):
    """The sources of a ``gradient``/``jacobian`` call, flattened and checked; and the treedef."""
    flat, treedef = flatten(sources)
    for s in flat:
        if not isinstance(s, (Tensor, Variable)):
            raise ValueError(
                f"Passed in object {s!r} of type '{type(s).__name__}', not mk.Tensor or mk.Variable, as a source "
                "of GradientTape.gradient")
    return flat, treedef


def single_target(target, what):
    """``target`` if it is one Tensor or Variable; a ValueError naming ``what`` otherwise."""
    if not isinstance(target, (Tensor, Variable)):
        raise ValueError(f"{what} expects one mk.Tensor as target, received {type(target).__name__}")
    return target


def seeds(target, output_gradients):
    """[(target, cotangent)] for every target tensor (a list of targets is differentiated as its sum)."""
    targets, _ = flatten(target)
    if output_gradients is None:
        upstream = [None] * len(targets)
    else:
        upstream, _ = flatten(output_gradients)
        if len(upstream) != len(targets):
            raise ValueError(f"output_gradients must match target: {len(targets)} targets, "
                             f"{len(upstream)} output_gradients")
    result = []
    for t, u in zip(targets, upstream):
        if t is None:
            continue
        if not isinstance(t, (Tensor, Variable)):
            raise ValueError(f"GradientTape.gradient target must be mk.Tensor or mk.Variable, received "
                             f"{type(t).__name__}")
        seed = _ones(t.shape, t.dtype) if u is None else (u if isinstance(u, Tensor) else to_array(u, t.dtype))
        if tuple(seed.shape) != t.shape:
            raise ValueError(f"output_gradients entry has shape {tuple(seed.shape)}, target has shape {t.shape}")
        result.append((t, seed))
    return result


def constant(make, shape, dtype):
    """A constant made with NumPy (``make`` is np.zeros, np.ones, ...) and copied to the device:
    no kernel to compile per shape (``jax.device_put``: jnp.asarray compiles one inside a trace)."""
    with jax.ensure_compile_time_eval():
        return jax.device_put(make(shape, dtype))


_ONES = {}


def _ones(shape, dtype):
    """The default output gradient; cached, since an eager training loop asks for the same one
    every step."""
    key = (shape, dtype)
    ones = _ONES.get(key)
    if ones is None:
        ones = constant(np.ones, shape, dtype)
        if len(_ONES) > 256:
            _ONES.clear()
        _ONES[key] = ones
    return ones
