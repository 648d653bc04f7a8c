"""What every op that a GradientTape records provides: the ``Op`` base class.

A tape (``minikeras.tape``) records ``(op, params, inputs, outs)`` and, walking its records
backward, asks each op for the gradients of its inputs in one of two ways:

- ``op.backward(record, cotangents, recorded)``: from a record. ``recorded`` is True when an
  outer tape records this backward pass (a higher-order gradient): then the cotangents and
  the result are Tensors, computed with minikeras ops so the outer tape sees them; otherwise
  they are jax arrays.
- ``op.rule_on_arrays(g, out, inputs, params)``: the same on arrays, given the op's one
  output cotangent ``g``, its output ``out`` and input arrays; used by the compiled backward
  pass, which traces it into one XLA program. Only ops with ``fusable = True`` are asked.

Subclasses: ``Primitive`` (``ops.primitive``, the jax ops with a gradient rule), the tape's
Variable read (``tape.recording``) and ``custom_gradient``'s op (``ops.control``).
"""
import numpy as np

_NONDIFF_DTYPE_KINDS = "biu"  # bool, signed and unsigned integers carry no gradient


class Op:
    """An operation a tape can record and differentiate.

    Attributes:
      name: the op's name, used in error messages and in "why is this gradient None".
      differentiable: False for ops whose outputs carry no gradient (round, argmax, ...).
      fusable: True when ``rule_on_arrays`` is a pure function of arrays, so that the
        compiled backward pass may trace it.
    """

    name = "op"
    differentiable = True
    fusable = False

    def backward(self, record, cotangents, recorded):
        """Input gradients of ``record`` (one per input, None where there is none) given its
        output cotangents: Tensors if ``recorded``, else arrays (see the module docstring).
        By default the array rule, for ops with one output."""
        if recorded:
            raise NotImplementedError(f"{type(self).__name__} has no recorded backward pass")
        return self.rule_on_arrays(cotangents[0], record.outs[0]._value, [x._value for x in record.inputs],
                                   params_key(record.params))

    def rule_on_arrays(self, g, out, inputs, params):
        """Input gradients as arrays; ``params`` is a tuple of (name, value) pairs."""
        raise NotImplementedError(f"{type(self).__name__} has no gradient rule on arrays")

    def __repr__(self):
        return f"<mk op {self.name}>"


def params_key(params):
    """An op call's static parameters as a hashable tuple of (name, value) pairs."""
    return tuple(params.items()) if params else ()


_CARRIES = {}


def carries_gradient(dtype):
    """Whether values of ``dtype`` carry gradients (floating and complex do; int and bool do not)."""
    result = _CARRIES.get(dtype)
    if result is None:
        result = _CARRIES[dtype] = np.dtype(dtype).kind not in _NONDIFF_DTYPE_KINDS
    return result
