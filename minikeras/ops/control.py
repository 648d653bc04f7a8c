"""Control flow and gradient control: cond and custom_gradient."""
import functools
import inspect

import jax

from minikeras import _context
from minikeras.backend import is_tracer
from minikeras.ops.math import where
from minikeras.ops.op import Op
from minikeras.tensor import Tensor, Variable, to_array


def _flatten(tree):
    return jax.tree_util.tree_flatten(tree, is_leaf=lambda x: isinstance(x, (Tensor, Variable)))


def cond(pred, true_fn=None, false_fn=None, name=None):
    """``true_fn()`` if ``pred`` else ``false_fn()``, eagerly and inside ``mk.function``.

    Eagerly only the chosen branch runs. Inside ``mk.function`` the predicate is unknown
    while tracing, so both branches are traced and their results (and any Variables they
    assign) are selected with ``mk.where``; the result is differentiable either way. Both
    branches must return the same structure, shapes and dtypes.
    """
    if true_fn is None or false_fn is None:
        raise TypeError("mk.cond needs both true_fn and false_fn")
    pred_value = to_array(pred)
    if pred_value.shape not in ((), (1,)):
        raise ValueError(f"mk.cond needs a scalar predicate, received shape {tuple(pred_value.shape)}")
    if not is_tracer(pred_value):
        return true_fn() if bool(pred_value.reshape(())) else false_fn()
    return _select_branches(Tensor(pred_value.reshape(()).astype(bool)), true_fn, false_fn)


def _select_branches(pred, true_fn, false_fn):
    trace = _context.traces[-1] if _context.traces else None
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
        if a is None and b is None:
            merged.append(None)
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


class _VariableCollector:
    """Stands in the tape list while a custom_gradient function runs, to see which Variables it
    reads (and record nothing): it follows the tape protocol (``minikeras.tape``)."""

    def __init__(self):
        self.variables = {}

    def read_variable(self, variable, out):
        self.variables.setdefault(id(variable), variable)

    def watch_accessed(self, variables):
        for variable in variables:
            self.variables.setdefault(id(variable), variable)

    def record(self, op, params, inputs, outs):
        pass


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
        collector = _VariableCollector()
        saved = list(_context.tapes)
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


__all__ = ["cond", "custom_gradient", "grad_pass_through"]
