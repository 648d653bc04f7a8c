"""Shape invariants of loops: ``mk.while_loop(..., shape_invariants=...)`` and autograph's
``set_loop_options(shape_invariants=...)``, as in TensorFlow.

A shape invariant is the most general shape a loop variable may take: a tuple or list of
ints and Nones (``(None, 2)``), or an ``mk.TensorSpec`` (its shape); None in the nest means
none for that variable. A ``TensorArray`` variable's invariant is not checked (TensorFlow
ignores it too). As in TensorFlow, eager loops ignore invariants; inside ``mk.function`` a
variable must enter the loop with a shape its invariant allows, and a body that gives it a
shape the invariant does not allow raises TensorFlow's ValueError. A loop that runs as
Python while tracing (its condition is known then) may change shapes within the invariants;
a loop whose condition is a traced Tensor is one XLA while loop, whose variables have fixed
shapes: a change of shape there, even one its invariant allows, is an error saying so.
"""
import jax
import numpy as np

from minikeras.ops.tensor_array import TensorArray
from minikeras.tensor import Tensor, Variable
from minikeras.tensor_spec import TensorSpec


def _is_shape(x):
    if x is None or isinstance(x, TensorSpec) or hasattr(x, "as_list"):
        return True
    return isinstance(x, (list, tuple)) and all(
        d is None or (isinstance(d, (int, np.integer)) and not isinstance(d, bool)) for d in x)


def _as_shape(x, what):
    if x is None:
        return None
    if isinstance(x, TensorSpec):
        x = x.shape
    elif hasattr(x, "as_list"):  # a TensorShape-like object
        x = x.as_list()
    if x is None:
        return None
    for d in x:
        if d is not None and d < 0:
            raise ValueError(f"{what}: a shape invariant's sizes are ints >= 0 or None, received {tuple(x)}")
    return tuple(None if d is None else int(d) for d in x)


def loop_leaves(state):
    """The loop variables of ``state`` (a nest), in order: Tensors, Variables, numbers and
    TensorArrays as single leaves."""
    return jax.tree_util.tree_leaves(state, is_leaf=lambda x: isinstance(x, (Tensor, Variable, TensorArray)))


def invariants_for(shape_invariants, state, what):
    """``shape_invariants`` (a nest like ``state``) as a list of shapes (tuples, or None),
    one per loop variable of ``state`` (``loop_leaves``). A ValueError, as TensorFlow's, when
    the nests differ."""
    leaves = loop_leaves(state)
    shapes = jax.tree_util.tree_leaves(shape_invariants, is_leaf=_is_shape)
    if len(shapes) != len(leaves) or not all(_is_shape(s) for s in shapes):
        raise ValueError(f"{what}: shape_invariants must have the structure of loop_vars (one shape, such as "
                         f"(None, 2) or an mk.TensorSpec, per loop variable): the two structures don't have the same "
                         f"nested structure. loop_vars has {len(leaves)} variables, shape_invariants is "
                         f"{shape_invariants!r}")
    return [None if isinstance(x, TensorArray) else _as_shape(s, what) for x, s in zip(leaves, shapes)]


def allows(invariant, shape):
    """Whether ``shape`` conforms with ``invariant`` (same rank, equal sizes where the
    invariant gives one); a None invariant allows anything."""
    if invariant is None:
        return True
    shape = tuple(shape)
    return len(shape) == len(invariant) and all(i is None or (type(d) is int and d == i)
                                                for i, d in zip(invariant, shape))


def check_entry(invariants, state, what, label):
    """Each variable of ``state`` enters the loop with a shape its invariant allows
    (``label(i)`` names variable i in the message)."""
    for i, (invariant, x) in enumerate(zip(invariants, loop_leaves(state))):
        shape = _shape_of(x)
        if shape is not None and not allows(invariant, shape):
            raise ValueError(f"{what}: the shape invariant specified for {label(i)} is not compatible with the initial "
                             f"shape of the loop variable. It enters the loop with shape {shape}, but the specified "
                             f"shape invariant is {invariant}.")


def check_iteration(invariants, state, what, label):
    """After an iteration each variable of ``state`` still conforms with its invariant
    (TensorFlow's ValueError)."""
    for i, (invariant, x) in enumerate(zip(invariants, loop_leaves(state))):
        shape = _shape_of(x)
        if shape is not None and not allows(invariant, shape):
            raise not_conforming(what, label(i), shape, invariant)


def not_conforming(what, name, shape, invariant):
    return ValueError(f"{what}: {name} has shape {tuple(shape)} after one iteration, which does not conform with the "
                      f"shape invariant {invariant}.")


def _shape_of(x):
    if isinstance(x, (Tensor, Variable)):
        return tuple(x._value.shape)
    if isinstance(x, (int, float, bool)):
        return ()
    return None
