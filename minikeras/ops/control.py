"""Control flow and gradient control: cond, case, switch_case and custom_gradient."""
import functools
import inspect

import jax
import jax.numpy as jnp
from jax import lax

from minikeras import _context
from minikeras.backend import is_tracer
from minikeras.ops.math import where, zeros_like_
from minikeras.ops.op import Op
from minikeras.ops.staging import is_array_leaf, stage
from minikeras.ops.variable_reads import VariableReads
from minikeras.tensor import Tensor, Variable, to_array

# What a ``merge`` hook returns for an output that one branch leaves undefined and that should be
# zeros there (autograph's return value: the flag beside it says which branch returned).
ZEROS_LIKE_OTHER_BRANCH = object()


def _flatten(tree):
    return jax.tree_util.tree_flatten(tree, is_leaf=lambda x: isinstance(x, (Tensor, Variable)))


def cond(pred, true_fn=None, false_fn=None, name=None):
    """``true_fn()`` if ``pred`` else ``false_fn()``, eagerly and inside ``mk.function`` (``tf.cond``).

    Eagerly, and when ``pred`` is known while tracing, only the chosen branch runs (eagerly
    its result is returned as it is, a Python number included, as TensorFlow does). When
    ``pred`` is a traced value, both branches are traced once and the program runs only the
    taken one (``lax.cond``); Variables a branch assigns are assigned only when it is taken.
    Under a recording GradientTape inside ``mk.function``, both branches run and their
    results are selected with ``mk.where`` instead: the tape records that like any other
    ops, so gradients of every order flow through the taken branch (its cost: the other
    branch runs too, and a NaN there, e.g. ``sqrt`` of a negative, leaks into the gradient
    as with ``tf.where``). Both branches must return the same structure, shapes and dtypes;
    Python numbers are converted to Tensors.

    >>> mk.cond(mk.constant(2.0) > 1.0, lambda: mk.constant(1.0), lambda: mk.constant(0.0))
    mk.Tensor(1.0, shape=(), dtype=float32)
    """
    if true_fn is None or false_fn is None:
        raise TypeError("mk.cond needs both true_fn and false_fn")
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError(f"mk.cond: true_fn and false_fn must be callable, received {type(true_fn).__name__} and "
                        f"{type(false_fn).__name__}")
    pred_value = to_array(pred)
    if pred_value.shape not in ((), (1,)):
        raise ValueError(f"mk.cond needs a scalar predicate, received shape {tuple(pred_value.shape)}")
    if not is_tracer(pred_value):
        out = true_fn() if bool(pred_value.reshape(())) else false_fn()
        return _python_numbers_as_tensors(out)
    pred = Tensor(pred_value.reshape(()).astype(bool))
    if _context.call_state.tapes:
        return select_branches(pred, true_fn, false_fn)
    index = Tensor(jnp.logical_not(pred._value).astype(jnp.int32))  # branch 0 is the true one
    return run_branches(index, [true_fn, false_fn], "mk.cond", ("true_fn", "false_fn"))


def _python_numbers_as_tensors(out):
    """Inside ``mk.function`` a branch's Python numbers become Tensors (as in a tf.function
    graph); eagerly the branch's result is returned as it is (as TensorFlow does)."""
    if not _context.call_state.traces:
        return out
    leaves, tree = _flatten(out)
    return jax.tree_util.tree_unflatten(
        tree, [Tensor(to_array(x)) if type(x) in (int, float, bool) else x for x in leaves])


