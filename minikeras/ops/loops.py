"""``mk.while_loop``: a loop whose condition is a Tensor, eagerly and inside ``mk.function``.

Three ways to run, chosen when the loop starts:

- eagerly: a Python loop (a recording tape sees every iteration, as in TensorFlow's eager
  mode);
- inside ``mk.function`` with no tape recording: one ``lax.while_loop``. The body is traced
  once (``staging``); Variables it assigns are loop carries, assigned once after the loop;
- the same under a recording GradientTape: the loop is unrolled for the tape. Iterations
  whose condition is known while tracing run as they are; once it is a traced Tensor,
  reverse mode needs a bound on the trip count, so ``maximum_iterations`` is required: each
  further iteration is kept only while the condition holds (``mk.where``), so the tape
  records ordinary ops and gradients of every order flow. A loop that exits early still
  costs the bound. (Chosen over one recorded op around ``lax.scan``: the tape's rules and
  higher-order gradients apply unchanged, and Variables read in the body get gradients with
  no extra plumbing; the price is trace time and program size proportional to the bound.)

Autograph's ``while`` and ``for`` statements call ``run_loop`` directly.
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from minikeras import _context
from minikeras.backend import is_tracer
from minikeras.ops.control import select_branches
from minikeras.ops.shape_invariants import allows, check_entry, check_iteration, invariants_for, not_conforming
from minikeras.ops.staging import flatten, is_array_leaf, stage
from minikeras.ops.tensor_array import TensorArray
from minikeras.tensor import Tensor, Variable, to_array


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, maximum_iterations=None, name=None):
    """Repeats ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` (``tf.while_loop``).

    Args:
      cond: returns a scalar bool (Tensor or Python) from the loop variables.
      body: returns new loop variables, the same structure, shapes and dtypes.
      loop_vars: a list or tuple (or one value) of Tensors, numbers and ``mk.TensorArray``s.
      shape_invariants: the most general shape of each loop variable (a nest like
        ``loop_vars`` of tuples such as ``(None, 2)`` or ``mk.TensorSpec``s; see
        ``ops.shape_invariants``). Eagerly they are ignored, as in TensorFlow. Inside
        ``mk.function`` a variable must stay within its invariant (TensorFlow's ValueError
        otherwise); a loop whose condition is known while tracing runs as Python and may
        change shapes within the invariants, but one whose condition is a traced Tensor is an
        XLA while loop: its variables keep their shapes, and a change is an error saying so
        (preallocate the final size, or collect values in an ``mk.TensorArray``).
      maximum_iterations: stop after this many iterations; required for gradients of a loop
        traced inside ``mk.function`` under a recording GradientTape.

    Returns:
      The final loop variables, in the structure of ``loop_vars``.

    >>> mk.while_loop(lambda i: i < 10, lambda i: (i + 1,), [0])
    [mk.Tensor(10, shape=(), dtype=int32)]
    """
    if not callable(cond) or not callable(body):
        raise TypeError(f"mk.while_loop: cond and body must be callable, received {type(cond).__name__} and "
                        f"{type(body).__name__}")
    packed = not isinstance(loop_vars, (list, tuple))
    state = [loop_vars] if packed else loop_vars
    state = jax.tree_util.tree_map(_as_value, state, is_leaf=lambda x: isinstance(x, (Tensor, Variable)))
    invariants = None
    if shape_invariants is not None:
        invariants = invariants_for([shape_invariants] if packed else shape_invariants, state, "mk.while_loop")
    # inside mk.function the loop is one in the program, as in a tf.function graph; unless its
    # variables may change shape (shape_invariants): then it runs as Python while its
    # condition is known while tracing
    out = run_loop(cond, body, state, maximum_iterations, "mk.while_loop",
                   staged=bool(_context.call_state.traces) and invariants is None, shape_invariants=invariants)
    return out[0] if packed else out


def _as_value(x):
    if isinstance(x, Variable):
        return x.value()
    if type(x) in (int, float, bool) or isinstance(x, (jax.Array, np.ndarray, np.generic)):
        return Tensor(to_array(x))
    return x


def run_loop(cond, body, state, maximum_iterations, what, names=None, staged=False, shape_invariants=None):
    """The loop on a list or tuple ``state``: Python while its condition is concrete, else staged
    (``staged=True``: staged from the start, for a loop over a traced Tensor).

    ``names`` name the loop variables in error messages (``autograph`` passes the Python names).
    ``shape_invariants``: None, or a shape (or None) per variable of ``state``
    (``shape_invariants.loop_leaves``), checked inside ``mk.function`` only, as TensorFlow does.
    """
    invariants = shape_invariants if _context.call_state.traces else None
    if invariants is not None:
        check_entry(invariants, state, what, lambda i: _name(names, i))
    if staged:
        return _staged(cond, body, state, maximum_iterations, 0, what, names, invariants)
    count = 0
    limit = _static_limit(maximum_iterations, what)
    while limit is None or count < limit:
        leaves, _ = flatten(state)
        if any(is_tracer(to_array(x)) for x in leaves if is_array_leaf(x)) or limit is None and \
                maximum_iterations is not None:
            return _staged(cond, body, state, maximum_iterations, count, what, names, invariants)
        test = cond(*state)
        if is_tracer(to_array(test)):
            return _staged(cond, body, state, maximum_iterations, count, what, names, invariants)
        if not bool(to_array(test)):
            break
        state = _same_structure(state, body(*state), what, names)
        if invariants is not None:
            check_iteration(invariants, state, what, lambda i: _name(names, i))
        count += 1
    return state


def _static_limit(maximum_iterations, what):
    if maximum_iterations is None:
        return None
    value = to_array(maximum_iterations)
    if is_tracer(value):
        return None
    if value.shape != () or not jnp.issubdtype(value.dtype, jnp.integer):
        raise TypeError(f"{what}: maximum_iterations must be a scalar int, received {maximum_iterations!r}")
    return int(value)


def _same_structure(before, after, what, names):
    if not isinstance(after, (list, tuple)):
        after = [after]
    if len(after) != len(before):
        raise ValueError(f"{what}: body returned {len(after)} loop variables, expected {len(before)} (the structure "
                         "of loop_vars)")
    converted = jax.tree_util.tree_map(_as_value, list(after), is_leaf=lambda x: isinstance(x, (Tensor, Variable)))
    return converted if isinstance(before, list) else tuple(converted)


def _name(names, i):
    return f"'{names[i]}'" if names else f"loop variable {i}"


def _staged(cond, body, state, maximum_iterations, done, what, names, invariants=None):
    remaining = maximum_iterations
    if maximum_iterations is not None and done:
        remaining = Tensor(to_array(maximum_iterations) - done)
    bound = _static_limit(remaining, what)  # a dynamic_size TensorArray gets this many more rows
    carry = jax.tree_util.tree_map(lambda x: x.as_loop_carry(what, bound) if isinstance(x, TensorArray) else x,
                                   list(state), is_leaf=lambda x: isinstance(x, TensorArray))
    state = carry if isinstance(state, list) else tuple(carry)
    if _context.call_state.tapes:
        return _unrolled(cond, body, state, remaining, what, names, invariants)
    return _lax_loop(cond, body, state, remaining, what, names, invariants)


def _unrolled(cond, body, state, maximum_iterations, what, names, invariants=None):
    """The loop unrolled for a recording tape: iterations whose condition is known while
    tracing run as they are; the others are selected, up to ``maximum_iterations``."""
    limit = _static_limit(maximum_iterations, what)
    count = 0
    while limit is None or count < limit:
        value = to_array(cond(*state))
        if not is_tracer(value):
            if not bool(value):
                break
            state = _same_structure(state, body(*state), what, names)
            if invariants is not None:
                check_iteration(invariants, state, what, lambda i: _name(names, i))
        elif limit is None:
            raise ValueError(
                f"{what}: this loop's condition is a traced Tensor and a GradientTape is recording inside "
                "mk.function; reverse-mode gradients need a bound on the number of iterations. Add "
                "maximum_iterations: mk.while_loop(..., maximum_iterations=N), or, for a Python loop statement, "
                "begin its body with mk.autograph.experimental.set_loop_options(maximum_iterations=N).")
        else:
            state = select_branches(Tensor(value.reshape(()).astype(bool)),
                                    lambda state=state: _same_structure(state, body(*state), what, names),
                                    lambda state=state: state)
        count += 1
    return state


def _lax_loop(cond, body, state, maximum_iterations, what, names, invariants=None):
    leaves, tree = flatten(state)
    arrays = [to_array(x) for x in leaves]
    avals = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays]

    def unflatten(tensors):
        return jax.tree_util.tree_unflatten(tree, tensors)

    carried = []
    while True:  # a Variable first assigned in the body joins the carries; trace again with it
        staged_body = stage(lambda *s: _same_structure(state, body(*s), what, names), avals, carried,
                            make_inputs=unflatten)
        new = [v for v in staged_body.written if all(v is not c for c in carried)]
        if not new:
            break
        carried += new
    _check_carries(tree, avals, staged_body, what, names, invariants)
    staged_cond = stage(lambda *s: cond(*s), avals, carried, make_inputs=unflatten)
    if staged_cond.written:
        raise ValueError(f"{what}: the loop condition assigns Variables {[v.name for v in staged_cond.written]}; "
                         "assign them in the body")
    test_avals = staged_cond.out_avals
    if len(test_avals) != 1 or test_avals[0].shape not in ((), (1,)):
        raise ValueError(f"{what}: the loop condition must return one scalar bool, returned "
                         f"{[tuple(a.shape) for a in test_avals]}")
    limit = None if maximum_iterations is None else to_array(maximum_iterations)
    n = len(arrays)

    def lax_cond(carry):
        count, values = carry
        test = staged_cond.call(*values)[0][0].reshape(()).astype(bool)
        return test if limit is None else test & (count < limit)

    def lax_body(carry):
        count, values = carry
        outs, written = staged_body.call(*values)
        by_id = {id(v): value for v, value in zip(staged_body.written, written)}
        outs = [lax.convert_element_type(o, a.dtype) for o, a in zip(outs, avals)]
        return count + 1, outs + [by_id.get(id(v), old) for v, old in zip(carried, values[n:])]

    _, final = lax.while_loop(lax_cond, lax_body, (jnp.int32(0), arrays + [v._value for v in carried]))
    for v, value in zip(carried, final[n:]):
        v.assign(Tensor(value), read_value=False)
    return unflatten([Tensor(a) for a in final[:n]])


def _check_carries(tree, avals, staged, what, names, invariants=None):
    if staged.out_tree != tree or not all(staged.out_is_array):
        raise ValueError(f"{what}: the body must return the loop variables with the structure they had before the "
                         f"loop ({tree}), received {staged.out_tree}")
    for i, (before, after) in enumerate(zip(avals, staged.out_avals)):
        if before.shape != after.shape or before.dtype != after.dtype:
            label = _name(names if names and len(names) == len(avals) else None, i)
            if before.dtype != after.dtype:  # TensorFlow's wording, and its exception class
                raise TypeError(f"{what}: {label} has dtype {before.dtype.name} before the loop, but dtype "
                                f"{after.dtype.name} after one iteration. A loop over a traced Tensor keeps each "
                                "variable's dtype: initialise it with the final dtype (e.g. 0.0 rather than 0).")
            invariant = invariants[i] if invariants is not None and len(invariants) == len(avals) else None
            if invariant is not None:
                if not allows(invariant, after.shape):
                    raise not_conforming(what, label, after.shape, invariant)
                raise ValueError(
                    f"{what}: {label} has shape {tuple(before.shape)} before the loop and {tuple(after.shape)} after "
                    f"one iteration, which its shape invariant {invariant} allows; but the loop's condition is a "
                    "traced Tensor, so it runs as one XLA while loop, whose variables keep the shapes they enter "
                    f"with. Preallocate {label} at its final size and write into it (mk.where with a mask of the "
                    "position), or collect the values in an mk.TensorArray (size=N, or dynamic_size=True in a loop "
                    "with a bound: a for loop over a Tensor, or maximum_iterations=N).")
            raise ValueError(f"{what}: {label} has shape {tuple(before.shape)} before the loop, but shape "
                             f"{tuple(after.shape)} after one iteration. A loop over a traced Tensor keeps each "
                             "variable's shape: collect values in a fixed-size mk.TensorArray instead.")


__all__ = ["while_loop"]
