"""``keras.ops.core``: Keras 3's core ops: control flow (``cond``, ``switch``, ``while_loop``,
``fori_loop``, ``scan``, ``map``, ``associative_scan``, ``vectorized_map``), conversions and
casts, slicing and scattering, ``stop_gradient`` and ``custom_gradient``.

Control flow works eagerly, inside ``mk.function`` and under a recording ``GradientTape``:
``cond``, ``switch`` and ``while_loop`` are ``mk.cond``/``mk.switch_case``/``mk.while_loop``
(one ``lax`` op in a compiled program). ``scan``, ``map``, ``associative_scan`` and
``vectorized_map`` run their function once per element as ordinary recorded ops (so Variables
read inside get gradients, of every order), at a trace time proportional to the length; inside
``mk.function`` with no tape recording, ``scan`` and ``map`` are one ``lax.scan``
(``staged_scan``).

    from minikeras import keras
    last, cumulative = keras.ops.scan(lambda c, x: (c + x, c + x), 0.0, xs)
"""
import builtins

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

from minikeras import _context
from minikeras.dtypes import as_dtype
from minikeras.keras.ops.keras_op import jax_forward, keras_op
from minikeras.keras.ops.staged_scan import staged_scan
from minikeras.ops.array import concat, stack, stop_gradient as _stop_gradient, unstack as _unstack
from minikeras.ops.control import cond as _cond, custom_gradient as _custom_gradient, switch_case
from minikeras.ops.creation import convert_to_tensor as _convert_to_tensor
from minikeras.ops.elementwise import cast as _cast
from minikeras.ops.loops import while_loop as _while_loop
from minikeras.symbolic import KerasTensor, is_symbolic
from minikeras.tensor import Tensor, Variable, to_array

_LEAF = (Tensor, Variable, KerasTensor)


def _is_leaf(x):
    return isinstance(x, _LEAF)


def _leaves(tree):
    return jax.tree_util.tree_flatten(tree, is_leaf=_is_leaf)


def _tensor(x):
    if isinstance(x, Variable):
        return x.value()
    return x if isinstance(x, Tensor) else Tensor(to_array(x))


def _dtype_name(dtype):
    return as_dtype(dtype).name


# ----------------------------------------------------------------------------- conversions


def is_tensor(x):
    """Whether ``x`` is a tensor of the backend (an ``mk.Tensor``; Variables are not)."""
    return isinstance(x, (Tensor, jax.Array))


def shape(x):
    """``x``'s shape as a tuple (None for the unknown sizes of a symbolic tensor)."""
    if is_symbolic(x) or isinstance(x, (Tensor, Variable)):
        return tuple(x.shape)
    return tuple(np.shape(x))


def dtype(x):
    """``x``'s dtype as a string ("float32")."""
    if isinstance(x, (Tensor, Variable, KerasTensor)):
        return x.dtype.name
    if not hasattr(x, "dtype"):
        raise AttributeError(f"keras.ops.dtype: {type(x).__name__} has no dtype; received {x!r}")
    return _dtype_name(x.dtype)


@keras_op("convert_to_tensor")
def convert_to_tensor(x, dtype=None, sparse=None, ragged=None):
    """``x`` as an ``mk.Tensor`` (a Variable read), cast to ``dtype`` when given."""
    if ragged:
        raise ValueError("`ragged=True` is not supported with jax backend")
    if sparse:
        raise ValueError("keras.ops.convert_to_tensor: sparse=True is not supported by minikeras (no sparse tensors)")
    if dtype is None:
        return _convert_to_tensor(x)
    if isinstance(x, (Tensor, Variable)):
        return cast(x, dtype)
    return _convert_to_tensor(x, dtype=_dtype_name(dtype))


def convert_to_numpy(x):
    """``x`` as a NumPy array."""
    if is_symbolic(x):
        raise ValueError("A KerasTensor is symbolic: it's a placeholder for a shape an a dtype. It doesn't have any "
                         "actual numerical value. You cannot convert it to a NumPy array.")
    return np.array(to_array(x))


