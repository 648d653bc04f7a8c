"""The stage of ``Dataset.padded_batch``: batches of elements padded to a common shape."""
import numpy as np

from minikeras.data import _indices
from minikeras.data._streams import Unary
from minikeras.data._structure import flatten
from minikeras.errors import DataLossError
from minikeras.tensor_spec import TensorSpec


def _as_shape(shape):
    if shape is None:
        return None
    return tuple(None if d is None or d == -1 else int(d) for d in shape)


def _normalize_shapes(padded_shapes, specs, treedef):
    """One target shape per component: a tuple of ints and Nones (None: the batch's longest)."""
    if padded_shapes is None:
        return [None if s.shape is None else (None,) * len(s.shape) for s in specs]
    leaves = treedef.flatten_up_to(padded_shapes) if treedef.num_nodes > 1 else [padded_shapes]
    shapes = [_as_shape(shape) for shape in leaves]
    for spec, shape in zip(specs, shapes):
        if shape is not None and spec.shape is not None and len(shape) != len(spec.shape):
            raise ValueError(f"Dataset.padded_batch: padded shape {shape} has rank {len(shape)}, but the element "
                             f"component has shape {spec.shape} (rank {len(spec.shape)})")
    return shapes


def _normalize_values(padding_values, specs, treedef):
    if padding_values is None:
        return [np.zeros((), s.dtype) for s in specs]
    if treedef.num_nodes > 1 and isinstance(padding_values, (tuple, dict)):
        leaves = treedef.flatten_up_to(padding_values)
    else:
        leaves = [padding_values] * len(specs)
    return [np.asarray(v, dtype=s.dtype) for v, s in zip(leaves, specs)]


class PaddedBatch(Unary):
    def __init__(self, upstream, batch_size, padded_shapes, padding_values, drop_remainder):
        super().__init__(upstream)
        self.batch_size, self.drop_remainder = batch_size, drop_remainder
        self._specs, self._treedef = flatten(upstream._spec())
        self._shapes = _normalize_shapes(padded_shapes, self._specs, self._treedef)
        self._values = _normalize_values(padding_values, self._specs, self._treedef)

    def _cardinality(self):
        return _indices.batch_cardinality(self.upstream._cardinality(), self.batch_size, self.drop_remainder)

    def _spec(self):
        size = self.batch_size if self.drop_remainder else None
        out = []
        for spec, shape in zip(self._specs, self._shapes):
            if shape is None or spec.shape is None:
                dims = spec.shape
            else:  # a given size, else the element's size when it is fixed, else unknown
                dims = tuple(p if p is not None else d for p, d in zip(shape, spec.shape))
            out.append(TensorSpec(None if dims is None else (size,) + dims, spec.dtype))
        return self._treedef.unflatten(out)

    def _pad(self, elements):
        columns = list(zip(*[flatten(e)[0] for e in elements]))
        out = []
        for column, shape, value in zip(columns, self._shapes, self._values):
            arrays = [np.asarray(x) for x in column]
            longest = tuple(max(sizes) for sizes in zip(*[a.shape for a in arrays])) if arrays[0].ndim else ()
            target = longest if shape is None else tuple(m if p is None else p for p, m in zip(shape, longest))
            if any(t < m for t, m in zip(target, longest)):
                raise DataLossError(None, "IteratorGetNext", f"Attempted to pad to a smaller size than the input "
                                    f"element: padded shape {target}, element shape {longest}.")
            batch = np.full((len(arrays),) + target, value, dtype=arrays[0].dtype)
            for i, a in enumerate(arrays):
                batch[(i,) + tuple(slice(0, n) for n in a.shape)] = a
            out.append(batch)
        return self._treedef.unflatten(out)

    def _elements(self):
        pending = []
        for element in self.upstream._elements():
            pending.append(element)
            if len(pending) == self.batch_size:
                yield self._pad(pending)
                pending = []
        if pending and not self.drop_remainder:
            yield self._pad(pending)
