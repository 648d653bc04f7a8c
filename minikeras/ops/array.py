"""Shape and indexing ops: transpose, concat, stack, gather, slicing, one_hot, ...

``reshape`` (reshape.py) and ``broadcast_to`` (reduce.py, beside its adjoint ``reduce_sum``) stand
below this module and are re-exported here.
"""
import jax
import jax.numpy as jnp
import numpy as np

from minikeras.backend import floatx
from minikeras.dtypes import as_dtype
from minikeras.errors import invalid_argument
from minikeras.ops.convert import normalize_axis
from minikeras.ops.primitive import Primitive
from minikeras.ops.reduce import broadcast_to
from minikeras.ops.reshape import reshape, static_shape
from minikeras.symbolic import KerasTensor
from minikeras.tensor import Tensor, Variable, to_array


def _t(x):
    return x if isinstance(x, (Tensor, Variable, KerasTensor)) else Tensor(to_array(x))


_transpose = Primitive("transpose", lambda x, *, perm: jnp.transpose(x, perm))
_transpose.defgrad(lambda g, out, x, *, perm: transpose(g, tuple(np.argsort(perm).tolist())))


def transpose(a, perm=None, name=None):
    """Permutes axes (reverses them when ``perm`` is None)."""
    x = _t(a)
    perm = tuple(range(x.ndim))[::-1] if perm is None else tuple(int(p) % max(x.ndim, 1) for p in perm)
    if sorted(perm) != list(range(x.ndim)):
        raise invalid_argument(
            "Transpose", f"transpose: perm {list(perm)} is not a permutation of the {x.ndim} axes of shape {x.shape}")
    return _transpose(x, perm=perm)


def expand_dims(input, axis, name=None):  # noqa: A002
    """Inserts a size-1 axis at ``axis``."""
    x = _t(input)
    axis = int(axis)
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise ValueError(f"expand_dims: axis {axis} is out of range for a tensor of rank {x.ndim}")
    axis = axis % (x.ndim + 1)
    return reshape(x, x.shape[:axis] + (1,) + x.shape[axis:])


def squeeze(input, axis=None, name=None):  # noqa: A002
    """Removes size-1 axes (all of them, or those in ``axis``)."""
    x = _t(input)
    axes = normalize_axis(axis, x.ndim, "squeeze")
    if axes is None:
        axes = tuple(i for i, n in enumerate(x.shape) if n == 1)
    for a in axes:
        if x.shape[a] != 1:
            raise invalid_argument(
                "Squeeze", f"squeeze: cannot remove axis {a} of size {x.shape[a]} from shape {x.shape}")
    return reshape(x, tuple(n for i, n in enumerate(x.shape) if i not in axes))


# -- joining and splitting ----------------------------------------------------------------------
_concat = Primitive("concat", lambda *xs, axis: jnp.concatenate(xs, axis=axis))


@_concat.defgrad
def _(g, out, *xs, axis):
    grads, start = [], 0
    for x in xs:
        size = x.shape[axis]
        grads.append(slice_along(g, axis, start, start + size))
        start += size
    return tuple(grads)


def concat(values, axis, name=None):
    """Joins tensors along an existing ``axis``."""
    xs = [_t(v) for v in values]
    if not xs:
        raise ValueError("concat needs at least one tensor")
    axis = normalize_axis(axis, xs[0].ndim, "concat")[0]
    for i, x in enumerate(xs[1:], 1):
        if x.ndim != xs[0].ndim or any(a != b for d, (a, b) in enumerate(zip(x.shape, xs[0].shape)) if d != axis):
            raise invalid_argument("ConcatV2", f"concat: tensor {i} has shape {x.shape}, incompatible with tensor 0's "
                                               f"{xs[0].shape} outside axis {axis}")
        if x.dtype != xs[0].dtype:
            raise TypeError(f"concat: tensor {i} has dtype {x.dtype.name}, tensor 0 has {xs[0].dtype.name}")
    return _concat(*xs, axis=axis)


def stack(values, axis=0, name=None):
    """Stacks tensors of equal shape along a new ``axis``."""
    xs = [_t(v) for v in values]
    if not xs:
        raise ValueError("stack needs at least one tensor")
    for i, x in enumerate(xs[1:], 1):
        if x.shape != xs[0].shape:
            raise invalid_argument(
                "Pack", f"stack: tensor {i} has shape {x.shape}, tensor 0 has {xs[0].shape}; all must match")
    return concat([expand_dims(x, axis) for x in xs], axis=axis if axis >= 0 else axis)