@keras_op("cast")
def cast(x, dtype):
    """``x`` converted to ``dtype`` (differentiable between float dtypes)."""
    return _cast(_tensor(x), _dtype_name(dtype))


def _limits(name):
    if name == "bool":
        return 0, 1
    if "int" in name:
        info = ml_dtypes.iinfo(name)
    else:
        info = ml_dtypes.finfo(name)
    return info.min, info.max


def _saturate(x, *, low, high, dtype):
    return jnp.clip(x, low, high).astype(dtype)


@keras_op("saturate_cast")
def saturate_cast(x, dtype):
    """``x`` clipped to ``dtype``'s range, then cast (no wrap-around)."""
    x = _tensor(x)
    out_name, in_name = _dtype_name(dtype), x.dtype.name
    (in_min, in_max), (out_min, out_max) = _limits(in_name), _limits(out_name)
    low = np.maximum(in_min, out_min).astype(in_name)
    if low < out_min:
        low = np.nextafter(low, 0, dtype=in_name)
    high = np.minimum(in_max, out_max).astype(in_name)
    if high > out_max:
        high = np.nextafter(high, 0, dtype=in_name)
    return jax_forward("saturate_cast", _saturate, x, low=low.item(), high=high.item(), dtype=out_name)


@keras_op("stop_gradient")
def stop_gradient(variable):
    """``variable``'s value, through which no gradient flows."""
    return _stop_gradient(variable)


def custom_gradient(f):
    """Decorates ``f(*args) -> (output, grad_fn)`` so that its gradient is ``grad_fn``'s.

    ``grad_fn`` is called with the upstream gradient(s) positionally (``grad_fn(upstream)``,
    as Keras 3 on JAX and TensorFlow), so both ``def grad(upstream)`` and Keras's portable
    ``def grad(*args, upstream=None)`` work; it returns one gradient per argument of ``f``.
    """
    return _custom_gradient(f)


# ----------------------------------------------------------------------------- slicing, scattering


def _scatter(indices, values, *, shape):
    key = tuple(jnp.moveaxis(indices, -1, 0))
    return jnp.zeros(shape, values.dtype).at[key].add(values)


@keras_op("scatter")
def scatter(indices, values, shape):
    """A zeros tensor of ``shape`` with ``values`` added at ``indices`` (``(..., rank)`` ints)."""
    return jax_forward("scatter", _scatter, indices, values, shape=tuple(int(s) for s in shape))


def _scatter_update(inputs, indices, updates, *, reduction):
    at = inputs.at[tuple(jnp.transpose(indices))]
    if reduction is None:
        return at.set(updates)
    return {"add": at.add, "max": at.max, "min": at.min, "mul": at.multiply}[reduction](updates)


@keras_op("scatter_update")
def scatter_update(inputs, indices, updates, reduction=None):
    """``inputs`` with ``updates`` written (or combined by ``reduction``: "add", "max", "min",
    "mul") at ``indices``."""
    if reduction is not None:
        reduction = reduction.lower()
        if reduction not in ("add", "max", "min", "mul"):
            raise ValueError(f"Invalid reduction: {reduction}. Supported values are: None, 'add', 'max', 'min', "
                             "'mul'.")
    return jax_forward("scatter_update", _scatter_update, inputs, indices, updates, reduction=reduction)


def _slice(inputs, start, *, sizes):
    return lax.dynamic_slice(inputs, tuple(start), sizes)


@keras_op("slice")
def slice(inputs, start_indices, shape):  # noqa: A001
    """The block of ``inputs`` at ``start_indices`` of size ``shape`` (-1: to the end)."""
    in_shape = np.shape(to_array(inputs))
    if len(shape) != len(in_shape) or len(start_indices) != len(in_shape):
        raise ValueError(f"keras.ops.slice: inputs of rank {len(in_shape)} (shape {in_shape}) need {len(in_shape)} "
                         f"start indices and sizes, received start_indices={start_indices}, shape={shape}")
    if any(s == -1 for s in shape):
        try:
            starts = [int(s) for s in np.asarray(to_array(start_indices))]
        except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError) as error:
            raise ValueError("keras.ops.slice: a size of -1 needs start indices known while tracing") from error
        shape = [n - s if size == -1 else size for n, s, size in zip(in_shape, starts, shape)]
    start = to_array(start_indices) if not isinstance(start_indices, (list, tuple)) else \
        jnp.stack([jnp.asarray(to_array(s), jnp.int32) for s in start_indices])
    return jax_forward("slice", _slice, inputs, start, sizes=tuple(int(s) for s in shape))


