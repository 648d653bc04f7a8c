"""String components in a pipeline: they stay NumPy object arrays of bytes on the host.

Numeric components of a batch go to the device in one ``jax.device_put``; string ones never
do (jax has no strings). A function mapped over rows that hold strings cannot be vmapped, so
it runs eagerly once per row (``eager_rows``) and the results are stacked, and the element
spec after it is read from the first rows it produces (``spec_from_rows``).
"""
import jax
import numpy as np

from minikeras.data._structure import call_on_element, flatten
from minikeras.data.host_calls import marked_for_host
from minikeras.dtypes import string
from minikeras.tensor_spec import TensorSpec

_SPEC_ROWS = 2  # rows run to work out a spec: sizes that differ between them are None


def is_string_leaf(x):
    return isinstance(x, bytes) or (isinstance(x, np.ndarray) and x.dtype == object)


def has_strings(spec):
    return any(s.dtype == string for s in flatten(spec)[0])


def runs_on_host(spec, fns):
    """Whether functions over rows of ``spec`` run eagerly row by row: the rows hold strings, or
    a function says it computes on the host (``host_calls``: a FeatureSpace)."""
    return has_strings(spec) or marked_for_host(fns)


def to_device(leaves):
    """``leaves`` with the numeric ones on the device (one transfer) and strings left as they are."""
    numeric = [i for i, leaf in enumerate(leaves) if not is_string_leaf(leaf)]
    moved = jax.device_put([leaves[i] for i in numeric])
    out = list(leaves)
    for i, array in zip(numeric, moved):
        out[i] = array
    return out


def stack_strings(column):
    """Equal-shaped string values (bytes, object arrays) as one object array."""
    out = np.empty((len(column),) + np.shape(column[0]), dtype=object)
    for i, value in enumerate(column):
        out[i] = value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value
    return out


def stack(column, what):
    """One batch from a column of equal-shaped row values (strings as an object array)."""
    shapes = {np.shape(x) for x in column}
    if len(shapes) > 1:
        raise ValueError(f"{what}: cannot batch elements of different shapes {sorted(shapes)}")
    if is_string_leaf(column[0]):
        return stack_strings(column)
    return np.stack([np.asarray(x) for x in column])


def eager_rows(fns, what="Dataset.map"):
    """A function of a batch (a nest of arrays) that applies ``fns`` to each row eagerly and
    stacks the results: the path for rows holding strings."""
    def run(batch):
        leaves, treedef = flatten(batch)
        n = len(leaves[0]) if leaves else 0
        outs = []
        for i in range(n):
            element = treedef.unflatten([leaf[i] for leaf in leaves])
            for fn in fns:
                element = call_on_element(fn, element)
            outs.append(element)
        if not outs:
            return batch
        out_leaves, out_tree = flatten(outs[0])
        columns = [[flatten(o)[0][j] for o in outs] for j in range(len(out_leaves))]
        return out_tree.unflatten(to_device([stack(c, what) for c in columns]))
    return run


def spec_from_rows(rows, treedef, fns):
    """The spec of ``fns``'s output, read from running them on the first rows of ``rows``
    (NumPy leaves); a size that differs between those rows is None."""
    leaves = list(rows)
    n = min(_SPEC_ROWS, len(leaves[0]) if leaves else 0)
    return spec_of_elements((treedef.unflatten([leaf[i] for leaf in leaves]) for i in range(n)), fns)


def spec_of_elements(elements, fns):
    """The spec of ``fns``'s output on ``elements`` (a few real ones): sizes that differ are None."""
    outs = []
    for element in elements:
        for fn in fns:
            element = call_on_element(fn, element)
        outs.append(flatten(element))
    if not outs:
        raise ValueError("Dataset: cannot work out the element_spec of a function mapped over an empty dataset of "
                         "strings")
    first, out_tree = outs[0]
    specs = []
    for j, leaf in enumerate(first):
        shapes = [np.shape(o[0][j]) for o in outs]
        shape = tuple(d if all(s[k] == d for s in shapes) else None for k, d in enumerate(shapes[0]))
        specs.append(TensorSpec(shape, string if is_string_leaf(leaf) else np.dtype(np.asarray(leaf).dtype)))
    return out_tree.unflatten(specs)
