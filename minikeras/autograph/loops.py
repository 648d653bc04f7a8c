"""``while`` and ``for`` statements in converted code.

A loop whose condition is a traced Tensor, or a ``for`` over a Tensor (inside ``mk.function``),
runs as ``mk.while_loop``'s staged loop over the local variables it modifies; any other loop
is Python's. ``break`` and ``continue`` arrive here as flags (``transformer``).
"""
import jax
import jax.numpy as jnp

from minikeras import _context
from minikeras.autograph.conditionals import and_, if_stmt, probing_loop_body, traced
from minikeras.autograph.undefined import Undefined
from minikeras.backend import is_tracer
from minikeras.ops import array as _array
from minikeras.ops.loops import run_loop
from minikeras.ops.shape_invariants import check_entry, check_iteration, invariants_for
from minikeras.ops.staging import flatten, stage
from minikeras.ops.tensor_array import TensorArray, element_shapes_probe
from minikeras.tensor import Tensor, Variable, to_array


# -- while ------------------------------------------------------------------------------------
def while_stmt(test, body, get_state, set_state, names, lineno, maximum_iterations=None, shape_invariants=None):
    """A ``while`` statement: ``mk.while_loop`` semantics once its test is a traced Tensor
    (``maximum_iterations``, ``shape_invariants``: from ``set_loop_options``; the bound
    bounds the staged loop, the invariants are checked inside ``mk.function``)."""
    where = f"the `while` loop at line {lineno}"
    invariants = _invariants(shape_invariants, get_state(), names, where)
    condition = test()
    while not traced(condition):
        if not condition:
            return
        body()
        _check_python_iteration(invariants, get_state(), names, where)
        condition = test()
    _tensor_loop(test, body, get_state, set_state, names, where, maximum_iterations, invariants=invariants)


def _invariants(shape_invariants, state, names, where):
    """``set_loop_options``' ``[(variable, shape), ...]`` as {index of the variable in
    ``state``: shape}; checked against the variables' shapes inside ``mk.function``."""
    found = {}
    for pair in shape_invariants or ():
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
            raise ValueError(f"{where}: set_loop_options(shape_invariants=...) takes a list of (variable, shape) "
                             f"pairs, received {pair!r}")
        value, shape = pair
        index = next((i for i, x in enumerate(state) if x is value), None)
        if index is None:
            raise ValueError(f"{where}: set_loop_options(shape_invariants=...) gives a shape for {value!r}, which is "
                             f"not the value of a variable this loop changes ({', '.join(names)})")
        found[index] = invariants_for([shape], [value], where)[0]
    if found and _context.call_state.traces:
        check_entry([found.get(i) for i in range(len(state))], list(state), where, lambda i: f"'{names[i]}'")
    return found


def _check_python_iteration(invariants, state, names, where):
    if invariants and _context.call_state.traces:  # eagerly TensorFlow ignores them
        check_iteration([invariants.get(i) for i in range(len(state))], list(state), where,
                        lambda i: f"'{names[i]}'")


def list_append(target, method, name, line, loops, *args):
    """``target.<method>(*args)`` for a list method called in a loop body on a variable the loop
    body does not assign (converted code; ``loops``: the lines of the loops around the call
    that the list comes from outside of). Inside a loop over a traced Tensor the body is traced
    once, so such a list would hold one traced value from inside the loop: refused, as
    TensorFlow's AutoGraph refuses it, pointing to a TensorArray. (Python values, such as a
    trace-time log, are appended once per trace, as in TensorFlow.)"""
    leaves = jax.tree_util.tree_leaves(args, is_leaf=lambda x: isinstance(x, (Tensor, Variable)))
    staged_loops = _context.call_state.staged_loops  # the loops whose bodies are traced now, innermost last
    if isinstance(target, list) and staged_loops and any(traced(x) or is_tracer(x) for x in leaves):
        for where in staged_loops:
            if any(where.endswith(f" loop at line {n}") for n in loops):
                raise ValueError(
                    f"{where}: `{name}.{method}(...)` at line {line} changes the Python list '{name}', made before "
                    "the loop, inside a loop over a traced Tensor. The loop runs in the program, so its body is "
                    "traced once and a Python list cannot collect a value per iteration. Use a TensorArray: "
                    f"`{name} = mk.TensorArray(mk.float32, size=0, dynamic_size=True)` before the loop, "
                    f"`{name} = {name}.write(i, value)` inside it and `{name}.stack()` after it.")
    return getattr(target, method)(*args)