def _slice_update(inputs, start, updates):
    return lax.dynamic_update_slice(inputs, updates, tuple(start))


@keras_op("slice_update")
def slice_update(inputs, start_indices, updates):
    """``inputs`` with the block at ``start_indices`` replaced by ``updates``."""
    start = to_array(start_indices) if not isinstance(start_indices, (list, tuple)) else \
        jnp.stack([jnp.asarray(to_array(s), jnp.int32) for s in start_indices])
    return jax_forward("slice_update", _slice_update, inputs, start, updates)


@keras_op("unstack")
def unstack(x, num=None, axis=0):
    """``x`` split along ``axis`` into a list of tensors."""
    x = _tensor(x)
    if num is not None and num != x.shape[axis]:
        raise ValueError(f"keras.ops.unstack: num={num} but x.shape[{axis}] is {x.shape[axis]} (x.shape={x.shape})")
    return _unstack(x, axis=axis)


# ----------------------------------------------------------------------------- control flow


@keras_op("cond")
def cond(pred, true_fn, false_fn):
    """``true_fn()`` if ``pred`` else ``false_fn()``; both return the same structure."""
    return _cond(pred, true_fn, false_fn)


@keras_op("switch")
def switch(index, branches, *operands):
    """``branches[index](*operands)``; ``index`` is clamped to the branches, as ``lax.switch``."""
    if not branches:
        raise ValueError("keras.ops.switch needs at least one branch")
    last = len(branches) - 1
    if isinstance(index, (int, np.integer)):
        return branches[builtins.min(builtins.max(int(index), 0), last)](*operands)
    index = jnp.clip(to_array(index).astype(jnp.int32), 0, last)
    return switch_case(Tensor(index), [(lambda b: lambda: b(*operands))(b) for b in branches])


@keras_op("while_loop")
def while_loop(cond, body, loop_vars, maximum_iterations=None):
    """Repeats ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)``, at most
    ``maximum_iterations`` times; a tuple or list of loop variables comes back as a tuple."""
    is_tuple = isinstance(loop_vars, (tuple, list))
    state = list(loop_vars) if is_tuple else [loop_vars]

    def step(*values):
        out = body(*values)
        return list(out) if is_tuple else [out]

    out = _while_loop(cond, step, state, maximum_iterations=maximum_iterations)
    return tuple(out) if is_tuple else out[0]


@keras_op("fori_loop")
def fori_loop(lower, upper, body_fun, init_val):
    """``val = body_fun(i, val)`` for ``i`` from ``lower`` to ``upper`` (exclusive)."""
    bound = None
    if isinstance(lower, (int, np.integer)) and isinstance(upper, (int, np.integer)):
        bound = builtins.max(int(upper) - int(lower), 0)
    i0 = Tensor(jnp.asarray(to_array(lower), jnp.int32))
    upper = Tensor(jnp.asarray(to_array(upper), jnp.int32))
    _, out = _while_loop(lambda i, val: i < upper, lambda i, val: [i + 1, body_fun(i, val)], [i0, init_val],
                         maximum_iterations=bound)
    return out


def _take(tree, i):
    leaves, treedef = _leaves(tree)
    return jax.tree_util.tree_unflatten(treedef, [_tensor(x)[i] for x in leaves])


def _stack(per_step):
    """One pytree of stacked leaves from a list of pytrees (None stays None)."""
    if not per_step:
        return None
    leaves, treedef = _leaves(per_step[0])
    columns = [_leaves(step)[0] for step in per_step]
    return jax.tree_util.tree_unflatten(treedef, [stack([_tensor(c[j]) for c in columns]) for j in
                                                  range(len(leaves))])


