"""Primitive ops: one forward (jax) and one gradient rule (minikeras ops), side by side.

    sin = Primitive("sin", lambda x: jnp.sin(x))

    @sin.defgrad
    def _(g, out, x):
        return g * cos(x)

A rule receives the output cotangent ``g``, the op's output ``out``, its inputs, and the
op's static parameters as keywords; it returns one gradient per input (``None`` where
there is none). Because rules are written with minikeras ops, an outer tape records the
inner tape's backward pass, which is how higher-order derivatives work. When nothing
records the backward pass, the same rule runs as one cached ``jax.jit`` call instead.
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

    def __init__(self, name, forward, differentiable=True):
        self.name = name
        self.forward = forward
        self.differentiable = differentiable
        params = inspect.signature(forward).parameters.values()
        self.static_names = tuple(p.name for p in params if p.kind == p.KEYWORD_ONLY)
        self._jit_forward = jax.jit(forward, static_argnames=self.static_names)
        self.rule = None
        self._jit_rule = None

    def defgrad(self, rule):
        """Registers ``rule(g, out, *inputs, **params)`` as this op's gradient; returns it."""
        self.rule = rule
        self._jit_rule = jax.jit(self._rule_on_arrays, static_argnames=self.static_names)
        return rule

    def _rule_on_arrays(self, g, out, *inputs, **params):
        grads = self.rule(Tensor(g), Tensor(out), *[Tensor(x) for x in inputs], **params)
        return tuple(None if r is None else to_array(r) for r in _as_tuple(grads))

    def __call__(self, *inputs, **params):
        if not _context.tapes:
            arrays = [x._value if type(x) is Tensor else to_array(x) for x in inputs]
            if _context.traces:
                return Tensor(self.forward(*arrays, **params))
            return Tensor(self._jit_forward(*arrays, **params))
        return _call_recorded(self, inputs, params)

    def backward(self, record, cotangents, fast):
        """Input gradients of ``record`` given its output cotangents (arrays if ``fast``)."""
        g = cotangents[0]
        out = record.outs[0]
        if fast:
            arrays = [_value_of(x) for x in record.inputs]
            return self._jit_rule(g, out._value, *arrays, **record.params)
        return _as_tuple(self.rule(g, out, *[_tensor_of(x) for x in record.inputs], **record.params))

    def __repr__(self):
        return f"<mk primitive {self.name}>"


def _as_tuple(grads):
    return tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)


def _value_of(x):
    return x._value


def _tensor_of(x):
    return x if isinstance(x, Tensor) else Tensor(x._value)


class Record:
    """One recorded op on a tape: what ran, on which tensors, producing which tensors."""

    __slots__ = ("op", "params", "inputs", "outs")

    def __init__(self, op, params, inputs, outs):
        self.op = op
        self.params = params
        self.inputs = inputs
        self.outs = outs


def carries_gradient(dtype):
    return np.dtype(dtype).kind not in _NONDIFF_DTYPE_KINDS


def _call_recorded(prim, inputs, params):
    tensors = []
    for x in inputs:
        if type(x) is Tensor:
            tensors.append(x)
        elif isinstance(x, Variable):
            tensors.append(read_variable(x))
        elif isinstance(x, Tensor):
            tensors.append(x)
        else:
            tensors.append(Tensor(to_array(x)))
    arrays = [t._value for t in tensors]
    if _context.traces:
        out = Tensor(prim.forward(*arrays, **params))
    else:
        out = Tensor(prim._jit_forward(*arrays, **params))
    tensors = tuple(tensors)
    for tape in _context.tapes:
        tape._record(prim, params, tensors, (out,))
    return out


class _ReadVariable:
    """The identity op that turns a Variable read into a Tensor on the tapes that watch it."""

    name = "read_variable"
    differentiable = True

    @staticmethod
    def backward(record, cotangents, fast):
        return cotangents


READ_VARIABLE = _ReadVariable()


def read_variable(variable):
    """Returns the variable's value as a Tensor; tapes watching the variable record the read."""
    out = Tensor(variable._read_array())
    for tape in _context.tapes:
        if variable.trainable and tape._watch_accessed_variables:
            tape._watch_object(variable)
        if id(variable) in tape._tracked:
            tape._record(READ_VARIABLE, None, (variable,), (out,))
    return out
