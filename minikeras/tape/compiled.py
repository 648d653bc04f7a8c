"""The backward pass of a tape as one compiled program, reused when the tape's shape repeats.

An eager training loop records the same sequence of ops every step. Running each gradient
rule as its own jitted call costs one dispatch per op; instead, a tape's records are reduced
to a *structure* — for each record its op, static parameters and which earlier values feed
it, plus the shapes and dtypes of the values that came from outside — and the backward pass
over that structure is traced once into one ``jax.jit`` program. The first time a structure
is seen the tape runs rule by rule (nothing new is compiled for a one-off tape); from the
second time on, the whole backward pass is one dispatch.

Only used when nothing records the backward pass (no outer tape) and every recorded op is
``fusable``, a pure function of arrays (``custom_gradient`` ops, whose grad_fn is arbitrary
Python, are not). The walk itself is ``reverse.reverse_accumulate``, as for the rule-by-rule pass.
"""
import jax
import jax.numpy as jnp
from jax.core import Tracer
from jax.extend.core import Literal

from minikeras.tape.reverse import reverse_accumulate
from minikeras.tensor import Tensor
from minikeras.xla_cpu import jit

_PROGRAMS = {}  # structure key -> _Program (compiled from the 2nd sighting)
MAX_PROGRAMS = 64  # structures remembered; the oldest is forgotten first


class Plan:
    """One tape's backward pass, reduced to a hashable structure and the arrays it reads."""

    __slots__ = ("key", "steps", "values", "slot_value", "leaf_tracked", "seed_slots", "source_slots")

    def __init__(self, key, steps, values, slot_value, leaf_tracked, seed_slots, source_slots):
        self.key = key
        self.steps = steps
        self.values = values
        self.slot_value = slot_value
        self.leaf_tracked = leaf_tracked
        self.seed_slots = seed_slots
        self.source_slots = source_slots


def make_plan(records, tracked, seed_ids, source_ids, traced=False):
    """A Plan for running ``records`` backward from ``seed_ids`` to ``source_ids``, or None
    when a record cannot be fused (or a seed is not a recorded value). ``traced``: the values
    are tracers of an enclosing ``mk.function``; the plan is replayed inline, not compiled."""
    # This loop runs on every eager gradient call, so it is written for speed.
    slots = {}       # id(tensor or variable) -> slot; one slot per distinct object
    value_of = {}    # id(array) -> index into values; an array used twice is passed once
    values = []
    slot_value = []  # slot -> value index (-1: a Variable, whose value the backward pass never reads)
    leaves = []      # per slot that no record produced: (slot, value index, tracked, shape, dtype)
    steps = []
    for record in records:
        op = record.op
        if not op.fusable:
            return None
        ins = []
        for x in record.inputs:
            key = id(x)
            slot = slots.get(key)
            if slot is None:
                slot = slots[key] = len(slot_value)
                if isinstance(x, Tensor):
                    array = x._value
                    index = value_of.get(id(array))
                    if index is None:
                        if isinstance(array, Tracer) and not traced:
                            return None  # inside a jax transformation: stay on the rule-by-rule path
                        index = value_of[id(array)] = len(values)
                        values.append(array)
                    leaves.append((slot, index, key in tracked, array.shape, array.dtype))
                else:  # a Variable: its value is never read, but a read's output has its shape
                    index = -1
                    leaves.append((slot, index, key in tracked, x.shape, x.dtype))
                slot_value.append(index)
            ins.append(slot)
        # an output's shape and dtype follow from the structure and the leaves' avals
        array = record.outs[0]._value
        index = value_of.get(id(array))
        if index is None:
            index = value_of[id(array)] = len(values)
            values.append(array)
        slots[id(record.outs[0])] = len(slot_value)
        steps.append((op, tuple(record.params.items()) if record.params else (), tuple(ins), len(slot_value)))
        slot_value.append(index)
    seed_slots = []
    for key in seed_ids:
        slot = slots.get(key)
        if slot is None:
            return None
        seed_slots.append(slot)
    seed_slots = tuple(seed_slots)
    source_slots = tuple(slots.get(key, -1) for key in source_ids)
    leaf_tracked = frozenset(leaf[0] for leaf in leaves if leaf[2])
    steps = tuple(steps)
    slot_value = tuple(slot_value)
    key = None if traced else (steps, tuple(leaves), slot_value, seed_slots, source_slots)
    return Plan(key, steps, values, slot_value, leaf_tracked, seed_slots, source_slots)


