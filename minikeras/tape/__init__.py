"""Reverse-mode differentiation: ``GradientTape`` and what it records.

Layers, from the bottom up:
  ``targets``        the arguments of gradient/jacobian: targets, sources, seeds, unconnected modes
  ``reverse``        the one reverse loop, shared by both backward passes
  ``compiled``       a repeated backward pass as one compiled XLA program
  ``recording``      ``Recording``: the records of one tape and its backward pass
  ``jacobian``       jacobians as one vectorised backward pass
  ``diagnosis``      why a gradient is None
  ``gradient_tape``  ``GradientTape``, the user's handle on a Recording

The tape protocol
-----------------
While a tape records, its ``Recording`` is in ``minikeras._context.call_state.tapes`` (innermost last).
Code that computes values talks to every entry of that list through three methods, and
through nothing else:

``record(op, params, inputs, outs)``
    ``op`` (an ``minikeras.ops.op.Op``) ran on ``inputs`` (a tuple of Tensors; a Variable
    only for ops that read it, like ``custom_gradient``'s) with the static keyword
    parameters ``params`` (a dict or None), producing the tuple of Tensors ``outs``. The
    tape keeps the record if an input is tracked. Ops call it after computing ``outs``.
``read_variable(variable, out)``
    ``variable`` was read as the new Tensor ``out`` (``Variable.value()``): the tape watches a
    trainable Variable if it watches accessed Variables, and records the read (an identity
    op) if it tracks the Variable.
``watch_accessed(variables)``
    an op is about to record ``variables`` among its inputs: watch the trainable ones if the
    tape watches accessed Variables.

An ``Op`` gives the tape ``name``, ``differentiable``, ``fusable``, ``backward(record,
cotangents, recorded)`` and ``rule_on_arrays(g, out, inputs, params)`` (``minikeras.ops.op``).
``recorded`` says whether an outer tape records this backward pass (higher-order
gradients): then rules run as minikeras ops on Tensors, otherwise on arrays, and a backward
pass seen before runs as one compiled program.

Code other than the tape changes ``_context.call_state.tapes`` only with ``_context.recording_with``
(no tape: an optimizer update; a collector of Variable reads: ``custom_gradient``).
"""
from minikeras.tape.gradient_tape import GradientTape
from minikeras.tape.targets import UnconnectedGradients

__all__ = ["GradientTape", "UnconnectedGradients"]
