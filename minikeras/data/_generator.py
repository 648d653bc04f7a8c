"""The stage of ``Dataset.from_generator``: elements from a Python generator, checked
against an ``output_signature`` of ``mk.TensorSpec`` as tf.data checks them."""
import numpy as np

from minikeras.data import _indices
from minikeras.data._streams import Stream
from minikeras.data._structure import flatten
from minikeras.dtypes import canonical_dtype
from minikeras.errors import InvalidArgumentError
from minikeras.tensor_spec import TensorSpec


def signature_from(output_signature, output_types, output_shapes):
    """The nest of TensorSpecs: ``output_signature``, or the older ``output_types`` with
    ``output_shapes`` (unknown shapes when those are not given)."""
    if output_signature is not None:
        if output_types is not None or output_shapes is not None:
            raise TypeError("Dataset.from_generator: give output_signature, or the deprecated output_types "
                            "(with output_shapes), not both")
        leaves, _ = flatten(output_signature)
        bad = [x for x in leaves if not isinstance(x, TensorSpec)]
        if bad:
            raise TypeError(f"Dataset.from_generator: output_signature must be a nest of mk.TensorSpec, received "
                            f"{bad[0]!r}")
        return output_signature
    if output_types is None:
        raise TypeError("Dataset.from_generator: missing output_signature (a nest of mk.TensorSpec describing each "
                        "element), e.g. output_signature=mk.TensorSpec(shape=(None,), dtype=mk.int32)")
    type_leaves, treedef = flatten(output_types)
    if output_shapes is None:
        shape_leaves = [None] * len(type_leaves)
    else:
        shape_leaves = treedef.flatten_up_to(output_shapes) if treedef.num_leaves > 1 else [output_shapes]
    return treedef.unflatten([TensorSpec(s, t) for t, s in zip(type_leaves, shape_leaves)])


def _structured(value, treedef):
    if treedef.num_leaves == 1 and treedef.num_nodes == 1:
        return [value]
    if isinstance(value, list):
        value = tuple(value)
    leaves, yielded = flatten(value)
    if yielded != treedef:
        raise InvalidArgumentError(
            None, "IteratorGetNext", f"TypeError: `generator` yielded an element that did not match the expected "
            f"structure. The expected structure was {treedef}, but the yielded element was {value!r}.")
    return leaves


def _converted(value, spec):
    try:
        array = np.asarray(value, dtype=spec.dtype)
    except (TypeError, ValueError):
        raise InvalidArgumentError(
            None, "IteratorGetNext", f"TypeError: `generator` yielded an element that could not be converted to the "
            f"expected type. The expected type was {spec.dtype.name}, but the yielded element was {value!r}.") \
            from None
    if not spec.is_compatible_with(array):
        raise InvalidArgumentError(
            None, "IteratorGetNext", f"TypeError: `generator` yielded an element of shape {array.shape} where an "
            f"element of shape {spec.shape} was expected.")
    return array.astype(canonical_dtype(array.dtype), copy=False)


class FromGenerator(Stream):
    """Calls ``generator(*args)`` for each pass and converts what it yields."""

    def __init__(self, generator, signature, args):
        self.generator, self.signature, self.args = generator, signature, args
        self._specs, self._treedef = flatten(signature)

    def _cardinality(self):
        return _indices.UNKNOWN

    def _spec(self):
        return self._treedef.unflatten([TensorSpec(s.shape, canonical_dtype(s.dtype)) for s in self._specs])

    def _elements(self):
        for value in self.generator(*self.args):
            leaves = _structured(value, self._treedef)
            yield self._treedef.unflatten([_converted(v, s) for v, s in zip(leaves, self._specs)])