def run_branches(index, branches, what, names, merge=None):
    """Runs ``branches[index]`` (``index`` a traced int32 Tensor in range) with ``lax.switch``:
    each branch is traced once; the program runs only the taken one.

    ``merge(position, leaves)``, given a result leaf that is not an array in some branch,
    returns the merged (static) leaf or raises; by default such leaves must be equal."""
    staged = [stage(b) for b in branches]
    first = staged[0]
    per_branch = []
    for name, s in zip(names, staged):
        if s.out_tree != first.out_tree:
            raise ValueError(f"{what}: {names[0]} and {name} must return the same structure, got "
                             f"{first.out_tree} and {s.out_tree}")
        arrays = iter(s.out_avals)
        per_branch.append([next(arrays) if a else static for a, static in zip(s.out_is_array, s.out_static)])
    kinds = []  # per result leaf: an aval (an array output) or ("static", value)
    for position, leaves in enumerate(zip(*per_branch)):
        avals = [x for x in leaves if isinstance(x, jax.core.ShapedArray)]
        if len(avals) == len(leaves):
            for name, aval in zip(names[1:], avals[1:]):
                if aval.shape != avals[0].shape or aval.dtype != avals[0].dtype:
                    raise ValueError(f"{what}: output {position} is {tuple(avals[0].shape)} {avals[0].dtype.name} in "
                                     f"{names[0]} but {tuple(aval.shape)} {aval.dtype.name} in {name}; both branches "
                                     "must agree")
            kinds.append(avals[0])
        elif merge is not None:
            merged = merge(position, leaves)
            kinds.append(avals[0] if merged is ZEROS_LIKE_OTHER_BRANCH else ("static", merged))
        elif avals or any(x is not leaves[0] and x != leaves[0] for x in leaves):
            raise ValueError(f"{what}: output {position} is {leaves[0]!r} in {names[0]} but {leaves[1]!r} in "
                             f"{names[1]}; non-Tensor outputs must be the same in every branch")
        else:
            kinds.append(("static", leaves[0]))
    written = []
    for s in staged:
        for v in s.written:
            if all(v is not w for w in written):
                written.append(v)
    start = [v._value for v in written]

    def branch(s):
        def run():
            outs, values = s.call()
            outs = iter(outs)
            kept = []
            for is_array, kind in zip(s.out_is_array, kinds):
                value = next(outs) if is_array else None
                if not isinstance(kind, tuple):
                    kept.append(value if is_array else jnp.zeros(kind.shape, kind.dtype))
            by_id = {id(v): value for v, value in zip(s.written, values)}
            return kept + [by_id.get(id(v), x) for v, x in zip(written, start)]
        return run

    results = lax.switch(index._value, [branch(s) for s in staged])
    n_arrays = sum(not isinstance(k, tuple) for k in kinds)
    for v, value in zip(written, results[n_arrays:]):
        v.assign(Tensor(value), read_value=False)
    arrays = iter(results[:n_arrays])
    leaves = [k[1] if isinstance(k, tuple) else Tensor(next(arrays)) for k in kinds]
    return jax.tree_util.tree_unflatten(first.out_tree, leaves)


