"""``mk.TensorSpec``: the shape and dtype a Tensor is expected to have (``tf.TensorSpec``).

    spec = mk.TensorSpec(shape=(None, 3), dtype=mk.float32)
    spec.is_compatible_with(mk.zeros((5, 3)))   # True: None matches any size
    spec                                        # TensorSpec(shape=(None, 3), dtype=mk.float32, name=None)

Used by ``mk.function(input_signature=...)`` and ``Dataset.element_spec``. A shape is a
tuple of ints and Nones (unknown sizes), or None for an unknown rank.
"""
import operator

import numpy as np

from minikeras.dtypes import as_dtype, float32


def _normalize_shape(shape):
    if shape is None:
        return None
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(f"TensorSpec: shape must be a tuple or list of ints and Nones (or None), "
                        f"received {shape!r}") from None
    result = []
    for dim in dims:
        if dim is None:
            result.append(None)
            continue
        try:
            value = operator.index(dim)
        except TypeError:
            raise TypeError(f"TensorSpec: shape must hold ints and Nones, received {shape!r}") from None
        if value < 0:  # TF: "Dimension -1 must be >= 0"
            raise ValueError(f"TensorSpec: dimension {value} must be >= 0 (None for an unknown size), received "
                             f"shape {shape!r}")
        result.append(int(value))
    return tuple(result)


class TensorSpec:
    """Describes a Tensor: ``shape`` (ints and Nones, or None), ``dtype`` and an optional ``name``.

    Args:
      shape: a tuple/list of ints and Nones, or None for an unknown rank.
      dtype: a dtype (default float32).
      name: an optional name (used by ``input_signature`` for argument names).
    """

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape, dtype=float32, name=None):
        self._shape = _normalize_shape(shape)
        self._dtype = as_dtype(dtype)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"TensorSpec: name must be a string or None, received {name!r}")
        self._name = name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        """The spec of ``tensor`` (anything with ``shape`` and ``dtype``, or an array-like)."""
        if not hasattr(tensor, "shape") or not hasattr(tensor, "dtype"):
            tensor = np.asarray(tensor)
        return cls(tuple(tensor.shape), tensor.dtype, name)

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return self._name

    def is_compatible_with(self, spec_or_value):
        """Whether ``spec_or_value`` (a TensorSpec, Tensor, Variable or array) has this dtype and
        a shape that matches this one, None matching any size (and a None shape any shape)."""
        if isinstance(spec_or_value, TensorSpec):
            shape, dtype = spec_or_value.shape, spec_or_value.dtype
        elif hasattr(spec_or_value, "shape") and hasattr(spec_or_value, "dtype"):
            shape, dtype = tuple(spec_or_value.shape), np.dtype(spec_or_value.dtype)
        else:
            value = np.asarray(spec_or_value)
            shape, dtype = value.shape, value.dtype
        return dtype == self._dtype and self.shape_matches(shape)

    def shape_matches(self, shape):
        """Whether ``shape`` fits this spec's shape (None entries, and a None shape, match anything)."""
        if self._shape is None or shape is None:
            return True
        if len(shape) != len(self._shape):
            return False
        return all(want is None or got is None or want == got for want, got in zip(self._shape, shape))

    def __eq__(self, other):
        if not isinstance(other, TensorSpec):
            return NotImplemented
        return (self._shape, self._dtype, self._name) == (other._shape, other._dtype, other._name)

    def __hash__(self):
        return hash((TensorSpec, self._shape, self._dtype, self._name))

    def __repr__(self):
        shape = "<unknown>" if self._shape is None else repr(self._shape)
        dtype = "string" if self._dtype == object else self._dtype.name
        return f"TensorSpec(shape={shape}, dtype=mk.{dtype}, name={self._name!r})"
