"""``mk.TensorArray``: a list of same-shaped Tensors that loops fill one index at a time.

As in TensorFlow 2, a TensorArray is a value: ``write`` and ``unstack`` return a new one,
so write ``ta = ta.write(i, x)``. It holds its elements one by one while indices are
known at trace time (eagerly, or in a loop that runs as Python), and as one stacked
buffer of shape ``(size, *element_shape)`` once it is carried by a loop over a traced
Tensor (``as_loop_carry``): a write at a traced index selects that row of the buffer with
``mk.where``, so it stays differentiable. It is a jax pytree, so it can be a loop variable.

A ``dynamic_size`` array cannot grow inside an XLA loop (its carries have fixed shapes). Where
the loop has a bound known while tracing (a ``for`` over a Tensor's first axis, or
``maximum_iterations``), the array is preallocated with one row per possible iteration
(``as_loop_carry(bound=...)``) and keeps its written length as a traced value: ``size()``
is the length written, as in TensorFlow, and ``stack()`` has every preallocated row, which is
TensorFlow's result when each iteration writes once; a loop that stops before its bound
(``break``, a condition) leaves zero rows after ``size()``, where TensorFlow's ``stack()``
would be shorter. A write past the preallocated rows inside the loop is lost (XLA cannot
raise there); writes at the loop index or at ``size()``, one per iteration, stay within them.
"""

import jax
import jax.numpy as jnp
import numpy as np

from minikeras import _context
from minikeras.backend import is_tracer
from minikeras.dtypes import as_dtype
from minikeras.ops.array import concat, gather, stack
from minikeras.ops.creation import zeros
from minikeras.ops.math import cast, equal, maximum, where
from minikeras.ops.reshape import reshape
from minikeras.tensor import Tensor, Variable, to_array

_SAME = object()  # _copy: keep the written length


def element_shapes_probe():
    """While a loop body is traced once to learn the element shapes of the TensorArrays it
    writes (before the loop is staged): a write at a traced index into a dynamic_size array
    not yet carried by the loop only sets its element shape. Per thread (``_context.probing``)."""
    return _context.probing("element_shapes")