def select_branches(pred, true_fn, false_fn, merge=None):
    """Both branches run; results and Variable assignments are selected with ``mk.where``
    (the differentiable form used under a recording tape). ``merge``: as in ``run_branches``."""
    trace = _context.call_state.traces[-1] if _context.call_state.traces else None
    before = {id(v): v._value for v in trace.variables()} if trace is not None else {}

    def start_value(v):
        """The value ``v`` had when the cond began (a Variable first read inside a branch: the
        value it was lifted with)."""
        return before[id(v)] if id(v) in before else trace.value_when_lifted(v)

    def run(branch):
        out = branch()
        written = {}
        for v in trace.variables() if trace is not None else ():
            start = start_value(v)
            if v._value is not start:
                written[id(v)] = (v, v._value)
                v._value = start
        return out, written

    out_true, wrote_true = run(true_fn)
    out_false, wrote_false = run(false_fn)
    leaves_t, tree_t = _flatten(out_true)
    leaves_f, tree_f = _flatten(out_false)
    if tree_t != tree_f:
        raise ValueError(f"mk.cond: true_fn and false_fn must return the same structure, got {tree_t} and {tree_f}")
    merged = []
    for i, (a, b) in enumerate(zip(leaves_t, leaves_f)):
        if merge is not None and not (_is_value(a) and _is_value(b)):
            value = merge(i, (a, b))
            if value is ZEROS_LIKE_OTHER_BRANCH:
                a, b = (a, zeros_like_(_as_tensor(a))) if _is_value(a) else (zeros_like_(_as_tensor(b)), b)
                merged.append(where(pred, _as_tensor(a), _as_tensor(b)))
            else:
                merged.append(value)
            continue
        if not _is_value(a) and not _is_value(b):  # static leaves: None, strings, functions, ...
            if a is not b and a != b:
                raise ValueError(f"mk.cond: true_fn returns {a!r} where false_fn returns {b!r}; non-Tensor "
                                 "outputs must be the same in both branches")
            merged.append(a)
            continue
        a, b = _as_tensor(a), _as_tensor(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            raise ValueError(f"mk.cond: output {i} is {a.shape} {a.dtype.name} in true_fn but {b.shape} "
                             f"{b.dtype.name} in false_fn; both branches must agree")
        merged.append(where(pred, a, b))
    for key in set(wrote_true) | set(wrote_false):
        v = (wrote_true.get(key) or wrote_false.get(key))[0]
        value_true = wrote_true[key][1] if key in wrote_true else start_value(v)
        value_false = wrote_false[key][1] if key in wrote_false else start_value(v)
        v.assign(where(pred, Tensor(value_true), Tensor(value_false)))
    return jax.tree_util.tree_unflatten(tree_t, merged)


def _is_value(x):
    return is_array_leaf(x) or type(x) in (int, float, bool)


def switch_case(branch_index, branch_fns, default=None, name=None):
    """Runs ``branch_fns[branch_index]()`` (``tf.switch_case``).

    ``branch_fns`` is a list of callables, or a dict / list of pairs mapping ints 0..n-1 to
    callables. An index out of range runs ``default``, or the last branch when there is no
    default. As ``mk.cond``: eagerly (or with a known index) only that branch runs; with a
    traced index each branch is traced once and the program runs the taken one.

    >>> mk.switch_case(mk.constant(1), [lambda: mk.constant(10.0), lambda: mk.constant(20.0)])
    mk.Tensor(20.0, shape=(), dtype=float32)
    """
    fns = _branch_list(branch_fns)
    if default is not None:
        if not callable(default):
            raise TypeError(f"mk.switch_case: default must be callable, received {type(default).__name__}")
        fns.append(default)
    index = to_array(branch_index)
    if index.shape != () or not jnp.issubdtype(index.dtype, jnp.integer):
        raise TypeError(f"mk.switch_case: branch_index must be a scalar int Tensor, received shape "
                        f"{tuple(index.shape)} dtype {index.dtype}")
    last = len(fns) - 1
    index = jnp.where((index < 0) | (index > last), last, index).astype(jnp.int32)
    return _run_indexed(Tensor(index), fns, "mk.switch_case")


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name=None):
    """Runs the callable of the first pair whose predicate is True (``tf.case``).

    ``pred_fn_pairs``: a list of ``(pred, fn)`` pairs (scalar bool Tensors and callables).
    With no predicate True, ``default()`` runs; without ``default``, the last pair's ``fn``
    (TensorFlow runs it too, after asserting its predicate). ``exclusive=True`` checks that at
    most one predicate is True (eagerly; a traced check is skipped).

    >>> x = mk.constant(3.0)
    >>> mk.case([(x < 0.0, lambda: -1.0), (x > 0.0, lambda: 1.0)], default=lambda: 0.0)
    1.0
    """
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    pairs = list(pred_fn_pairs)
    if not pairs:
        raise ValueError("mk.case needs at least one (pred, fn) pair")
    for i, pair in enumerate(pairs):
        if not isinstance(pair, tuple) or len(pair) != 2 or not callable(pair[1]):
            raise TypeError(f"mk.case: pred_fn_pairs[{i}] must be a (pred, callable) tuple, received {pair!r}")
    preds = [to_array(p) for p, _ in pairs]
    for i, p in enumerate(preds):
        if p.shape not in ((), (1,)) or p.dtype != jnp.bool_:
            raise TypeError(f"mk.case: predicate {i} must be a scalar bool Tensor, received shape "
                            f"{tuple(p.shape)} dtype {p.dtype}")
    fns = [fn for _, fn in pairs]
    if default is not None:
        fns.append(default)
    stacked = jnp.stack([p.reshape(()) for p in preds])
    if not is_tracer(stacked):
        count = int(stacked.sum())
        if exclusive and count > 1:
            raise ValueError(f"mk.case: exclusive=True, but {count} predicates are True: "
                             f"{[int(i) for i in jnp.nonzero(stacked)[0]]}")
    index = jnp.where(stacked.any(), jnp.argmax(stacked), len(fns) - 1).astype(jnp.int32)
    return _run_indexed(Tensor(index), fns, "mk.case")


def _branch_list(branch_fns):
    if isinstance(branch_fns, dict):
        branch_fns = list(branch_fns.items())
    fns = list(branch_fns)
    if not fns:
        raise ValueError("mk.switch_case needs at least one branch")
    if all(isinstance(f, tuple) for f in fns):
        keys = sorted(k for k, _ in fns)
        if keys != list(range(len(fns))):
            raise ValueError(f"mk.switch_case: branch keys must be 0..{len(fns) - 1}, received {keys}")
        fns = [f for _, f in sorted(fns, key=lambda kv: kv[0])]
    for i, f in enumerate(fns):
        if not callable(f):
            raise TypeError(f"mk.switch_case: branch {i} must be callable, received {type(f).__name__}")
    return fns


