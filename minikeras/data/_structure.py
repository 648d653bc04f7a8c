"""Element structures of a Dataset: nests of tuples and dicts with array leaves.

As in tf.data, tuples (and namedtuples) and dicts are structure; a list is data (one
array), so ``from_tensor_slices([1, 2, 3])`` has three scalar elements.
"""
import jax
import numpy as np

from minikeras.dtypes import canonical_dtype
from minikeras.string_tensor import StringTensor, bytes_array, is_string_value
from minikeras.tensor import Tensor, Variable, to_array


def _is_leaf(x):
    return not isinstance(x, (tuple, dict))


def flatten(nest):
    """(leaves, treedef) of a nest of tuples/dicts."""
    return jax.tree_util.tree_flatten(nest, is_leaf=_is_leaf)


def leaf_names(nest):
    """A readable name per leaf, for error messages: 'x', '[0]', "['image']"."""
    paths, _ = jax.tree_util.tree_flatten_with_path(nest, is_leaf=_is_leaf)
    return [jax.tree_util.keystr(path) or "x" for path, _ in paths]


def to_host_array(value, what):
    """A NumPy array (canonical dtype: float64 -> float32, int64 -> int32 without x64) for a leaf."""
    if is_string_value(value):
        return bytes_array(value)  # strings stay on the host: an object array of bytes
    if isinstance(value, (Tensor, Variable)):
        value = value.numpy()
    elif isinstance(value, jax.Array):
        value = np.asarray(value)
    array = np.asarray(value)
    if array.dtype.kind not in "biufc":
        raise TypeError(f"{what}: component of dtype {array.dtype} cannot become an mk.Tensor "
                        f"(numbers, booleans and strings only); received {type(value).__name__}")
    return np.asarray(array, dtype=canonical_dtype(array.dtype))


def to_tensors(element):
    """The element as the user sees it: every leaf an mk.Tensor, nesting unchanged."""
    return jax.tree_util.tree_map(lambda a: a if isinstance(a, Tensor) else as_tensor(a), element, is_leaf=_is_leaf)


def as_tensor(a):
    """A pipeline value as an mk.Tensor: strings (bytes, object arrays) as string Tensors."""
    if isinstance(a, bytes) or (isinstance(a, np.ndarray) and a.dtype == object):
        return StringTensor.of_bytes(bytes_array(a))
    return Tensor(to_array(a))


def to_numpy(element):
    """The element with NumPy leaves (0-d leaves as NumPy scalars, as ``as_numpy_iterator``)."""
    def convert(a):
        if isinstance(a, bytes):
            return bytes(a)  # as TF: bytes, not np.bytes_
        array = np.asarray(a)
        return array[()] if array.ndim == 0 else array
    return jax.tree_util.tree_map(convert, element, is_leaf=_is_leaf)


def _output_leaf(x):
    if isinstance(x, StringTensor):
        return np.asarray(x)
    if isinstance(x, Tensor):
        return x._value
    if isinstance(x, Variable):
        return x._read_array()
    if is_string_value(x):
        return bytes_array(x)
    return to_array(x)


def call_on_element(fn, element):
    """``fn`` applied as tf.data does: a tuple element is unpacked into positional arguments.

    Takes and returns nests of arrays (jax arrays or tracers); fn sees mk Tensors. A list
    returned by fn becomes a tuple.
    """
    tensors = jax.tree_util.tree_map(as_tensor, element, is_leaf=_is_leaf)
    out = fn(*tensors) if isinstance(tensors, tuple) else fn(tensors)
    if isinstance(out, list):
        out = tuple(out)
    return jax.tree_util.tree_map(_output_leaf, out, is_leaf=_is_leaf)


def first_dims(element):
    """The size of the first axis shared by every leaf of a batch (error if they differ)."""
    leaves = flatten(element)[0]
    sizes = {np.shape(leaf)[0] if np.ndim(leaf) else None for leaf in leaves}
    if None in sizes or len(sizes) != 1:
        shapes = [tuple(np.shape(leaf)) for leaf in leaves]
        raise ValueError(f"Dataset.unbatch: every component needs the same first dimension, received shapes {shapes}")
    return sizes.pop()
