"""What a tape records, and its backward pass: the object that sits in ``_context.call_state.tapes``.

A ``Recording`` keeps the ids of the values it tracks (watched ones and everything computed
from them) and a list of records in execution order, so walking the list backward is a
topological order. Ops that carry no gradient (round, argmax, integer results, ...) are kept
in a side list, ``blocked``, only so that ``unconnected_gradients='raise'`` can say *why* a
gradient is missing (``diagnosis``). It implements the tape protocol (see ``minikeras.tape``).
"""
import contextlib

import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.core import Tracer

from minikeras import _context
from minikeras.ops.math import add as recorded_add
from minikeras.ops.op import Op, carries_gradient
from minikeras.tape import compiled
from minikeras.tape.reverse import reverse_accumulate
from minikeras.tape.targets import constant
from minikeras.tensor import Tensor, Variable


class Record:
    """One recorded op on a tape: what ran, on which tensors, producing which tensors."""

    __slots__ = ("op", "params", "inputs", "outs")

    def __init__(self, op, params, inputs, outs):
        self.op = op
        self.params = params
        self.inputs = inputs
        self.outs = outs


class ReadVariable(Op):
    """The identity op that turns a Variable read into a Tensor on the tapes that track it."""

    name = "read_variable"
    fusable = True

    def backward(self, record, cotangents, recorded):
        return cotangents

    def rule_on_arrays(self, g, out, inputs, params):
        return (g,)


READ_VARIABLE = ReadVariable()


