"""Jacobians from a tape's recording: one vectorised backward pass over all output elements.

Each output element's one-hot cotangent is a row of a stacked seed; ``jax.vmap`` runs the
backward pass over all rows at once (compiled, via ``compiled``). Under an outer recording
tape (a Hessian as the jacobian of a gradient), rows run one by one as taped ops, so the
result stays differentiable.

``GradientTape.jacobian``/``batch_jacobian`` check the arguments, keep the tape's use count
and handle unconnected sources; the functions here return None for a source with no path.
"""
import jax
import jax.numpy as jnp
import numpy as np

from minikeras import _context
from minikeras.ops.array import reshape, stack, transpose
from minikeras.tape import compiled
from minikeras.tensor import Tensor


def jacobian(recording, target, sources):
    """[Jacobian of ``target`` w.r.t. each source, shape ``target.shape + source.shape``, or
    None where unconnected]."""
    n = int(np.prod(target.shape, dtype=np.int64))
    seeds = jnp.asarray(np.eye(n, dtype=target.dtype).reshape((n,) + target.shape))
    rows = _vectorised_backward(recording, target, seeds, sources)
    results = []
    for source, row in zip(sources, rows):
        shape = target.shape + source.shape
        if row is None:
            results.append(None)
        elif isinstance(row, Tensor):  # recorded by an outer tape: keep it connected
            results.append(reshape(row, shape))
        else:
            results.append(Tensor(jnp.reshape(row, shape)))
    return results


def batch_jacobian(recording, target, source):
    """Per-example Jacobians ``[batch, *target.shape[1:], *source.shape[1:]]``, or None where
    unconnected (target and source share their first dimension)."""
    batch, out_shape, in_shape = target.shape[0], target.shape[1:], source.shape[1:]
    n = int(np.prod(out_shape, dtype=np.int64))
    eye = jnp.asarray(np.eye(n, dtype=target.dtype).reshape((n, 1) + out_shape))
    seeds = jnp.broadcast_to(eye, (n, batch) + out_shape)
    (rows,) = _vectorised_backward(recording, target, seeds, [source])
    if rows is None:
        return None
    result_shape = (batch,) + out_shape + in_shape
    perm = (1, 0) + tuple(range(2, 2 + len(in_shape)))  # [n, batch, ...] -> [batch, n, ...]
    if isinstance(rows, Tensor):  # recorded by an outer tape
        return reshape(transpose(reshape(rows, (n, batch) + in_shape), perm), result_shape)
    return Tensor(jnp.transpose(jnp.reshape(rows, (n, batch) + in_shape), perm).reshape(result_shape))


def _vectorised_backward(recording, target, seeds, sources):
    """Gradient rows for each seed in ``seeds`` (stacked on axis 0), one entry per source
    (None where unconnected): arrays, or Tensors when an outer tape records."""
    source_ids = tuple(id(s) for s in sources)
    if not _context.call_state.tapes:
        if not _context.call_state.traces:
            plan = compiled.make_plan(recording.records, recording.tracked, (id(target),), source_ids)
            if plan is not None:
                return compiled.run_vectorised(plan, [seeds])
        connected = []

        def one_row(seed):
            grads = recording.backward([(id(target), seed)], source_ids, recorded=False)
            connected[:] = [grads.get(key) is not None for key in source_ids]
            return [grads[key] for key in source_ids if grads.get(key) is not None]

        stacked = iter(jax.vmap(one_row)(seeds))
        return [next(stacked) if c else None for c in connected]
    # An outer tape records this backward pass (higher order): row by row, taped.
    per_row = [recording.backward([(id(target), Tensor(seed))], source_ids, recorded=True) for seed in seeds]
    return [None if per_row[0].get(key) is None else stack([r[key] for r in per_row]) for key in source_ids]