def _tensor_loop(test, body, get_state, set_state, names, where, maximum_iterations=None, extra=(), invariants=None):
    """The loop as ``mk.while_loop`` over the variables that have values (``extra``: more
    carried values before them, e.g. an index, updated by ``body`` returning them;
    ``invariants``: {index of a variable: its shape invariant})."""
    staged_loops = _context.call_state.staged_loops
    staged_loops.append(where)  # this function is the one writer of the thread's staged loops
    try:
        _staged_tensor_loop(test, body, get_state, set_state, names, where, maximum_iterations, extra, invariants)
    finally:
        staged_loops.pop()


def _staged_tensor_loop(test, body, get_state, set_state, names, where, maximum_iterations, extra, invariants):
    state = _defined_by_the_body(test, body, get_state, set_state, extra)
    carried = [i for i, x in enumerate(state) if _carryable(x)]
    fixed = {i: x for i, x in enumerate(state) if i not in carried}

    def full(values):
        values = list(values)
        return tuple(values[carried.index(i)] if i in carried else fixed[i] for i in range(len(state)))

    def loop_test(*values):
        set_state(full(values[len(extra):]))
        return test(*values[:len(extra)])

    def loop_body(*values):
        set_state(full(values[len(extra):]))
        new_extra = body(*values[:len(extra)])
        after = get_state()
        for i, x in fixed.items():
            if not isinstance(x, Undefined) and after[i] is not x:
                raise ValueError(f"{where}: '{names[i]}' holds the Python value {x!r} and is changed by the loop; a "
                                 "loop over a traced Tensor can only update Tensors and numbers")
        return list(new_extra or ()) + [after[i] for i in carried]

    label = [f"<{where} index>"] * len(extra) + [names[i] for i in carried]
    shape_invariants = [None] * len(extra) + [invariants.get(i) for i in carried] if invariants else None
    final = run_loop(loop_test, loop_body, list(extra) + [state[i] for i in carried], maximum_iterations, where,
                     names=label, staged=True, shape_invariants=shape_invariants)
    result = list(full(final[len(extra):]))
    for i, x in fixed.items():
        if isinstance(x, Undefined):
            result[i] = Undefined(names[i], f"'{names[i]}' must be defined before the loop ({where} runs over a "
                                            "traced Tensor, so the program carries each variable it sets)")
    set_state(tuple(result))


def _defined_by_the_body(test, body, get_state, set_state, extra):
    """The loop's state, completed from one extra trace of the body (as TensorFlow does):
    a variable with no value before the loop that is a Tensor after one iteration starts as
    zeros of its shape (so that e.g. a ``return`` inside the loop works), and a TensorArray
    written in the loop gets the element shape of its first write."""
    state = get_state()
    undefined = [i for i, x in enumerate(state) if isinstance(x, Undefined)]
    shapeless = [i for i, x in enumerate(state) if isinstance(x, TensorArray) and x.element_shape is None]
    if not undefined and not shapeless:
        return state
    positions = [i for i, x in enumerate(state) if _carryable(x)]
    leaves, tree = flatten(list(extra) + [state[i] for i in positions])

    def probe(*values):
        current = list(state)
        for i, value in zip(positions, values[len(extra):]):
            current[i] = value
        set_state(tuple(current))
        body(*values[:len(extra)])
        after = get_state()
        return ([after[i] if not isinstance(after[i], Undefined) else None for i in undefined]
                + [_Shape(after[i].element_shape) for i in shapeless])

    try:
        with element_shapes_probe(), probing_loop_body():
            staged = stage(probe, [jax.ShapeDtypeStruct(x.shape, x.dtype) for x in (to_array(v) for v in leaves)],
                           make_inputs=lambda tensors: jax.tree_util.tree_unflatten(tree, tensors))
    finally:
        set_state(state)
    found = list(state)
    results = staged.result([jnp.zeros(a.shape, a.dtype) for a in staged.out_avals])
    for i, leaf in zip(undefined, results):
        if isinstance(leaf, Tensor):
            found[i] = Tensor(jnp.zeros(leaf.shape, leaf.dtype))
    for i, shape in zip(shapeless, results[len(undefined):]):
        if shape.shape is not None:
            found[i] = state[i].with_element_shape(shape.shape)
    set_state(tuple(found))
    return tuple(found)


class _Shape:
    """A shape carried out of a staged probe as a static value (not a pytree of numbers)."""

    def __init__(self, shape):
        self.shape = shape