class Recording:
    """The records of one GradientTape and the ids of the values it tracks.

    Attributes (read by ``compiled``, ``jacobian`` and ``diagnosis``):
      records: the differentiable ``Record``s, in execution order.
      blocked: ``(op name or None, inputs, outs)`` of ops whose outputs carry no gradient.
      watched: {id: the watched Tensor or Variable}.
      tracked: ids of the watched values and of every value computed from them.
    """

    def __init__(self, watch_accessed_variables=True):
        self.watch_accessed_variables = watch_accessed_variables
        self.clear()

    def clear(self):
        """Forgets every record and watched value (the memory they held is released)."""
        self.records = []
        self.blocked = []
        self.watched = {}
        self.tracked = set()
        self._shadowed = set()  # ids downstream of a blocked op, for the diagnosis

    # -- the tape protocol -------------------------------------------------------------
    def record(self, op, params, inputs, outs):
        """Records ``op`` if one of its inputs is tracked (see ``minikeras.tape``)."""
        tracked = self.tracked
        for x in inputs:
            if id(x) in tracked:
                break
        else:
            if self._shadowed and any(id(x) in self._shadowed for x in inputs):
                self._record_blocked(None, inputs, outs)  # downstream of a blocked value: propagate only
            return
        if op.differentiable:
            if len(outs) == 1 and carries_gradient(outs[0]._value.dtype):  # the common case, made short
                self.records.append(Record(op, params, inputs, outs))
                tracked.add(id(outs[0]))
                return
            kept = [o for o in outs if carries_gradient(o._value.dtype)]
            if kept:
                self.records.append(Record(op, params, inputs, outs))
                for o in kept:
                    tracked.add(id(o))
            if len(kept) == len(outs):
                return
            kept_ids = {id(o) for o in kept}
            self._record_blocked(f"{op.name} (integer result)", inputs, [o for o in outs if id(o) not in kept_ids])
        else:
            self._record_blocked(op.name, inputs, outs)

    def read_variable(self, variable, out):
        """``variable`` was read as the Tensor ``out``: watch it if it is trainable and this tape
        watches accessed Variables; record the read if the Variable is tracked."""
        if variable.trainable and self.watch_accessed_variables:
            self.watch(variable)
        if id(variable) in self.tracked:
            self.record(READ_VARIABLE, None, (variable,), (out,))

    def watch_accessed(self, variables):
        """An op read ``variables`` and records them as its inputs: watch the trainable ones if
        this tape watches accessed Variables."""
        if self.watch_accessed_variables:
            for v in variables:
                if v.trainable:
                    self.watch(v)

    # -- watching ----------------------------------------------------------------------
    def watch(self, x):
        """Tracks ``x`` (a Tensor or Variable) from now on."""
        key = id(x)
        if key not in self.watched:
            self.watched[key] = x
            self.tracked.add(key)

    def _record_blocked(self, name, inputs, outs):
        self.blocked.append((name, inputs, outs))
        for o in outs:
            self._shadowed.add(id(o))

    # -- the backward pass -------------------------------------------------------------
    def backward(self, seeds, source_ids, recorded):
        """Runs the records backward from ``seeds`` [(id, cotangent)]; returns {id: gradient}.

        ``recorded``: an outer tape records this backward pass (a higher-order gradient), so it
        runs rule by rule on Tensors with minikeras ops. Otherwise it runs on arrays: as one
        compiled program when the records' structure was seen before (``compiled``), else rule
        by rule (always so when a ``custom_gradient`` op was recorded).
        """
        if not recorded:
            seeds = [(key, seed._value if isinstance(seed, Tensor) else seed) for key, seed in seeds]
            traced = bool(_context.call_state.traces)
            plan = compiled.make_plan(self.records, self.tracked, [key for key, _ in seeds], source_ids, traced)
            if plan is not None:
                seed_values = [seed for _, seed in seeds]
                results = (compiled.replay_in_trace(plan)(plan.values, seed_values) if traced
                           else compiled.run(plan, seed_values))
                return {key: g for key, g in zip(source_ids, results) if g is not None}
            if traced:
                seeds = [(key, _staged(seed)) for key, seed in seeds]
        return self._backward_by_rule(seeds, set(source_ids), recorded)

    def _backward_by_rule(self, seeds, keep, recorded):
        if recorded:
            seeds = [(key, seed if isinstance(seed, Tensor) else Tensor(seed)) for key, seed in seeds]
        else:
            seeds = [(key, seed._value if isinstance(seed, Tensor) else seed) for key, seed in seeds]
        steps = [(r, [id(x) for x in r.inputs], [id(o) for o in r.outs]) for r in self.records]

        def backward(record, cotangents):
            if len(record.outs) > 1:
                cotangents = [c if c is not None else _zeros_like(o, recorded)
                              for c, o in zip(cotangents, record.outs)]
            return record.op.backward(record, cotangents, recorded)

        return reverse_accumulate(steps, seeds, keep, self.tracked, backward,
                                  recorded_add if recorded else jnp.add)

    def watched_variables(self):
        """The watched Variables (trainable or not), unordered."""
        return [x for x in self.watched.values() if isinstance(x, Variable)]


def _staged(seed):
    """``seed`` as a value of the enclosing trace. A default seed is a concrete array, and
    ``mk.function`` traces with constants computed eagerly, so what the rules compute from the
    seed alone (a mean's ``1 / n`` broadcast to the batch, a square's ``2 * g``) would become
    activation-sized constants of the program, resident for its lifetime; staged, they are
    ops that XLA fuses into their consumers (``compiled.replay_in_trace`` does the same by
    passing the seeds as arguments)."""
    if isinstance(seed, Tracer):
        return seed
    with _staging_constants():
        return lax.optimization_barrier(seed)


def _staging_constants():
    """The opposite of ``jax.ensure_compile_time_eval``: jax's private switch (no public one),
    or, in a jax without it, nothing (the seed then stays a constant: more memory, same values)."""
    try:
        from jax._src.config import eager_constant_folding
    except ImportError:
        return contextlib.nullcontext()
    return eager_constant_folding(False)


def _zeros_like(tensor, recorded):
    zeros = constant(np.zeros, tensor.shape, tensor.dtype)
    return Tensor(zeros) if recorded else zeros
