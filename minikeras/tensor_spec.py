"""``mk.TensorSpec``: the shape and dtype a Tensor must have (``tf.TensorSpec``)."""
import numpy as np

from minikeras.dtypes import as_dtype


class TensorSpec:
    """Describes a Tensor: ``shape`` (a tuple whose entries may be None: any size) and ``dtype``.

    Args:
      shape: a tuple or list of ints and Nones, or None for any rank.
      dtype: a dtype or its name (default float32).
      name: an optional name.

    >>> mk.TensorSpec([None, 3], mk.float32)
    TensorSpec(shape=(None, 3), dtype=mk.float32, name=None)
    """

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype="float32", name=None):
        if shape is not None:
            try:
                shape = tuple(None if d is None else int(d) for d in shape)
            except (TypeError, ValueError):
                raise TypeError(f"TensorSpec: shape must be a list of ints and Nones, or None; received {shape!r}") \
                    from None
        self.shape = shape
        self.dtype = as_dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        """The spec of ``tensor`` (its exact shape and dtype)."""
        return cls(tuple(tensor.shape), tensor.dtype, name)

    def is_compatible_with(self, value):
        """Whether ``value`` (a Tensor, array or TensorSpec) has this spec's dtype and a shape
        that matches wherever this spec's shape is known."""
        dtype = getattr(value, "dtype", None)
        shape = getattr(value, "shape", None)
        if dtype is None or np.dtype(dtype) != self.dtype:
            return False
        return self.shape_matches(shape)

    def shape_matches(self, shape):
        """Whether ``shape`` fits this spec's shape (None entries match any size)."""
        if self.shape is None:
            return True
        if shape is None or len(shape) != len(self.shape):
            return False
        return all(want is None or got is None or want == got for want, got in zip(self.shape, shape))

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self.shape == other.shape and self.dtype == other.dtype
                and self.name == other.name)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.name))

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype=mk.{self.dtype.name}, name={self.name!r})"
