"""Gradient checkpointing: ``recompute_grad``, as ``tf.recompute_grad``.

The forward pass of the wrapped function runs with no tape recording inside it, so the tape
keeps only one record for the whole call: its inputs (and the Variables it read) and its
outputs. The intermediate values die as soon as the forward pass is done. When a backward
pass reaches that record, ``f`` runs again on the same inputs to rebuild what the gradient
needs:

- it runs under a fresh ``GradientTape`` that watches the inputs and the Variables, and that
  tape's gradients, seeded with the output cotangents, are the record's input gradients;
- when an outer tape records the backward pass (second order and up) the cotangents stay that
  tape's Tensors, so it records the recomputation and the fresh tape's backward pass like any
  other ops;
- inside ``mk.function`` (no outer tape recording) the inputs and the cotangents first pass
  through a fence (below), and the fresh tape's backward pass is traced into the program like
  any tape's.

Why the fence: the whole step is one traced program, so a recomputation of ``f`` on the same
inputs is, to XLA, a copy of the forward pass, and common-subexpression elimination merges the
two (keeping every activation alive until the backward pass: no saving at all); nothing ties
the recomputation to the backward pass either, so the scheduler is free to run it early.
(``jax.checkpoint``'s ``optimization_barrier`` does not help: XLA:CPU expands optimization
barriers before it eliminates common subexpressions, jax 0.10.) So the inputs of the
recomputation and the output cotangents together first pass through a ``while`` loop whose
trip count (0 or 1) depends on the data, and that swaps two copies of its state: XLA cannot see
that its outputs equal its inputs, so it can neither merge the recomputation with the forward
pass nor hoist it, and since the cotangents go in, the recomputation cannot start before the
backward pass reaches ``f``. The forward's intermediates are then freed as soon as ``f``'s
outputs exist.

Why minikeras's own tape and not ``jax.vjp(jax.checkpoint(f))`` there: ``mk.function`` traces
with constants computed eagerly, a global setting of jax's that reaches into its own
differentiation rules, and the gradient of ``max`` (a ReLU) builds arrays of ones and twos the
size of the activation from no traced value: they became constants of the program, four
activations per block resident for the program's lifetime, and the process's peak memory grew
instead of shrinking. minikeras's rules compute from the traced values. Measured in a fresh
process per variant (``benchmarks/recompute.py``).

Random ops inside ``f`` (``Dropout(training=True)``, ``mk.random.*``) draw from the global
generator; the recomputation puts the generator back to the state it had before the forward
pass, draws the same numbers, and leaves the generator where the forward pass left it.
"""
import functools

import jax
import jax.numpy as jnp
from jax import lax

from minikeras import _context
from minikeras.ops.op import Op, carries_gradient
from minikeras.ops.random import get_global_generator
from minikeras.ops.variable_reads import VariableReads
from minikeras.tape.gradient_tape import GradientTape
from minikeras.tensor import Tensor, Variable, to_array


def _flatten(tree):
    return jax.tree_util.tree_flatten(tree, is_leaf=lambda x: isinstance(x, (Tensor, Variable)))


class _Replay:
    """The random generator's state before the forward pass (or None if ``f`` drew nothing),
    to draw the same numbers again when ``f`` is recomputed."""

    def __init__(self, before, generator):
        self.generator = generator
        self.before = before

    def run(self, thunk):
        """Runs ``thunk()`` with the generator as it was before the forward pass, then puts the
        generator back to the state it had when ``run`` was called."""
        if self.before is None:
            return thunk()
        now = to_array(self.generator)
        self.generator.assign(self.before)
        try:
            return thunk()
        finally:
            self.generator.assign(now)


class _RecomputeOp(Op):
    """A recorded call of a ``recompute_grad`` function. Its record holds only the inputs,
    the Variables read and the outputs; ``backward`` runs the function again."""

    def __init__(self, name, call, n_inputs, variables, replay):
        self.name = f"recompute_grad({name})"
        self.call = call            # (*input Tensors) -> leaves of f's output
        self.n_inputs = n_inputs
        self.variables = variables
        self.replay = replay

    def backward(self, record, cotangents, recorded):
        inputs = list(record.inputs[:self.n_inputs])
        if recorded:
            # the cotangents stay the outer tape's Tensors: they depend on what it watches
            # (the cotangent of a block's output comes from the blocks after it)
            grads = self._on_a_fresh_tape(inputs, record.outs, cotangents)
            return [None if g is None else (g if isinstance(g, Tensor) else Tensor(g)) for g in grads]
        cotangents = [None if c is None else to_array(c) for c in cotangents]
        if _context.call_state.traces:
            inputs, cotangents = self._fenced(inputs, cotangents)
        grads = self._on_a_fresh_tape(inputs, record.outs, cotangents)
        return [None if g is None else to_array(g) for g in grads]

    def _on_a_fresh_tape(self, inputs, outs, cotangents):
        sources = inputs + list(self.variables)
        with GradientTape(watch_accessed_variables=False) as tape:
            for x in sources:
                tape.watch(x)
            leaves = self.replay.run(lambda: self.call(*inputs))
        targets, seeds = [], []
        for leaf, out, c in zip(leaves, outs, cotangents):
            if c is not None and isinstance(leaf, (Tensor, Variable)) and carries_gradient(leaf.dtype):
                targets.append(leaf)
                seeds.append(Tensor(c) if not isinstance(c, Tensor) else c)
        if not targets:
            return [None] * len(sources)
        return tape.gradient(targets, sources, output_gradients=seeds)

    def _fenced(self, inputs, cotangents):
        """``inputs`` and ``cotangents`` through ``_fence``, as the recomputation's inputs inside
        a trace (see the module docstring)."""
        arrays = _fence([to_array(x) for x in inputs], after=[c for c in cotangents if c is not None])
        return [Tensor(a) for a in arrays], cotangents


