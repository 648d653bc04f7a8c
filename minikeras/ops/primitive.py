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
program (``minikeras.tape.compiled``).

A call records itself on the tapes in ``_context.call_state.tapes`` through the tape protocol
(``minikeras.tape``): ``tape.record(op, params, inputs, outs)``.
"""
import inspect

import jax

from minikeras import _context
from minikeras.backend import folding_constants
from minikeras.ops.op import Op
from minikeras.symbolic import SymbolicInput, is_symbolic, record_op
from minikeras.tensor import Tensor, Variable, to_array


class Primitive(Op):
    """An op with a jax forward and, unless ``differentiable=False``, a gradient rule.

    Args:
      name: the op's name, used in error messages and in "why is this gradient None".
      forward: ``forward(*arrays, **params)``; keyword-only parameters are static (hashable)
        and become part of the compiled function's cache key.
      differentiable: ``False`` for ops whose outputs carry no gradient (round, argmax, ...).
    """

    fusable = True  # its rule is a pure function of arrays: the compiled backward pass may trace it

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

    def _checked_rule(self):
        if self.rule is None:
            raise LookupError(f"No gradient defined for operation '{self.name}' (it has no gradient rule)")
        return self.rule

    def rule_on_arrays(self, g, out, inputs, params):
        """The rule on jax arrays; ``params`` is a tuple of (name, value) pairs (so that a
        parameter's name never collides with ``g`` or ``out``)."""
        grads = self._checked_rule()(Tensor(g), Tensor(out), *[Tensor(x) for x in inputs], **dict(params))
        return tuple(None if r is None else to_array(r) for r in _as_tuple(grads))

    def backward(self, record, cotangents, recorded):
        if not recorded:
            return super().backward(record, cotangents, recorded)
        return _as_tuple(self._checked_rule()(cotangents[0], record.outs[0], *record.inputs, **record.params))

    def __call__(self, *inputs, **params):
        state = _context.call_state
        if state.tapes:
            return _call_recorded(self, inputs, params, state)
        try:
            arrays = [x._value if type(x) is Tensor else to_array(x) for x in inputs]
        except SymbolicInput:
            return _symbolic_call(self, inputs, params)
        if state.traces:
            with folding_constants(arrays, params):
                return Tensor(self.forward(*arrays, **params))
        return Tensor(self._jit_forward(*arrays, **params))

    def __repr__(self):
        return f"<mk primitive {self.name}>"


def _as_tuple(grads):
    return tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)


def _symbolic_call(prim, inputs, params):
    """``prim`` on KerasTensors (building a functional model): a graph node, no value."""
    inputs = [x if is_symbolic(x) else to_array(x) for x in inputs]
    return record_op(prim, inputs, params, prim.forward)


def _call_recorded(prim, inputs, params, state):
    try:
        tensors = tuple(x if type(x) is Tensor else _as_input_tensor(x) for x in inputs)
    except SymbolicInput:
        return _symbolic_call(prim, inputs, params)
    arrays = [t._value for t in tensors]
    if state.traces:
        with folding_constants(arrays, params):
            out = Tensor(prim.forward(*arrays, **params))
    else:
        out = Tensor(prim._jit_forward(*arrays, **params))
    outs = (out,)
    for tape in state.tapes:
        tape.record(prim, params, tensors, outs)
    return out


def _as_input_tensor(x):
    if isinstance(x, Variable):
        return x.value()  # the tapes record the read
    if isinstance(x, Tensor):
        return x
    return Tensor(to_array(x))