def unstack(value, num=None, axis=0, name=None):
    """Splits ``value`` along ``axis`` into a list of tensors."""
    x = _t(value)
    axis = normalize_axis(axis, x.ndim, "unstack")[0]
    return [squeeze(slice_along(x, axis, i, i + 1), axis) for i in range(x.shape[axis])]


def split(value, num_or_size_splits, axis=0, name=None):
    """Splits along ``axis`` into equal parts (an int) or parts of the given sizes."""
    x = _t(value)
    axis = normalize_axis(axis, x.ndim, "split")[0]
    n = x.shape[axis]
    if isinstance(num_or_size_splits, int):
        if n % num_or_size_splits:
            raise invalid_argument(
                "Split", f"split: dimension {axis} of size {n} is not divisible into {num_or_size_splits} parts")
        sizes = [n // num_or_size_splits] * num_or_size_splits
    else:
        sizes = [int(s) for s in num_or_size_splits]
    if sum(sizes) != n:
        raise invalid_argument("SplitV", f"split: sizes {sizes} do not add up to dimension {axis} of size {n}")
    parts, start = [], 0
    for s in sizes:
        parts.append(slice_along(x, axis, start, start + s))
        start += s
    return parts


def slice_along(x, axis, start, stop):
    index = [slice(None)] * x.ndim
    index[axis] = slice(start, stop)
    return getitem(x, tuple(index))


def tile(input, multiples, name=None):  # noqa: A002
    """Repeats ``input`` ``multiples[i]`` times along axis i."""
    x = _t(input)
    multiples = static_shape(multiples, "tile")
    if len(multiples) != x.ndim:
        raise invalid_argument(
            "Tile", f"tile: multiples {list(multiples)} must have one entry per axis of shape {x.shape}")
    expanded = reshape(x, tuple(d for n in x.shape for d in (1, n)))
    target = tuple(d for m, n in zip(multiples, x.shape) for d in (m, n))
    return reshape(broadcast_to(expanded, target), tuple(m * n for m, n in zip(multiples, x.shape)))


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """Pads with ``constant_values`` (mode 'CONSTANT'); ``paddings`` is [[before, after], ...] per axis."""
    x = _t(tensor)
    if str(mode).upper() != "CONSTANT":
        raise ValueError(f"pad supports mode 'CONSTANT' only, received {mode!r}")
    paddings = tuple((int(a), int(b)) for a, b in np.asarray(paddings).tolist())
    if len(paddings) != x.ndim:
        raise ValueError(f"pad: paddings has {len(paddings)} rows, tensor has rank {x.ndim}")
    return _pad(x, paddings=paddings, value=float(constant_values))


_pad = Primitive("pad", lambda x, *, paddings, value: jnp.pad(x, paddings, constant_values=value))


@_pad.defgrad
def _(g, out, x, *, paddings, value):
    return getitem(g, tuple(slice(a, a + n) for (a, _), n in zip(paddings, x.shape)))


# -- indexing -------------------------------------------------------------------------------------
def _encode_index(index):
    """Splits an index into a hashable static description and the arrays it holds."""
    if not isinstance(index, tuple):
        index = (index,)
    spec, arrays = [], []
    for item in index:
        if isinstance(item, slice):
            spec.append(("slice", _int_or_none(item.start), _int_or_none(item.stop), _int_or_none(item.step)))
        elif item is None:
            spec.append(("newaxis",))
        elif item is Ellipsis:
            spec.append(("ellipsis",))
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            spec.append(("int", int(item)))
        else:
            array = to_array(item)
            if array.dtype == np.bool_ and array.ndim and not isinstance(array, jax.core.Tracer):
                # x[mask] is x[mask.nonzero()]; integer arrays can go through the compiled op
                for positions in np.nonzero(np.asarray(array)):
                    arrays.append(jnp.asarray(positions, jnp.int32))
                    spec.append(("array",))
                continue
            arrays.append(array)
            spec.append(("array",))
    return tuple(spec), arrays


def _int_or_none(v):
    return None if v is None else int(v)


def _decode_index(spec, arrays):
    arrays = iter(arrays)
    out = []
    for item in spec:
        kind = item[0]
        if kind == "slice":
            out.append(slice(*item[1:]))
        elif kind == "newaxis":
            out.append(None)
        elif kind == "ellipsis":
            out.append(Ellipsis)
        elif kind == "int":
            out.append(item[1])
        else:
            out.append(next(arrays))
    return tuple(out)


_getitem = Primitive("getitem", lambda x, *arrays, spec: x[_decode_index(spec, arrays)])
_scatter_add = Primitive(
    "scatter_add",
    lambda g, *arrays, spec, shape: jnp.zeros(shape, g.dtype).at[_decode_index(spec, arrays)].add(g))


@_getitem.defgrad
def _(g, out, x, *arrays, spec):
    return (_scatter_add(g, *arrays, spec=spec, shape=x.shape),) + (None,) * len(arrays)


@_scatter_add.defgrad
def _(g, out, update, *arrays, spec, shape):
    return (_getitem(g, *arrays, spec=spec),) + (None,) * len(arrays)


def getitem(x, index):
    """``x[index]`` with NumPy semantics: ints, slices, None, Ellipsis, integer/bool arrays.

    Differentiable in ``x``; out-of-range integers are an IndexError, as in TensorFlow.
    """
    x = _t(x)
    spec, arrays = _encode_index(index)
    _check_int_indices(x, spec)
    return _getitem(x, *arrays, spec=spec)


def _check_int_indices(x, spec):
    axis = 0
    for item in spec:
        if item[0] == "ellipsis":
            axis = x.ndim - sum(1 for s in spec[spec.index(item) + 1:] if s[0] != "newaxis")
            continue
        if item[0] == "newaxis":
            continue
        if item[0] == "int":
            if axis >= x.ndim:
                raise IndexError(f"Index {item[1]} is out of bounds: too many indices for a tensor of shape {x.shape}")
            n = x.shape[axis]
            if not -n <= item[1] < n:
                raise IndexError(f"slice index {item[1]} of dimension {axis} out of bounds for shape {x.shape}")
        axis += 1


def gather(params, indices, axis=None, batch_dims=0, name=None):
    """Takes ``params`` slices at ``indices`` along ``axis`` (default 0); differentiable in ``params``."""
    x = _t(params)
    axis = 0 if axis is None else normalize_axis(axis, x.ndim, "gather")[0]
    if batch_dims:
        raise NotImplementedError("gather with batch_dims is not supported yet")
    idx = to_array(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"gather: indices must be integers, received dtype {np.dtype(idx.dtype).name}")
    if not isinstance(idx, jax.core.Tracer) and type(x.shape[axis]) is int:  # not a symbolic size
        values = np.asarray(idx)
        outside = (values < 0) | (values >= x.shape[axis])
        if outside.any():
            where_ = np.argwhere(outside)[0]
            raise invalid_argument(
                "GatherV2", f"indices[{','.join(str(int(i)) for i in where_)}] = {values[tuple(where_)]} is not in "
                f"[0, {x.shape[axis]}) (gather along axis {axis} of shape {x.shape})")
    return getitem(x, (slice(None),) * axis + (idx,))


# -- non-differentiable constructors and helpers --------------------------------------------------
def _one_hot_forward(i, *, depth, on, off, dtype, axis):
    # an explicit comparison, not jax.nn.one_hot, which is deprecating float indices: a float
    # id that is not a whole number then matches no class, as Keras 3 has it
    hot = jnp.moveaxis(i[..., None] == np.arange(depth), -1, axis)
    return jnp.where(hot, jnp.asarray(on, dtype), jnp.asarray(off, dtype))


_one_hot = Primitive("one_hot", _one_hot_forward, differentiable=False)


def one_hot(indices, depth=None, on_value=None, off_value=None, axis=None, dtype=None, name=None, num_classes=None):
    """One-hot vectors of length ``depth`` (out-of-range indices give all ``off_value``).

    ``tf.one_hot`` and ``keras.ops.one_hot(x, num_classes)`` in one: ``num_classes`` is
    Keras's name for ``depth``, and float class ids are accepted as Keras does (a float
    index that is not a whole number matches no class: its row is all ``off_value``).
    """
    if (depth is None) == (num_classes is None):
        raise TypeError(f"one_hot expects the number of classes as depth (TF) or num_classes (Keras), exactly one of "
                        f"them; received depth={depth!r}, num_classes={num_classes!r}")
    depth = depth if num_classes is None else num_classes
    dtype = as_dtype(dtype) if dtype is not None else floatx()
    idx = _t(indices)
    if idx.dtype.kind not in "iuf":
        raise TypeError(f"one_hot: indices must be integers (or float class ids), received dtype {idx.dtype.name}")
    return _one_hot(idx, depth=int(depth), on=1 if on_value is None else float(on_value),
                    off=0 if off_value is None else float(off_value), dtype=dtype,
                    axis=-1 if axis is None else int(axis))


_stop_gradient = Primitive("stop_gradient", lambda x: x, differentiable=False)


def stop_gradient(input, name=None):  # noqa: A002
    """Returns ``input``; gradients do not flow through it."""
    return _stop_gradient(input)


_identity = Primitive("identity", lambda x: x)
_identity.defgrad(lambda g, out, x: g)


def identity(input, name=None):  # noqa: A002
    """Returns a Tensor with the same value (reads a Variable)."""
    return _identity(input)