def _carryable(x):
    return isinstance(x, (Tensor, Variable, TensorArray)) or type(x) in (int, float, bool)


# -- for ----------------------------------------------------------------------------------------
class TensorRange:
    """``range(...)`` with a traced Tensor bound: iterated by a loop over a traced Tensor."""

    def __init__(self, start, limit, delta):
        self.start, self.limit, self.delta = (to_array(x) for x in (start, limit, delta))


def range_(function, *args):
    """``function(*args)`` (``range`` or ``mk.range``), or a ``TensorRange`` when an argument is traced."""
    if any(traced(a) for a in args):
        if len(args) == 1:
            return TensorRange(0, args[0], 1)
        return TensorRange(args[0], args[1], args[2] if len(args) > 2 else 1)
    return function(*args)


def for_stmt(iterable, extra_test, body, get_state, set_state, names, lineno, maximum_iterations=None, targets=(),
             shape_invariants=None):
    """A ``for`` statement: over a traced Tensor's first axis (or a traced ``range``) it is a
    loop in the program; over anything else a Python loop. ``targets``: the names the loop
    assigns each item to (a staged loop starts them as zeros of an item's shape). With
    ``shape_invariants`` (from ``set_loop_options``) a loop over a Tensor known while tracing
    runs as Python, so that its variables may change shape within them."""
    where = f"the `for` loop at line {lineno}"
    invariants = _invariants(shape_invariants, get_state(), names, where)
    if isinstance(iterable, Variable):
        iterable = iterable.value()
    if isinstance(iterable, TensorRange):
        start, limit, delta = iterable.start, iterable.limit, iterable.delta
        dtype = jnp.result_type(start, limit, delta)

        def test(i):
            inside = jnp.where(delta > 0, i._value < limit, i._value > limit)
            return _with_extra(Tensor(inside), extra_test)

        def step(i):
            body(i)
            return [Tensor((i._value + delta).astype(dtype))]

        _start_targets(get_state, set_state, names, targets, jax.ShapeDtypeStruct((), dtype))

        _tensor_loop(test, step, get_state, set_state, names, where, maximum_iterations,
                     extra=[Tensor(jnp.asarray(start, dtype))], invariants=invariants)
        return
    if isinstance(iterable, Tensor) and (is_tracer(iterable._value)
                                         or _context.call_state.traces and not _grows(get_state()) and not invariants):
        # Inside mk.function a loop over a Tensor is a loop in the program, as in a tf.function
        # graph, even when the Tensor is known while tracing (``mk.range(1000)``); unless it fills
        # a dynamic_size TensorArray, whose size must be known, or its variables may change
        # shape (shape_invariants): then the loop is unrolled.
        if iterable.ndim == 0:
            raise TypeError(f"{where}: cannot iterate over a scalar Tensor")
        n = iterable.shape[0]

        def test(i):
            return _with_extra(Tensor(i._value < n), extra_test)

        def step(i):
            body(_array.gather(iterable, i))
            return [i + 1]

        _start_targets(get_state, set_state, names, targets, jax.ShapeDtypeStruct(iterable.shape[1:], iterable.dtype))

        bound = n if type(n) is int else None  # a symbolic size (a None dimension): i < n bounds the loop
        if maximum_iterations is not None:
            bound = int(maximum_iterations) if bound is None else min(bound, int(maximum_iterations))
        _tensor_loop(test, step, get_state, set_state, names, where, maximum_iterations=bound,
                     extra=[Tensor(jnp.int32(0))], invariants=invariants)
        return
    for item in iterable:
        if extra_test is not None:
            go = extra_test()
            if traced(go):  # a break decided by a traced Tensor: later iterations run under it
                if_stmt(go, lambda item=item: body(item), lambda: None, get_state, set_state, names, lineno)
                continue
            if not go:
                break
        body(item)
        _check_python_iteration(invariants, get_state(), names, where)


def _start_targets(get_state, set_state, names, targets, aval):
    """A single loop target with no value yet starts as zeros of an item (it is carried)."""
    if len(targets) != 1:
        return
    state = list(get_state())
    i = names.index(targets[0])
    if isinstance(state[i], Undefined):
        state[i] = Tensor(jnp.zeros(aval.shape, aval.dtype))
        set_state(tuple(state))


def _grows(state):
    return any(isinstance(x, TensorArray) and x.dynamic_size for x in state)


def _with_extra(test, extra_test):
    if extra_test is None:
        return test
    return and_(lambda: test, extra_test)
