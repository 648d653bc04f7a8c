"""Stages that select, number or chain elements: ``filter``, ``enumerate``, ``concatenate``."""
import itertools

import numpy as np

from minikeras.data import _indices, _specs
from minikeras.data._streams import Stream, Unary
from minikeras.data._structure import call_on_element, flatten
from minikeras.dtypes import canonical_dtype, int64
from minikeras.tensor_spec import TensorSpec


def check_predicate(predicate, spec):
    """Raises ValueError, as tf.data does when it traces the predicate, unless it returns a
    scalar bool (checked on the element spec; a predicate that cannot be traced is checked
    on each element instead)."""
    try:
        out = _specs.traced(predicate, spec)
    except Exception:  # noqa: BLE001 - checked per element in Filter
        return
    if not isinstance(out, TensorSpec) or out.dtype != np.bool_ or out.shape != ():
        raise ValueError(f"Invalid `predicate`. `predicate` must return a `mk.bool` scalar tensor, but its return "
                         f"type is {out}.")


class Filter(Unary):
    def __init__(self, upstream, predicate):
        super().__init__(upstream)
        self.predicate = predicate

    def _cardinality(self):
        n = self.upstream._cardinality()
        return n if n == _indices.INFINITE else _indices.UNKNOWN

    def _elements(self):
        for element in self.upstream._elements():
            keep = np.asarray(call_on_element(self.predicate, element))
            if keep.shape != () or keep.dtype != np.bool_:
                raise ValueError(f"Invalid `predicate`. `predicate` must return a `mk.bool` scalar tensor, but it "
                                 f"returned shape {keep.shape} dtype {keep.dtype}")
            if keep:
                yield element


class Enumerate(Unary):
    def __init__(self, upstream, start):
        super().__init__(upstream)
        self.start = start
        self._dtype = canonical_dtype(int64)

    def _spec(self):
        return (TensorSpec((), self._dtype), self.upstream._spec())

    def _elements(self):
        for i, element in zip(itertools.count(self.start), self.upstream._elements()):
            yield np.asarray(i, self._dtype), element


class Concatenate(Stream):
    def __init__(self, first, second):
        self.first, self.second = first, second
        self._merged = _specs.most_specific_compatible(first._spec(), second._spec(), "Dataset.concatenate")

    def _spec(self):
        return self._merged

    def _cardinality(self):
        a, b = self.first._cardinality(), self.second._cardinality()
        if _indices.INFINITE in (a, b):
            return _indices.INFINITE
        return _indices.UNKNOWN if _indices.UNKNOWN in (a, b) else a + b

    def _elements(self):
        _, treedef = flatten(self._merged)
        yield from self.first._elements()
        for element in self.second._elements():  # the first's nest types (a namedtuple stays one)
            yield treedef.unflatten(flatten(element)[0])


