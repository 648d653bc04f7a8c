"""``steps_per_execution``: N training steps in one compiled call, as a ``lax.scan`` over the
single step's compiled program. Its lifted Variables are the scan's carry, and so are the last
step's outputs (nothing is stacked per step).

The scan gets its batches in one of two ways: stacked on the host into one (steps, batch, ...)
array per input (``run_program_stacked``: Datasets, mk.distribute, groups with a short batch),
or, for in-memory arrays, taken inside the scan from the whole training arrays, given only the
batch start offsets and the epoch's permutation (``run_program_gathered``). Both take a traced
step's compiled program (``programs.Program``); ``trainers.step_runner`` finds it for a batch.
"""
import math

import jax
import jax.numpy as jnp

from minikeras import _context
from minikeras.programs import donation
from minikeras.xla_cpu import jit, tuning


def run_program_stacked(program, stacked):
    """Runs the compiled single-step ``program`` once per row of the ``stacked`` inputs (one
    array per input of the step, with a leading axis of steps) in one ``lax.scan`` call.

    Returns:
      The step's outputs for the last row.
    """
    distribution = _context.distribution()
    if distribution is None:
        loop = _scan_of(program)
    else:  # mk.distribute: state replicated, batches split on their dim 1
        loop, stacked = distribution.prepare_scan(program, stacked, _scan_of)
    return _finish(program, loop, stacked)


def run_program_gathered(program, group):
    """Runs the compiled single-step ``program`` on each batch of the ``data_adapter.ArrayGroup``
    ``group`` in one ``lax.scan`` call that takes the batches from the whole training arrays
    (``ArrayBatches.call_arrays``) given the batch start offsets and, when shuffling, the
    epoch's permutation. Every batch of ``group`` must be full-size.

    Returns:
      The step's outputs for the last batch.
    """
    source = group.source
    shuffled = group.order.order is not None
    loop = _cached_loop(program, ("gather", source.batch_size, shuffled),
                        lambda: _gather_scan_of(program, source.batch_size, shuffled))
    order = group.order.for_calls() if shuffled else None
    return _finish(program, loop, source.call_arrays(), order, group.full_starts())


def _finish(program, loop, *inputs):
    """Calls ``loop(assigned state, read-only state, *inputs)`` (the assigned state donated where
    ``program.donates``: ``_donating_jit``), writes the new state back and returns the outputs
    as the step returns them."""
    n = program.n_assigned
    state = program.call_state()

    def finish(results):
        program.write_back(results[0])
        return program.structure(results[1])

    return donation.call_keeping_results(loop, (state[:n], state[n:], *inputs), finish,
                                         lambda results: program.write_back(results[0]))


def _cached_loop(program, key, build):
    return program.derived(("scan", key), build)


def _scan_steps(program, assigned_values, readonly_values, xs, batch_of):
    """``lax.scan`` of the step over ``xs``, the batch of each step being ``batch_of(x)``;
    returns (final assigned state, last outputs): the state first, so that each donated
    Variable's buffer goes to its own final value (``programs.program.results_for_donation``).
    The last outputs ride in the carry (from zeros of their shapes) rather than being stacked
    for every step and sliced."""
    readonly_values = list(readonly_values)

    def step(assigned, x):
        outputs, new_assigned = program.pure(list(assigned) + readonly_values, batch_of(x))
        return new_assigned, outputs

    jaxpr = program.jaxpr
    zeros = [jnp.zeros(o.shape, o.dtype) for o in jaxpr.out_avals[:program.n_outputs]]

    def body(carry, x):
        assigned, _ = carry
        return step(assigned, x), None

    # XLA:CPU's while loop costs about a microsecond per trip: tiny steps run several per trip
    unroll = tuning.SCAN_UNROLL if _work(jaxpr.jaxpr) <= tuning.SCAN_TINY_STEP else 1
    (final, outs), _ = jax.lax.scan(body, (list(assigned_values), zeros), xs, unroll=unroll)
    return final, outs


def _work(jaxpr):
    """The number of elements the operations of ``jaxpr`` read and write (an inner scan's
    body counted once per iteration; any while loop counts as unbounded)."""
    total = 0
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "while":
            return math.inf
        total += sum(getattr(v.aval, "size", 0) for v in (*eqn.invars, *eqn.outvars))
        for param in eqn.params.values():
            for inner in param if isinstance(param, (tuple, list)) else (param,):
                inner = getattr(inner, "jaxpr", inner)  # a ClosedJaxpr's Jaxpr
                if hasattr(inner, "eqns"):
                    total += _work(inner) * eqn.params.get("length", 1)
    return total


def _gather_scan_of(program, batch_size, shuffled):
    """The jitted scan for ``run_program_gathered``: ``loop(assigned, readonly, data, order,
    starts)``; a batch is ``data[order[start:start + batch_size]]`` (shuffled) or
    ``data[start:start + batch_size]``."""
    def run(assigned_values, readonly_values, data, order, starts):
        def batch_of(start):
            if shuffled:
                index = jax.lax.dynamic_slice_in_dim(order, start, batch_size)
                return [leaf.at[index].get(mode="promise_in_bounds") for leaf in data]
            return [jax.lax.dynamic_slice_in_dim(leaf, start, batch_size) for leaf in data]
        return _scan_steps(program, assigned_values, readonly_values, starts, batch_of)
    return _donating_jit(program, run)


def _scan_of(program, state_sharding=None):
    """The scan loop of ``program`` over stacked batches; with ``state_sharding``
    (mk.distribute: a sharding, or a tuple of one per assigned Variable), its final state is
    constrained to it."""
    def build():
        def run(assigned_values, readonly_values, stacked):
            final, outs = _scan_steps(program, assigned_values, readonly_values, stacked, list)
            if state_sharding is not None:  # one sharding for all, or one per assigned Variable
                shardings = state_sharding if isinstance(state_sharding, tuple) else (state_sharding,) * len(final)
                final = [jax.lax.with_sharding_constraint(v, s) for v, s in zip(final, shardings)]
            return final, outs
        return _donating_jit(program, run)
    return _cached_loop(program, state_sharding, build)


def _donating_jit(program, run):
    """``run(assigned_values, ...)`` jitted, its argument 0 (the assigned state) donated if
    ``program`` donates its state: the scan's carry then starts in those buffers."""
    return jit(run, donate_argnums=(0,) if program.donates else ())
