"""Staging a Python function of Tensors into a jaxpr, for ``lax.cond`` and ``lax.while_loop``.

Inside ``mk.function`` a branch or a loop body is arbitrary Python that may assign
Variables. ``lax`` control flow needs pure functions, so ``stage`` runs the function once
under ``jax.make_jaxpr``: the Variables it assigns are put back to the values they had
before, and their final values become extra outputs of the jaxpr. The caller then threads
them through ``lax.cond``/``lax.while_loop`` and assigns the results once, outside.

Variables given as ``carried`` read their value from an input of the jaxpr (a loop carry);
the others are closed over (their value before the control flow, or the placeholder that
``mk.function``'s trace lifted them with).
"""
import contextlib

import jax
import numpy as np

from minikeras import _context
from minikeras.tensor import Tensor, Variable, to_array


def is_array_leaf(x):
    """Whether a pytree leaf is an array value (Tensor, Variable, jax or NumPy array)."""
    return isinstance(x, (Tensor, Variable, jax.Array, np.ndarray, np.generic))


def flatten(tree):
    """Leaves and treedef of ``tree``, with Tensors and Variables as leaves."""
    return jax.tree_util.tree_flatten(tree, is_leaf=lambda x: isinstance(x, (Tensor, Variable)))


class Staged:
    """A staged function: ``jaxpr`` maps (inputs..., carried values...) to (array outputs...,
    final values of ``written``...).

    Attributes:
      jaxpr: the ClosedJaxpr.
      out_tree: the treedef of the function's result.
      out_is_array: per result leaf, whether it is an array output (else static, in ``out_static``).
      out_static: the static leaves (None where the leaf is an array).
      n_out: how many array outputs precede the written values.
      written: the Variables the function assigned, in the order first seen.
    """

    def __init__(self, jaxpr, out_tree, out_is_array, out_static, written):
        self.jaxpr = jaxpr
        self.out_tree = out_tree
        self.out_is_array = out_is_array
        self.out_static = out_static
        self.n_out = sum(out_is_array)
        self.written = written

    @property
    def out_avals(self):
        return self.jaxpr.out_avals[:self.n_out]

    def call(self, *values):
        """Evaluates the jaxpr (inside a lax branch or body): (array outputs, written values)."""
        outs = jax.core.eval_jaxpr(self.jaxpr.jaxpr, self.jaxpr.consts, *values)
        return list(outs[:self.n_out]), list(outs[self.n_out:])

    def result(self, arrays):
        """The function's result structure with ``arrays`` in place of its array leaves."""
        arrays = iter(arrays)
        leaves = [Tensor(next(arrays)) if a else s for a, s in zip(self.out_is_array, self.out_static)]
        return jax.tree_util.tree_unflatten(self.out_tree, leaves)


def lifted_variables():
    """The Variables the current ``mk.function`` trace has touched so far (none outside one)."""
    return _context.call_state.traces[-1].variables() if _context.call_state.traces else []


def stage(fn, input_avals=(), carried=(), make_inputs=None, convert_python_numbers=True):
    """Runs ``fn(*make_inputs(values))`` once under ``jax.make_jaxpr`` and returns a ``Staged``.

    Every Variable ``fn`` touches gets its value back afterwards (also when ``fn`` raises): inside
    ``mk.function`` those the trace lifted, and the ``carried`` ones anywhere. Outside
    ``mk.function`` (an eager RNN layer stages its step with its weights carried) nothing
    watches the other Variables: assigning them a traced value raises, as any assignment of a
    traced value outside ``mk.function`` does, and ``written`` is empty.

    Args:
      fn: the Python function.
      input_avals: ``jax.ShapeDtypeStruct``s of the array inputs.
      carried: Variables whose value is taken from the inputs after ``input_avals``.
      make_inputs: builds ``fn``'s arguments from the input Tensors (default: pass them as is).
      convert_python_numbers: Python numbers in the result become array outputs (as
        ``tf.cond`` converts them); otherwise they stay static.
    """
    carried = list(carried)
    found = {}

    def body(*values):
        inputs = [Tensor(v) for v in values[:len(input_avals)]]
        before = {id(v): v._value for v in lifted_variables()}
        carried_views = contextlib.ExitStack()  # the loop's traced values, seen by this thread only
        for v, value in zip(carried, values[len(input_avals):]):
            carried_views.enter_context(_context.variable_seen_as(v, value))
        starts = {id(v): v._value for v in lifted_variables()}
        try:
            out = fn(*(make_inputs(inputs) if make_inputs else inputs))
            written = []
            for v in lifted_variables():
                start = starts.get(id(v))
                if start is None:  # first read inside fn: it started from its placeholder
                    start = _context.call_state.traces[-1].value_when_lifted(v)
                    starts[id(v)] = start
                if v._value is not start:
                    written.append((v, v._value))
        finally:
            carried_views.close()
            for v in lifted_variables():
                if id(v) in before:
                    v._value = before[id(v)]
                elif id(v) in starts:
                    v._value = starts[id(v)]
        leaves, tree = flatten(out)
        is_array = [is_array_leaf(x) or (convert_python_numbers and type(x) in (int, float, bool))
                    for x in leaves]
        found.update(tree=tree, is_array=is_array, static=[None if a else x for a, x in zip(is_array, leaves)],
                     written=[v for v, _ in written])
        return [to_array(x) for x, a in zip(leaves, is_array) if a] + [value for _, value in written]

    avals = list(input_avals) + [jax.ShapeDtypeStruct(v._value.shape, v._value.dtype) for v in carried]
    with _context.recording_with([]):  # staged values are never recorded on a tape
        jaxpr = jax.make_jaxpr(body)(*avals)
    return Staged(jaxpr, found["tree"], found["is_array"], found["static"], found["written"])