def _fence(arrays, after):
    """``arrays`` through a ``while`` loop that XLA cannot see through (see the module
    docstring): the same values, but nothing computed from them can be merged with what
    produced them, or run before the arrays ``after`` (the cotangents) exist."""
    def swap(state):
        i, a, b = state
        return i + 1, b, a

    # Both halves of the state hold ``arrays``, so the result is right whatever the trip
    # count; the count (0 or 1) comes from the cotangents' data, so XLA can neither know it
    # and fold the loop nor run it before the backward pass reaches ``f``.
    probe = next(leaf for leaf in after if leaf.size)
    start = (jnp.ravel(probe)[0] > 0).astype(jnp.int32)
    _, fenced, _ = lax.while_loop(lambda state: state[0] < 1, swap, (start, arrays, arrays))
    return fenced


def _input_tensor(x):
    if isinstance(x, Variable):
        return x.value()  # recorded on the tapes, as any read
    return x if isinstance(x, Tensor) else Tensor(to_array(x))


def recompute_grad(f):
    """Wraps ``f`` so its intermediate values are recomputed in the backward pass, not kept.

    ``mk.recompute_grad(f)(*args, **kwargs)`` returns what ``f`` returns. Tensor arguments
    (positional) are differentiable inputs; keyword arguments are passed as they are. A tape
    keeps only the call's inputs, outputs and the Variables ``f`` read; gradients of those
    Variables are returned like any other. Works eagerly, inside ``mk.function`` (where XLA
    is kept from merging the recomputation with the forward pass: see the module docstring),
    with nested tapes (second and higher order), and with random ops such as ``Dropout``
    inside ``f``, which draw the same values when ``f`` is recomputed.

    Trades compute for memory: the backward pass runs ``f`` once more. What it saves is bounded by
    what it keeps: a call's inputs stay alive until the backward pass reaches it, so wrapping
    every block of a deep stack keeps every block's input (about half of the plain step's
    activations in a residual stack); wrapping runs of about ``sqrt(n)`` of the ``n`` blocks keeps
    only the runs' inputs and one run's activations at a time (docs/recompute.md).

    >>> block = mk.layers.Dense(64, activation="relu")
    >>> checkpointed = mk.recompute_grad(lambda x: block(x))
    >>> with mk.GradientTape() as tape:
    ...     loss = mk.reduce_sum(checkpointed(mk.ones((2, 8))))
    >>> len(tape.gradient(loss, block.trainable_variables))
    2
    """
    if not callable(f):
        raise TypeError(f"mk.recompute_grad expects a callable, received {type(f).__name__}: {f!r}")
    name = getattr(f, "__name__", type(f).__name__)

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        if not _context.call_state.tapes:
            return f(*args, **kwargs)
        inputs = [_input_tensor(a) for a in args]
        generator = get_global_generator()
        before = to_array(generator)
        collector = VariableReads()
        saved = list(_context.call_state.tapes)
        with _context.recording_with([collector]):
            y = f(*inputs, **kwargs)
        leaves, tree = _flatten(y)
        # fresh Tensors, so that an output is never also an input (``lambda x: x``)
        outs = tuple(Tensor(to_array(leaf)) for leaf in leaves)
        variables = [v for v in collector.variables.values() if v.trainable]
        replay = _Replay(before if to_array(generator) is not before else None, generator)

        def call(*xs):
            return _flatten(f(*xs, **kwargs))[0]

        op = _RecomputeOp(name, call, len(inputs), variables, replay)
        record_inputs = tuple(inputs) + tuple(variables)
        for tape in saved:
            tape.watch_accessed(variables)
            tape.record(op, None, record_inputs, outs)
        return jax.tree_util.tree_unflatten(tree, list(outs))

    return wrapped


__all__ = ["recompute_grad"]
