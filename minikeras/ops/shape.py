"""``mk.shape``, ``mk.size``, ``mk.rank``: a Tensor's shape as Tensors (``tf.shape``, ...).

Inside ``mk.function`` traced for a ``None`` dimension of an input signature, ``x.shape``
shows that size as None (TensorFlow's static shape) and ``mk.shape(x)`` holds it as a value
known when the program runs (TensorFlow's dynamic shape). Not differentiable: integers.

There ``mk.shape(x)`` is a ``ShapeTensor``: it also keeps jax's symbolic sizes, so that ops
taking a shape (``mk.reshape(x, [mk.shape(x)[0], -1])``, ``mk.zeros(mk.shape(x))``,
``mk.random.normal``) build it with them (``with_sizes``), as XLA needs; an index or slice of
it keeps them too, arithmetic on it does not.
"""
import math

import jax.numpy as jnp
import numpy as np
from jax.export import is_symbolic_dim

from minikeras.dtypes import as_dtype, canonical_dtype
from minikeras.errors import invalid_argument
from minikeras.ops.primitive import Primitive
from minikeras.tensor import Tensor, to_array


class ShapeTensor(Tensor):
    """``mk.shape(x)`` (or an index or slice of it) for a shape with symbolic sizes: the int
    Tensor, and ``sizes``, the sizes it holds (a tuple, or one size for a scalar)."""

    __slots__ = ("sizes",)

    def __init__(self, value, sizes):
        super().__init__(value)
        self.sizes = sizes

    def __getitem__(self, index):
        picked = super().__getitem__(index)
        if isinstance(index, (int, np.integer, slice)):
            sizes = self.sizes[index]
            return ShapeTensor(picked._value, tuple(sizes) if isinstance(index, slice) else sizes)
        return picked


def with_sizes(shape):
    """``shape`` (an argument giving a shape) with each ``ShapeTensor`` in it, or in its list,
    replaced by the sizes it holds; anything else as it is."""
    if isinstance(shape, ShapeTensor):
        return shape.sizes if isinstance(shape.sizes, tuple) else (shape.sizes,)
    if isinstance(shape, (list, tuple)) and any(isinstance(n, ShapeTensor) for n in shape):
        return tuple(n.sizes if isinstance(n, ShapeTensor) else n for n in shape)
    return shape


def shape_argument(shape):
    """A shape argument (an int, a list or tuple, an array or Tensor, ``mk.shape(x)``) as a
    tuple of ints; a symbolic size (a None dimension of ``mk.function``'s input signature, held
    by ``mk.shape(x)``) stays as it is."""
    shape = with_sizes(shape)
    if isinstance(shape, tuple):
        return tuple(n if is_symbolic_dim(n) else int(n) for n in shape)
    return tuple(int(n) for n in np.asarray(shape).reshape(-1).tolist())


def _shape_forward(x, *, dtype):
    return jnp.array(x.shape, dtype=dtype) if x.ndim else jnp.zeros((0,), dtype)  # symbolic sizes become values


def _size_forward(x, *, dtype):
    return jnp.asarray(math.prod(x.shape), dtype=dtype)  # math.prod: symbolic sizes too


_shape = Primitive("shape", _shape_forward, differentiable=False)
_size = Primitive("size", _size_forward, differentiable=False)
_rank = Primitive("rank", lambda x: jnp.asarray(x.ndim, dtype=np.int32), differentiable=False)


def _out_type(out_type, op):
    dtype = as_dtype(out_type)
    if dtype not in (np.int32, np.int64):  # TensorFlow's error
        raise invalid_argument(op, f"Value for attr 'out_type' of {dtype.name} is not in the list of allowed values: "
                                   "int32, int64")
    return canonical_dtype(dtype)  # int64 is int32 unless jax's x64 mode is on


def shape(input, out_type=None, name=None):  # noqa: A002 - TensorFlow's name
    """The shape of ``input`` as a 1-D int32 Tensor (``tf.shape``).

    >>> mk.shape(mk.zeros((2, 3)))
    mk.Tensor([2 3], shape=(2,), dtype=int32)
    """
    dtype = _out_type(out_type or np.int32, "Shape")
    if isinstance(input, Tensor) and all(type(n) is int for n in input._value.shape):
        # Static sizes are numbers wherever minikeras traces (jax.eval_shape too), as TF folds them.
        return Tensor(to_array(np.asarray(input._value.shape, dtype)))
    out = _shape(input, dtype=dtype)
    if isinstance(input, Tensor):
        return ShapeTensor(out._value, tuple(input._value.shape))
    return out


def size(input, out_type=None, name=None):  # noqa: A002
    """The number of elements of ``input`` as an int32 scalar Tensor (``tf.size``)."""
    return _size(input, dtype=_out_type(out_type or np.int32, "Size"))


def rank(input, name=None):  # noqa: A002
    """The number of dimensions of ``input`` as an int32 scalar Tensor (``tf.rank``)."""
    return _rank(input)


__all__ = ["ShapeTensor", "rank", "shape", "size", "with_sizes"]
