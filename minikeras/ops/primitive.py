"""Primitive ops: one forward (jax) and one gradient rule (minikeras ops), side by side.

    sin = Primitive("sin", lambda x: jnp.sin(x))

    @sin.defgrad
    def _(g, out, x):
        return g * cos(x)

A rule receives the output cotangent ``g``, the op's output ``out``, its inputs, and the
op's static parameters as keywords; it returns one gradient per input (``None`` where
there is none). Because rules are written with minikeras ops, an outer tape records the
inner tape's backward pass, which is how higher-order derivatives work. When nothing
records the backward pass, a backward pass whose structure repeats runs as one compiled
program (``minikeras.tape_compiled``).
"""
import inspect

import jax
import numpy as np

from minikeras import _context
from minikeras.tensor import Tensor, Variable, to_array

_NONDIFF_DTYPE_KINDS = "biu"  # bool, signed and unsigned integers carry no gradient


class Primitive:
    """An op with a jax forward and, unless ``differentiable=False``, a gradient rule.

    Args:
      name: the op's name, used in error messages and in "why is this gradient None".
      forward: ``forward(*arrays, **params)``; keyword-only parameters are static (hashable)
        and become part of the compiled function's cache key.
      differentiable: ``False`` for ops whose outputs carry no gradient (round, argmax, ...).
    """

    fusable = True  # its backward is a pure function of arrays: tape_compiled may fuse it

    def __init__(self, name, forward, differentiable=True):
        self.name = name
        self.forward = forward
        self.differentiable = differentiable
        params = inspect.signature(forward).parameters.values()
        self.static_names = tuple(p.name for p in params if p.kind == p.KEYWORD_ONLY)
        self._jit_forward = jax.jit(forward, static_argnames=self.static_names)
        self.rule = None

    def defgrad(self, rule):
        """Registers ``rule(g, out, *inputs, **params)`` as this op's gradient; returns it."""
        self.rule = rule
        return rule

    def rule_on_arrays(self, g, out, inputs, params):
        """The rule on jax arrays; ``params`` is a tuple of (name, value) pairs (so that a
        parameter's name never collides with ``g`` or ``out``)."""
        if self.rule is None:
            raise LookupError(f"No gradient defined for operation '{self.name}' (it has no gradient rule)")
        grads = self.rule(Tensor(g), Tensor(out), *[Tensor(x) for x in inputs], **dict(params))
        return tuple(None if r is None else to_array(r) for r in _as_tuple(grads))

    def __call__(self, *inputs, **params):
        if _context.tapes:
            return _call_recorded(self, inputs, params)
        arrays = [x._value if type(x) is Tensor else to_array(x) for x in inputs]
        if _context.traces:
            return Tensor(self.forward(*arrays, **params))
        return Tensor(self._jit_forward(*arrays, **params))

    def backward(self, record, cotangents, fast):
        """Input gradients of ``record`` given its output cotangents (arrays if ``fast``)."""
        if fast:
            return self.rule_on_arrays(cotangents[0], record.outs[0]._value, [x._value for x in record.inputs],
                                       params_key(record.params))
        if self.rule is None:
            raise LookupError(f"No gradient defined for operation '{self.name}' (it has no gradient rule)")
        return _as_tuple(self.rule(cotangents[0], record.outs[0], *record.inputs, **record.params))

    def __repr__(self):
        return f"<mk primitive {self.name}>"


def params_key(params):
    """A primitive call's static parameters as a hashable tuple."""
    return tuple(params.items()) if params else ()


def _as_tuple(grads):
    return tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)


class Record:
    """One recorded op on a tape: what ran, on which tensors, producing which tensors."""

    __slots__ = ("op", "params", "inputs", "outs")

    def __init__(self, op, params, inputs, outs):
        self.op = op
        self.params = params
        self.inputs = inputs
        self.outs = outs


_CARRIES = {}


def carries_gradient(dtype):
    """Whether values of ``dtype`` carry gradients (floating and complex do; int and bool do not)."""
    result = _CARRIES.get(dtype)
    if result is None:
        result = _CARRIES[dtype] = np.dtype(dtype).kind not in _NONDIFF_DTYPE_KINDS
    return result


def _call_recorded(prim, inputs, params):
    tensors = tuple(x if type(x) is Tensor else _as_input_tensor(x) for x in inputs)
    arrays = [t._value for t in tensors]
    if _context.traces:
        out = Tensor(prim.forward(*arrays, **params))
    else:
        out = Tensor(prim._jit_forward(*arrays, **params))
    outs = (out,)
    for tape in _context.tapes:
        tape._record(prim, params, tensors, outs)
    return out


def _as_input_tensor(x):
    if isinstance(x, Variable):
        return read_variable(x)
    if isinstance(x, Tensor):
        return x
    return Tensor(to_array(x))


class _ReadVariable:
    """The identity op that turns a Variable read into a Tensor on the tapes that watch it."""

    name = "read_variable"
    differentiable = True
    fusable = True

    @staticmethod
    def backward(record, cotangents, fast):
        return cotangents

    @staticmethod
    def rule_on_arrays(g, out, inputs, params):
        return (g,)


READ_VARIABLE = _ReadVariable()


def read_variable(variable):
    """Returns the variable's value as a Tensor; tapes watching the variable record the read."""
    out = Tensor(variable._read_array())
    outs = (out,)
    for tape in _context.tapes:
        if variable.trainable and tape._watch_accessed_variables:
            tape._watch_object(variable)
        if id(variable) in tape._tracked:
            tape._record(READ_VARIABLE, None, (variable,), outs)
    return out
