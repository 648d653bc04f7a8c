"""Row lookup for Embedding with ``jnp.take``'s out-of-range rule (NaN rows), and its gradient.

    take_rows(table, ids)       -> table[ids]; ids outside [-n, n) give NaN rows
    d/dtable: scatter_rows(g, ids)   (rows of g added at ids; out-of-range ids dropped)
    scatter_rows' gradient in g: take_rows(g, ids) with 0 for out-of-range ids

so derivatives of any order go through the pair. Negative ids in [-n, 0) count from the end,
as in NumPy. This is what Keras 3 on JAX computes (``ops.take``); minikeras' Embedding raises on
such ids before getting here whenever it runs eagerly.
"""
import jax.numpy as jnp

from minikeras.ops.primitive import Primitive


def _take(table, ids, *, nan):
    return jnp.take(table, ids, axis=0, mode="fill", fill_value=jnp.nan if nan else 0)


def _scatter(g, ids, *, rows):
    return jnp.zeros((rows,) + g.shape[ids.ndim:], g.dtype).at[ids].add(g, mode="drop")


_take_rows = Primitive("take_rows", _take)
_scatter_rows = Primitive("scatter_rows", _scatter)


@_take_rows.defgrad
def _(g, out, table, ids, *, nan):
    return _scatter_rows(g, ids, rows=table.shape[0]), None


@_scatter_rows.defgrad
def _(g, out, update, ids, *, rows):
    return _take_rows(g, ids, nan=False), None


def take_rows(table, ids):
    """``table[ids]`` along axis 0 (shape ``ids.shape + table.shape[1:]``), NaN rows for ids
    outside [-n, n); differentiable in ``table`` to any order."""
    return _take_rows(table, ids, nan=True)
