"""Jacobians from a GradientTape: one vectorised backward pass over all output elements.

Each output element's one-hot cotangent is a row of a stacked seed; ``jax.vmap`` runs the
backward pass over all rows at once (compiled, via ``tape_compiled``). Under an outer
recording tape (a Hessian as the jacobian of a gradient), rows run one by one as taped ops,
so the result stays differentiable.
"""
import jax
import jax.numpy as jnp
import numpy as np

from minikeras import _context, tape_compiled
from minikeras.tensor import Tensor, Variable


def jacobian(tape, target, sources, mode):
    """``GradientTape.jacobian`` (see there); ``mode`` is an UnconnectedGradients."""
    from minikeras.ops.array import reshape
    from minikeras.tape import UnconnectedGradients, _check_sources, _constant, _flatten, _single_target
    tape._start_use("jacobian")
    flat_sources, treedef = _flatten(sources)
    _check_sources(flat_sources)
    target = _single_target(target, "jacobian")
    n = int(np.prod(target.shape, dtype=np.int64))
    seeds = jnp.asarray(np.eye(n, dtype=target.dtype).reshape((n,) + target.shape))
    rows = vectorised_backward(tape, target, seeds, flat_sources)
    results = []
    for index, (source, row) in enumerate(zip(flat_sources, rows)):
        shape = target.shape + source.shape
        if row is None:
            if mode is UnconnectedGradients.RAISE:
                tape._raise_unconnected([(index, source)], [(target, None)])
            results.append(Tensor(_constant(np.zeros, shape, target.dtype)) if mode is UnconnectedGradients.ZERO
                           else None)
        elif isinstance(row, Tensor):  # recorded by an outer tape: keep it connected
            results.append(reshape(row, shape))
        else:
            results.append(Tensor(jnp.reshape(row, shape)))
    tape._finish_use()
    return jax.tree_util.tree_unflatten(treedef, results)


def batch_jacobian(tape, target, source, mode):
    """``GradientTape.batch_jacobian`` (see there)."""
    from minikeras.ops.array import reshape, transpose
    from minikeras.tape import UnconnectedGradients, _constant, _single_target
    tape._start_use("batch_jacobian")
    target = _single_target(target, "batch_jacobian")
    if not isinstance(source, (Tensor, Variable)):
        raise ValueError(f"batch_jacobian expects one mk.Tensor or mk.Variable as source, received "
                         f"{type(source).__name__}")
    if target.ndim < 1 or source.ndim < 1 or target.shape[0] != source.shape[0]:
        raise ValueError(
            f"batch_jacobian needs target and source with the same first (batch) dimension, received "
            f"target shape {target.shape} and source shape {source.shape}")
    batch, out_shape, in_shape = target.shape[0], target.shape[1:], source.shape[1:]
    n = int(np.prod(out_shape, dtype=np.int64))
    eye = jnp.asarray(np.eye(n, dtype=target.dtype).reshape((n, 1) + out_shape))
    seeds = jnp.broadcast_to(eye, (n, batch) + out_shape)
    (rows,) = vectorised_backward(tape, target, seeds, [source])
    result_shape = (batch,) + out_shape + in_shape
    if rows is None:
        if mode is UnconnectedGradients.RAISE:
            tape._raise_unconnected([(0, source)], [(target, None)])
        tape._finish_use()
        return Tensor(_constant(np.zeros, result_shape, target.dtype)) if mode is UnconnectedGradients.ZERO else None
    perm = (1, 0) + tuple(range(2, 2 + len(in_shape)))  # [n, batch, ...] -> [batch, n, ...]
    if isinstance(rows, Tensor):  # recorded by an outer tape
        result = reshape(transpose(reshape(rows, (n, batch) + in_shape), perm), result_shape)
    else:
        result = Tensor(jnp.transpose(jnp.reshape(rows, (n, batch) + in_shape), perm).reshape(result_shape))
    tape._finish_use()
    return result


def vectorised_backward(tape, target, seeds, sources):
    """Gradient rows for each seed in ``seeds`` (stacked on axis 0), one entry per source
    (None where unconnected): arrays, or Tensors when an outer tape records."""
    source_ids = tuple(id(s) for s in sources)
    with tape._not_recording():
        if not _context.tapes:
            if not _context.traces:
                plan = tape_compiled.make_plan(tape._records, tape._tracked, (id(target),), source_ids)
                if plan is not None:
                    return tape_compiled.run_vectorised(plan, [seeds])
            connected = []

            def one_row(seed):
                grads = tape._backward([(id(target), seed)], source_ids, fast=True)
                connected[:] = [grads.get(key) is not None for key in source_ids]
                return [grads[key] for key in source_ids if grads.get(key) is not None]

            stacked = iter(jax.vmap(one_row)(seeds))
            return [next(stacked) if c else None for c in connected]
        # An outer tape records this backward pass (higher order): row by row, taped.
        from minikeras.ops.array import stack
        per_row = [tape._backward([(id(target), Tensor(seed))], source_ids, fast=False) for seed in seeds]
        return [None if per_row[0].get(key) is None else stack([r[key] for r in per_row]) for key in source_ids]