class TensorArray:
    """A list of Tensors of one dtype and shape, written by index (``tf.TensorArray``).

    Args:
      dtype: the dtype of every element.
      size: the number of elements (0 with ``dynamic_size=True`` to grow as written).
      dynamic_size: whether writing past the end grows the array. Inside a loop over a
        traced Tensor it can grow only up to the loop's bound (see the module docstring);
        a loop without a bound known while tracing needs the final ``size``.
      element_shape: the shape of every element; otherwise the first write fixes it.

    >>> ta = mk.TensorArray(mk.float32, size=2)
    >>> ta = ta.write(0, 1.0).write(1, 2.0)
    >>> ta.stack()
    mk.Tensor([1. 2.], shape=(2,), dtype=float32)
    """

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True,
                 name=None):
        self._dtype = as_dtype(dtype)
        if size is None and not dynamic_size:
            raise ValueError("mk.TensorArray needs size= (or dynamic_size=True)")
        size_value = to_array(0 if size is None else size)
        if is_tracer(size_value):
            raise ValueError("mk.TensorArray: size must be known while tracing (a Python int or a shape), "
                             "received a traced Tensor")
        self._size = int(size_value)
        self._dynamic = bool(dynamic_size)
        self._element_shape = None if element_shape is None else tuple(element_shape)
        self._elements = {}   # index -> Tensor, while indices are known at trace time
        self._buffer = None   # a Tensor (size, *element_shape), once carried by a staged loop
        self._length = None   # the written length (an int32 Tensor) of a preallocated dynamic buffer

    # -- copies ----------------------------------------------------------------------
    def _copy(self, size=None, elements=None, buffer=None, element_shape=None, length=_SAME):
        new = object.__new__(TensorArray)
        new._dtype, new._dynamic = self._dtype, self._dynamic
        new._length = self._length if length is _SAME else length
        new._size = self._size if size is None else size
        new._element_shape = self._element_shape if element_shape is None else element_shape
        new._elements = {} if elements is None else elements
        new._buffer = buffer
        return new

    # -- description -------------------------------------------------------------------
    @property
    def dtype(self):
        return self._dtype

    @property
    def dynamic_size(self):
        return self._dynamic

    @property
    def element_shape(self):
        return self._element_shape

    def size(self, name=None):
        """The number of elements, as an int32 Tensor (the length written, for a preallocated
        dynamic array in a loop over a traced Tensor)."""
        if self._length is not None:
            return self._length
        return Tensor(jnp.int32(self._size))

    def __repr__(self):
        return f"<mk.TensorArray dtype={self._dtype.name} size={self._size} element_shape={self._element_shape}>"

    # -- writing -----------------------------------------------------------------------
    def _value(self, value):
        if isinstance(value, Variable):
            value = value.value()
        if isinstance(value, Tensor):
            if value.dtype != self._dtype:
                raise TypeError(f"mk.TensorArray dtype is {self._dtype.name} but the value written has dtype "
                                f"{value.dtype.name}; cast it first")
            tensor = value
        else:
            tensor = Tensor(to_array(value, self._dtype))
        if self._element_shape is not None and tuple(tensor.shape) != self._element_shape:
            raise ValueError(f"mk.TensorArray: could not write a value of shape {tuple(tensor.shape)} into an array "
                             f"of elements of shape {self._element_shape}")
        return tensor

    def write(self, index, value, name=None):
        """A new TensorArray with ``value`` at ``index``."""
        tensor = self._value(value)
        shape = tuple(tensor.shape)
        position = to_array(index)
        if position.shape != () or not jnp.issubdtype(position.dtype, jnp.integer):
            raise TypeError(f"mk.TensorArray.write: index must be a scalar int, received {index!r}")
        if is_tracer(position) or self._buffer is not None:
            return self._write_buffer(Tensor(position), tensor, shape)
        i = int(position)
        if i < 0 or (i >= self._size and not self._dynamic):
            raise IndexError(f"mk.TensorArray.write: tried to write to index {i} but array size is: {self._size}")
        elements = dict(self._elements)
        elements[i] = tensor
        return self._copy(size=max(self._size, i + 1), elements=elements, element_shape=shape)

    def _write_buffer(self, position, tensor, shape):
        # only the element shape is asked for
        if self._buffer is None and self._dynamic and _context.is_probing("element_shapes"):
            return self._copy(element_shape=shape)
        carry = self if self._buffer is not None else self._copy(element_shape=shape).as_loop_carry("write")
        if not is_tracer(position._value):
            i = int(position._value)
            if i < 0 or (i >= carry._size and not self._dynamic):
                raise IndexError(f"mk.TensorArray.write: tried to write to index {i} but array size is: {carry._size}")
            if i >= carry._size:  # a dynamic array grows by a row of zeros per missing index
                pad = zeros((i + 1 - carry._size,) + shape, self._dtype)
                carry = carry._copy(size=i + 1, buffer=concat([carry._buffer, pad], 0))
        rows = equal(Tensor(jnp.arange(carry._size, dtype=position.dtype)), position)
        mask = reshape(rows, (carry._size,) + (1,) * len(shape))
        buffer = where(mask, reshape(tensor, (1,) + shape), carry._buffer)
        if carry._length is None:
            return carry._copy(buffer=buffer)
        return carry._copy(buffer=buffer, length=maximum(carry._length, cast(position, np.int32) + 1))

    def unstack(self, value, name=None):
        """A new TensorArray whose elements are the rows of ``value`` (its first axis)."""
        tensor = value if isinstance(value, Tensor) else Tensor(to_array(value, self._dtype))
        if tensor.dtype != self._dtype:
            raise TypeError(f"mk.TensorArray dtype is {self._dtype.name} but unstack received dtype "
                            f"{tensor.dtype.name}")
        if tensor.ndim == 0:
            raise ValueError("mk.TensorArray.unstack needs a value with at least one axis, received a scalar")
        if not self._dynamic and self._size and tensor.shape[0] > self._size:
            raise ValueError(f"mk.TensorArray.unstack: value has {tensor.shape[0]} rows, array size is {self._size}")
        return self._copy(size=max(self._size, tensor.shape[0]), buffer=tensor,
                          element_shape=tuple(tensor.shape[1:]), length=None)

    scatter_all = unstack

    # -- reading -----------------------------------------------------------------------
    def read(self, index, name=None):
        """The element at ``index``."""
        position = to_array(index)
        if self._buffer is not None or is_tracer(position):
            carry = self if self._buffer is not None else self.as_loop_carry("read")
            return gather(carry._buffer, Tensor(position))
        i = int(position)
        if i < 0 or i >= self._size:
            raise IndexError(f"mk.TensorArray.read: tried to read from index {i} but array size is: {self._size}")
        if i not in self._elements:
            if self._element_shape is None:
                raise ValueError(f"mk.TensorArray.read: index {i} has not been written to and the element shape "
                                 "is unknown")
            return zeros(self._element_shape, self._dtype)
        return self._elements[i]

    def stack(self, name=None):
        """All elements stacked on a new first axis: shape ``(size, *element_shape)``."""
        if self._buffer is not None:
            return self._buffer
        if self._size == 0 or not self._elements:
            if self._element_shape is None:
                return zeros((self._size,), self._dtype) if self._size == 0 else self._unknown_shape("stack")
            return zeros((self._size,) + self._element_shape, self._dtype)
        return stack([self.read(i) for i in range(self._size)])

    def gather(self, indices, name=None):
        """The elements at ``indices``, stacked."""
        return gather(self.stack(), indices)

    def concat(self, name=None):
        """The elements concatenated along their first axis."""
        stacked = self.stack()
        return reshape(stacked, (-1,) + tuple(stacked.shape[2:]))

    def _unknown_shape(self, what):
        raise ValueError(f"mk.TensorArray.{what}: nothing written yet and no element_shape= given")

    def with_element_shape(self, element_shape):
        """This array with ``element_shape`` set (it must agree with what was written)."""
        shape = tuple(element_shape)
        if self._element_shape is not None and self._element_shape != shape:
            raise ValueError(f"mk.TensorArray: element shape {shape} does not match {self._element_shape}")
        return self._copy(element_shape=shape)

    # -- loops ----------------------------------------------------------------------------
    def as_loop_carry(self, what="a loop", bound=None):
        """This array as one stacked buffer, the form a loop over a traced Tensor carries.
        ``bound``: at most how many iterations the loop runs, if known while tracing; a
        dynamic_size array gets that many more rows and counts the ones written."""
        if self._buffer is not None:
            return self
        if self._element_shape is None:
            raise ValueError(f"{what}: mk.TensorArray of dtype {self._dtype.name} is carried by a loop over a traced "
                             "Tensor before anything was written to it: give it element_shape=")
        if self._dynamic and bound is not None:
            rows = [self.read(i) for i in range(self._size)]
            free = zeros((bound,) + self._element_shape, self._dtype)
            buffer = concat([stack(rows), free], 0) if rows else free
            return self._copy(size=self._size + bound, buffer=buffer, length=Tensor(jnp.int32(self._size)))
        if self._size == 0:
            raise ValueError(f"{what}: a dynamic_size mk.TensorArray cannot grow inside a loop over a traced Tensor "
                             "whose number of iterations is unknown while tracing; give it the final size "
                             "(mk.TensorArray(dtype, size=N)) or bound the loop: maximum_iterations=N in "
                             "mk.while_loop, or mk.autograph.experimental.set_loop_options(maximum_iterations=N) at "
                             "the start of the loop's body")
        buffer = stack([self.read(i) for i in range(self._size)])
        return self._copy(buffer=buffer)

    # -- pytree ---------------------------------------------------------------------------
    def _tree_flatten(self):
        meta = (self._dtype, self._size, self._dynamic, self._element_shape)
        if self._length is not None:
            return (self._buffer, self._length), meta + ("buffer+length",)
        if self._buffer is not None:
            return (self._buffer,), meta + ("buffer",)
        indices = tuple(sorted(self._elements))
        return tuple(self._elements[i] for i in indices), meta + (indices,)

    @classmethod
    def _tree_unflatten(cls, meta, children):
        dtype, size, dynamic, element_shape, layout = meta
        new = object.__new__(cls)
        new._dtype, new._size, new._dynamic, new._element_shape = dtype, size, dynamic, element_shape
        new._length = _tensor(children[1]) if layout == "buffer+length" else None
        if layout in ("buffer", "buffer+length"):
            new._elements, new._buffer = {}, _tensor(children[0])
        else:
            new._elements, new._buffer = {i: _tensor(c) for i, c in zip(layout, children)}, None
        return new


def _tensor(x):
    return Tensor(x) if isinstance(x, (jax.Array, np.ndarray)) or is_tracer(x) else x


jax.tree_util.register_pytree_node(TensorArray, TensorArray._tree_flatten, TensorArray._tree_unflatten)

__all__ = ["TensorArray", "element_shapes_probe"]