def _run_indexed(index, fns, what):
    names = tuple(f"branch {i}" for i in range(len(fns)))
    if not is_tracer(index._value):
        return _python_numbers_as_tensors(fns[int(index._value)]())
    if _context.call_state.tapes:  # the differentiable form: nested selections
        def chain(i):
            if i == len(fns) - 1:
                return fns[i]
            return lambda: select_branches(Tensor(index._value == i), fns[i], chain(i + 1))
        return chain(0)()
    return run_branches(index, fns, what, names)


class _CustomGradientOp(Op):
    """A recorded call of a ``custom_gradient`` function; its backward is the user's grad_fn
    (arbitrary Python, so never part of a compiled backward pass: not ``fusable``)."""

    def __init__(self, name, grad_fn, n_inputs, variables):
        self.name = name
        self.grad_fn = grad_fn
        self.n_inputs = n_inputs
        self.variables = variables

    def backward(self, record, cotangents, recorded):
        upstream = [c if isinstance(c, Tensor) else Tensor(c) for c in cotangents]
        if self.variables:
            result = self.grad_fn(*upstream, variables=list(self.variables))
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise ValueError(f"custom_gradient function {self.name}: with variables, grad_fn must return "
                                 "(input_gradients, variable_gradients)")
            input_grads, variable_grads = result
            input_grads = _as_list(input_grads)
            variable_grads = list(variable_grads)
            if len(variable_grads) != len(self.variables):
                raise ValueError(f"custom_gradient function {self.name} expected to return {len(self.variables)} "
                                 f"variable gradients, but returned {len(variable_grads)} instead.")
        else:
            input_grads, variable_grads = _as_list(self.grad_fn(*upstream)), []
        if len(input_grads) != self.n_inputs:
            raise ValueError(f"custom_gradient function {self.name} expected to return {self.n_inputs} gradients, "
                             f"but returned {len(input_grads)} instead.")
        grads = [None if g is None else _as_tensor(g) for g in list(input_grads) + variable_grads]
        if recorded:
            return grads
        return [None if g is None else g._value for g in grads]


def _as_list(grads):
    return list(grads) if isinstance(grads, (tuple, list)) else [grads]


def _input_tensor(x):
    if isinstance(x, Variable):
        return x.value()  # recorded on the tapes, as any read
    return x if isinstance(x, Tensor) else Tensor(to_array(x))


def _as_tensor(g):
    return g if isinstance(g, Tensor) else Tensor(to_array(g))


def custom_gradient(f=None):
    """Decorates ``f(*x) -> (y, grad_fn)`` to define its gradient, as ``tf.custom_gradient``.

    ``grad_fn(*upstream)`` returns one gradient per input of ``f`` (a list, or one value
    when there is one input). If ``f`` reads trainable Variables, ``grad_fn`` must take a
    ``variables=`` keyword and return ``(input_gradients, variable_gradients)``. A wrong
    number of gradients is a ValueError that says how many were expected. ``grad_fn`` may
    use minikeras ops; an outer tape records them (higher-order gradients).

    >>> @mk.custom_gradient
    ... def clip_gradient(x):
    ...     def grad(upstream):
    ...         return mk.clip_by_value(upstream, -1.0, 1.0)
    ...     return mk.identity(x), grad
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        inputs = [_input_tensor(a) for a in args]
        collector = VariableReads()
        saved = list(_context.call_state.tapes)
        with _context.recording_with([collector]):
            y, grad_fn = f(*inputs, **kwargs)
        variables = [v for v in collector.variables.values() if v.trainable]
        if variables and "variables" not in inspect.signature(grad_fn).parameters \
                and not any(p.kind == p.VAR_KEYWORD for p in inspect.signature(grad_fn).parameters.values()):
            raise TypeError(
                f"custom_gradient function {f.__name__} reads Variables {[v.name for v in variables]}, so its "
                "grad_fn must accept a `variables=` keyword argument and return (input_grads, variable_grads)")
        if saved:
            leaves, tree = _flatten(y)
            # fresh Tensors, so that an output is never also an input (``return x, grad``)
            outs = tuple(Tensor(to_array(leaf)) for leaf in leaves)
            op = _CustomGradientOp(f.__name__, grad_fn, len(inputs), variables)
            record_inputs = tuple(inputs) + tuple(variables)
            for tape in saved:
                tape.watch_accessed(variables)
                tape.record(op, None, record_inputs, outs)
            y = jax.tree_util.tree_unflatten(tree, list(outs))
        return y

    return wrapped


def grad_pass_through(f):
    """Wraps ``f`` so its forward runs as usual but the gradient is the identity."""
    @custom_gradient
    def wrapped(x):
        return f(x), lambda g: g
    return wrapped


__all__ = ["case", "cond", "custom_gradient", "grad_pass_through", "switch_case"]
