"""A pure jax function of arrays called as ONE recorded op: ``call_jax``.

Recurrent layers run their whole loop over time as one ``lax.scan``; a tape must not see one
record per time step. ``call_jax(fn, inputs)`` computes ``fn(*arrays)`` (a tuple of arrays)
and records a single op on the recording tapes, whose backward pass is ``jax.vjp`` of ``fn``:

- inside ``mk.function`` (the inputs are tracers) the forward pass is ``jax.vjp`` itself, so the
  scan keeps its residuals and the backward pass is the scan's transpose, as a hand-written
  ``jax.value_and_grad`` would compile it;
- eagerly, the forward pass and the backward pass are each one compiled program, kept per
  ``key`` (the backward pass computes the forward again for its residuals);
- when an outer tape records the backward pass (second order), the backward pass is itself
  a ``call_jax`` of the vjp, recorded as one op, and so on for every order.

Inputs whose dtype carries no gradient (a boolean mask) and those listed as ``constant``
are passed to ``fn`` but not differentiated.
"""
import jax

from minikeras import _context
from minikeras.ops.op import Op, carries_gradient
from minikeras.tensor import Tensor, Variable, to_array
from minikeras.xla_cpu import jit

_EAGER = {}  # (key, what) -> compiled function; what: "forward" or "vjp"
MAX_EAGER = 256


def _compiled(key, what, build):
    fn = _EAGER.get((key, what)) if key is not None else None
    if fn is None:
        fn = jit(build())
        if key is not None:
            if len(_EAGER) >= MAX_EAGER:
                _EAGER.pop(next(iter(_EAGER)))
            _EAGER[(key, what)] = fn
    return fn


def _split(fn, diff, arrays):
    """``fn`` as a function of the differentiable arrays only (the others closed over)."""
    def of_diff(*diff_arrays):
        full = list(arrays)
        for i, a in zip(diff, diff_arrays):
            full[i] = a
        return tuple(fn(*full))
    return of_diff


def _vjp_function(fn, n_inputs, diff):
    """``(*inputs, *cotangents) -> gradients of the differentiable inputs`` for ``fn``."""
    def vjp(*values):
        arrays, cotangents = values[:n_inputs], values[n_inputs:]
        _, pullback = jax.vjp(_split(fn, diff, arrays), *[arrays[i] for i in diff])
        return tuple(pullback(tuple(cotangents)))
    return vjp


class _JaxCallOp(Op):
    """One recorded ``call_jax``: its backward is the vjp of ``fn`` (see the module docstring)."""

    fusable = False  # several outputs; the compiled tape plans take one-output ops

    def __init__(self, name, fn, diff, n_inputs, key, pullback):
        self.name = name
        self.fn = fn
        self.diff = diff
        self.n_inputs = n_inputs
        self.key = key
        self.pullback = pullback  # the forward's vjp (traced) or None (eager: recomputed)

    def backward(self, record, cotangents, recorded):
        n = self.n_inputs
        if recorded:
            cts = [c if isinstance(c, Tensor) else Tensor(c) for c in cotangents]
            grads = call_jax(_vjp_function(self.fn, n, self.diff), list(record.inputs[:n]) + cts,
                             name=f"{self.name}_grad",
                             key=None if self.key is None else (self.key, "vjp", self.diff))
        else:
            cts = tuple(to_array(c) for c in cotangents)
            if self.pullback is not None:
                grads = self.pullback(cts)
            else:
                arrays = [x._value for x in record.inputs[:n]]
                vjp = _compiled((self.key, self.diff), "vjp", lambda: _vjp_function(self.fn, n, self.diff))
                grads = vjp(*arrays, *cts)
        out = [None] * len(record.inputs)
        for i, g in zip(self.diff, grads):
            out[i] = g
        return out


def _as_tensor(x):
    if isinstance(x, Variable):
        return x.value()  # recorded on the tapes, as any read
    return x if isinstance(x, Tensor) else Tensor(to_array(x))


def call_jax(fn, inputs, name="jax_call", constant=(), key=None):
    """``fn(*arrays)`` on ``inputs`` (Tensors, Variables or arrays), recorded as one op.

    Args:
      fn: a pure function of jax arrays returning a tuple of arrays.
      inputs: its arguments; Variables are read (the tapes record the reads).
      name: the op's name in errors and gradient diagnoses.
      constant: positions of inputs never differentiated (besides non-float ones).
      key: a hashable that identifies ``fn`` (same key, same computation): eagerly, the
        compiled forward and backward programs are kept under it. None: compiled each call.

    Returns:
      A tuple of Tensors, one per output of ``fn``.
    """
    tensors = [_as_tensor(x) for x in inputs]
    arrays = [t._value for t in tensors]
    constant = set(constant)
    if not _context.call_state.tapes:
        if _context.call_state.traces:
            return tuple(Tensor(o) for o in fn(*arrays))
        return tuple(Tensor(o) for o in _compiled(key, "forward", lambda: fn)(*arrays))
    diff = tuple(i for i, a in enumerate(arrays) if i not in constant and carries_gradient(a.dtype))
    if _context.call_state.traces:
        outs, pullback = jax.vjp(_split(fn, diff, arrays), *[arrays[i] for i in diff])
    else:
        outs, pullback = _compiled(key, "forward", lambda: fn)(*arrays), None
    outs = tuple(Tensor(o) for o in outs)
    op = _JaxCallOp(name, fn, diff, len(tensors), key, pullback)
    for tape in _context.call_state.tapes:
        tape.record(op, None, tuple(tensors), outs)
    return outs

