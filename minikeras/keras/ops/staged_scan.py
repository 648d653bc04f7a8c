"""``keras.ops.scan`` as one ``lax.scan`` inside ``mk.function`` when no tape records.

There the step function is staged once (``ops.staging.stage``: Variables it reads are lifted,
those it assigns become carries, assigned once after the loop), so the program holds one loop
whatever the length. Under a recording tape, and eagerly, ``keras.ops.scan`` calls the
function once per element instead (see ``core.scan``), so that the tape records ordinary ops.
"""
import jax
from jax import lax

from minikeras.ops.staging import flatten, stage
from minikeras.tensor import Tensor, to_array


def staged_scan(f, init, xs, length, reverse, unroll):
    """``(carry, ys)`` of ``f`` over ``xs`` (leading axis ``length``) as one ``lax.scan``."""
    carry_leaves, carry_tree = flatten(init)
    carry_arrays = [to_array(x) for x in carry_leaves]
    x_leaves, x_tree = flatten(xs)
    x_arrays = [to_array(x) for x in x_leaves]
    avals = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in carry_arrays] + \
        [jax.ShapeDtypeStruct(a.shape[1:], a.dtype) for a in x_arrays]
    n_carry = len(carry_arrays)

    def step(*values):
        carry = jax.tree_util.tree_unflatten(carry_tree, list(values[:n_carry]))
        x = None if xs is None else jax.tree_util.tree_unflatten(x_tree, list(values[n_carry:]))
        out = f(carry, x)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"keras.ops.scan: f must return a pair (carry, y), returned {type(out).__name__}")
        return tuple(out)

    carried = []
    while True:  # a Variable first assigned by f joins the carries; stage again with it
        staged = stage(step, avals, carried)
        new = [v for v in staged.written if all(v is not c for c in carried)]
        if not new:
            break
        carried += new
    if not all(staged.out_is_array):
        raise TypeError("keras.ops.scan: inside mk.function f must return Tensors (or None for y)")
    out_carry = staged.out_avals[:n_carry]
    expected = [(tuple(a.shape), a.dtype) for a in avals[:n_carry]]
    got = [(tuple(a.shape), a.dtype) for a in out_carry]
    if got != expected or staged.out_tree.children()[0] != carry_tree:
        raise TypeError(f"keras.ops.scan: the carry output of f must have the structure, shapes and dtypes of init: "
                        f"{expected}, received {got}")

    def body(state, x_values):
        carry, variables = state
        outs, written = staged.call(*carry, *x_values, *variables)
        by_id = {id(v): value for v, value in zip(staged.written, written)}
        variables = [by_id.get(id(v), old) for v, old in zip(carried, variables)]
        return (outs[:n_carry], variables), outs[n_carry:]

    (final, variables), ys = lax.scan(body, (carry_arrays, [v._value for v in carried]), x_arrays,
                                      length=length, reverse=reverse, unroll=unroll)
    for v, value in zip(carried, variables):
        v.assign(Tensor(value), read_value=False)
    return staged.result(list(final) + list(ys))
