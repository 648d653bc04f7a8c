"""``steps_per_execution``: N training steps in one compiled call, as a ``lax.scan`` over the
single step's compiled program (its lifted Variables are the scan's carry)."""
import importlib

import jax
import numpy as np

from minikeras.function import _flatten, _signature
from minikeras.tensor import Tensor

function_module = importlib.import_module("minikeras.function")  # the module (mk.function hides it)


def run_stacked(step, batches):
    """Runs the ``mk.function`` ``step`` on each batch in order, in one XLA call when possible.

    Args:
      step: the compiled train step (an ``mk.function``) taking one batch tuple.
      batches: a list of ``(x, y, sample_weight)`` with identical shapes.

    Returns:
      The logs of the last step.
    """
    from minikeras.models.step_runner import as_tensors
    first = (as_tensors(batches[0]),)
    leaves, treedef = _flatten((first, {}))
    program = step._programs.get((treedef, _signature(leaves)))
    if program is None:  # not traced yet: run this group step by step (the first call traces)
        logs = None
        for batch in batches:
            logs = step(as_tensors(batch))
        return logs
    per_batch = [[np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(batch)] for batch in batches]
    return run_program_stacked(program, [np.stack(column) for column in zip(*per_batch)])


def run_program_stacked(program, stacked):
    """Runs the compiled single-step ``program`` once per row of the ``stacked`` inputs (one
    array per input of the step, with a leading axis of steps) in one ``lax.scan`` call.

    Returns:
      The step's outputs for the last row.
    """
    distribution = function_module.DISTRIBUTION
    if distribution is None:
        loop = _scan_of(program)
    else:  # mk.distribute: state replicated, batches split on their dim 1
        loop, stacked = distribution.prepare_scan(program, stacked, _scan_of)
    n = program.n_assigned
    state = [v._value for v in program.variables]
    outs, new_values = loop(state[:n], state[n:], stacked)
    for variable, value in zip(program.assigned, new_values):
        variable._value = value
    out_tree, static, is_array = program.out_spec[:3]
    outs = iter(outs)
    return jax.tree_util.tree_unflatten(out_tree, [Tensor(next(outs)) if a else s for a, s in zip(is_array, static)])


def _scan_of(program, state_sharding=None):
    """The scan loop of ``program``; with ``state_sharding`` (mk.distribute), its final state
    is constrained to that sharding."""
    loops = program.__dict__.setdefault("_scan_loops", {})
    loop = loops.get(state_sharding)
    if loop is None:
        def run(assigned_values, readonly_values, stacked):
            def body(carry, dynamic_values):
                results = program._pure(list(carry) + list(readonly_values), list(dynamic_values))
                n_out = program.out_spec[4]
                return list(results[n_out:]), list(results[:n_out])
            final, outs = jax.lax.scan(body, list(assigned_values), stacked)
            if state_sharding is not None:
                final = [jax.lax.with_sharding_constraint(v, state_sharding) for v in final]
            return [o[-1] for o in outs], final
        loop = loops[state_sharding] = jax.jit(run)
    return loop