def run(plan, seeds):
    """Gradients for ``plan.source_slots`` (arrays, or None where unconnected).

    A structure seen for the first time runs rule by rule, eagerly (its ops reuse the
    forward passes' compiled kernels, so a one-off tape compiles little); from the second
    time on it runs as one compiled program.
    """
    program = _PROGRAMS.get(plan.key)
    if program is None:
        _remember(plan.key, _Program(plan))
    elif program.compilable:
        results = program(plan.values, seeds)
        if results is not None:
            return results
    return replay(plan)(plan.values, seeds)


def run_vectorised(plan, seeds):
    """Like ``run`` for a stack of seeds (axis 0 of each): one vmapped backward pass."""
    program = _PROGRAMS.get(plan.key)
    if program is None:
        program = _Program(plan)
        _remember(plan.key, program)
    return program.vectorised(plan.values, seeds)


def _remember(key, program):
    _PROGRAMS[key] = program
    if len(_PROGRAMS) > MAX_PROGRAMS:  # the oldest structure goes first
        del _PROGRAMS[next(iter(_PROGRAMS))]


def remembered_structures():
    """How many backward-pass structures are remembered now (at most ``MAX_PROGRAMS``)."""
    return len(_PROGRAMS)


def replay(plan):
    """The backward pass of ``plan`` as a pure function ``(values, seeds) -> [gradient or None]``."""
    seed_slots, source_slots, slot_value = plan.seed_slots, plan.source_slots, plan.slot_value
    steps = tuple((step, step[2], (step[3],)) for step in plan.steps)
    tracked = plan.leaf_tracked | {step[3] for step in plan.steps}
    keep = set(source_slots)

    def backward(values, seeds):
        def rule(step, cotangents):
            op, params, ins, out = step
            inputs = [values[slot_value[i]] if slot_value[i] >= 0 else None for i in ins]
            return op.rule_on_arrays(cotangents[0], values[slot_value[out]], inputs, params)

        grads = reverse_accumulate(steps, zip(seed_slots, seeds), keep, tracked, rule, jnp.add)
        return [grads.get(slot) if slot >= 0 else None for slot in source_slots]

    return backward


def replay_in_trace(plan):
    """``replay(plan)`` for a plan replayed inside an enclosing trace (``mk.function``), inlined
    into it. The seeds are arguments here, so what the rules compute from them alone (a mean's
    ``1 / n``, the broadcast back to the batch) is staged into the enclosing program, rather than
    computed eagerly where that trace folds constants: op by op, each compiling a program of its own."""
    return jax.jit(replay(plan), inline=True)


class _Program:
    """The compiled backward pass of one structure; only the arrays it reads are passed in."""

    def __init__(self, plan):
        self._backward = replay(plan)
        self._jitted = None    # (compiled function, indices of the values it reads)
        self._vmapped = None   # the same, vmapped over the seeds
        self.compilable = True  # False once tracing failed: a rule needs concrete values

    def _prepare(self, values, seeds):
        """The backward pass as a function of only the values its result depends on, and
        their indices (a pass reads few of a tape's values: the rest need not be passed in)."""
        closed = jax.make_jaxpr(self._backward)(values, seeds)
        live = _live_vars(closed.jaxpr)
        used = tuple(i for i, var in enumerate(closed.jaxpr.invars[:len(values)]) if var in live)
        avals = [(v.shape, v.dtype) for v in values]

        def backward(used_values, seeds):
            # Values the gradients do not depend on are still traced (a rule may compute a
            # gradient nobody needs); zeros stand in for them and XLA removes them.
            full = [jnp.zeros(shape, dtype) for shape, dtype in avals]
            for i, v in zip(used, used_values):
                full[i] = v
            return self._backward(full, seeds)

        return backward, used

    def __call__(self, values, seeds):
        """The gradients, or None if this backward pass cannot be traced (then it runs eagerly)."""
        if self._jitted is None:
            try:
                backward, used = self._prepare(values, seeds)
            except Exception:  # noqa: BLE001 - e.g. a rule that looks at values; eager replay reports real errors
                self.compilable = False
                return None
            self._jitted = (jit(backward), used)
        jitted, used = self._jitted
        return jitted([values[i] for i in used], seeds)

    def vectorised(self, values, seeds):
        if self._vmapped is None:
            backward, used = self._prepare(values, [s[0] for s in seeds])
            self._vmapped = (jit(jax.vmap(backward, in_axes=(None, 0))), used)
        vmapped, used = self._vmapped
        return vmapped([values[i] for i in used], seeds)


def _live_vars(jaxpr):
    """The variables of ``jaxpr`` that its outputs depend on."""
    live = {v for v in jaxpr.outvars if not isinstance(v, Literal)}
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.outvars) or eqn.effects:
            live.update(v for v in eqn.invars if not isinstance(v, Literal))
    return live