def _length(xs, length, what):
    leaves, _ = _leaves(xs)
    sizes = {int(np.shape(to_array(x) if not isinstance(x, (Tensor, Variable)) else x)[0]) for x in leaves}
    if len(sizes) > 1:
        raise ValueError(f"keras.ops.{what}: the leaves of xs have different leading sizes {sorted(sizes)}")
    if length is not None and sizes and int(length) not in sizes:
        raise ValueError(f"keras.ops.{what}: length={length} but xs has leading size {sizes.pop()}")
    if not sizes and length is None:
        raise ValueError(f"keras.ops.{what}: with xs=None, `length` must be given")
    return int(length) if length is not None else sizes.pop()


@keras_op("scan")
def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """``carry, y = f(carry, x)`` over the leading axis of ``xs`` (or ``length`` times with
    ``xs=None``): ``(final carry, stacked ys)``, as ``jax.lax.scan``."""
    if not isinstance(unroll, bool) and (not isinstance(unroll, int) or unroll < 1):
        raise ValueError(f"`unroll` must be an positive integer or boolean. Received: unroll={unroll}")
    n = _length(xs, length, "scan")
    if _context.call_state.traces and not _context.call_state.tapes:
        return staged_scan(f, init, xs, n, reverse, unroll)
    carry, ys = init, []
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        carry, y = f(carry, None if xs is None else _take(xs, i))
        ys.append(y)
    if reverse:
        ys.reverse()
    return carry, _stack(ys) if ys and _leaves(ys[0])[0] else (ys[0] if ys else None)


@keras_op("map")
def map(f, xs):  # noqa: A001
    """``f`` applied to each slice of ``xs`` along its leading axis, the results stacked."""
    n = _length(xs, None, "map")
    if _context.call_state.traces and not _context.call_state.tapes:
        return staged_scan(lambda carry, x: (carry, f(x)), (), xs, n, False, 1)[1]
    return _stack([f(_take(xs, i)) for i in range(n)])


@keras_op("vectorized_map")
def vectorized_map(function, elements):
    """``function`` on each element of ``elements`` along the leading axis, results stacked
    (``jax.vmap``'s result)."""
    n = _length(elements, None, "vectorized_map")
    return _stack([function(_take(elements, i)) for i in range(n)])


@keras_op("associative_scan")
def associative_scan(f, elems, reverse=False, axis=0):
    """The inclusive scan of ``elems`` along ``axis`` with the associative ``f(a, b)``
    (``jax.lax.associative_scan``; ``f`` sees slices that keep ``axis``)."""
    leaves, treedef = _leaves(elems)
    leaves = [_tensor(x) for x in leaves]
    if not leaves:
        raise ValueError("keras.ops.associative_scan: elems holds no tensors")
    sizes = {x.shape[axis] for x in leaves}
    if len(sizes) != 1:
        raise ValueError(f"Array inputs to associative_scan must have the same first dimension. (saw: "
                         f"{[x.shape for x in leaves]})")
    n = sizes.pop()

    def at(i):
        index = (builtins.slice(None),) * (axis % leaves[0].ndim) + (builtins.slice(i, i + 1),)
        return jax.tree_util.tree_unflatten(treedef, [x[index] for x in leaves])

    order = range(n - 1, -1, -1) if reverse else range(n)
    out, acc = [], None
    for i in order:
        acc = at(i) if acc is None else f(acc, at(i))  # reversed: as jax's, the scan of the flipped elems
        out.append(acc)
    if reverse:
        out.reverse()
    columns = [_leaves(o)[0] for o in out]
    return jax.tree_util.tree_unflatten(treedef, [concat([_tensor(c[j]) for c in columns], axis=axis)
                                                  for j in range(len(leaves))])


__all__ = ["associative_scan", "cast", "cond", "convert_to_numpy", "convert_to_tensor", "custom_gradient", "dtype",
    "fori_loop", "is_tensor", "map", "saturate_cast", "scan", "scatter", "scatter_update", "shape", "slice",
    "slice_update", "stop_gradient", "switch", "unstack", "vectorized_map", "while_loop"]
