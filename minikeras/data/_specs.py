"""Element specs: the ``mk.TensorSpec`` nest that ``Dataset.element_spec`` reports.

Each pipeline stage derives its spec from its upstream's, as tf.data does statically: a
batch adds a leading None (the batch size itself with ``drop_remainder=True``), unbatch
drops it, and a mapped function is traced with ``jax.eval_shape``. Sizes unknown before
a function (None) are traced twice, as two different sizes; an output size that differs
between the two traces is unknown (None) after it.
"""
import jax
import numpy as np

from minikeras.data._structure import call_on_element, flatten
from minikeras.data.host_calls import HostOnlyCall
from minikeras.tensor_spec import TensorSpec

_PLACEHOLDER_SIZES = (7919, 7907)  # two primes unlikely to be real sizes


def _is_spec_leaf(x):
    return not isinstance(x, (tuple, dict))


def map_specs(fn, spec):
    """``fn`` applied to every TensorSpec of the nest ``spec``."""
    return jax.tree_util.tree_map(fn, spec, is_leaf=_is_spec_leaf)


def of_arrays(leaves, treedef, drop_first=False):
    """The spec of elements made of ``leaves`` (rows of them when ``drop_first``)."""
    return treedef.unflatten([TensorSpec(tuple(np.shape(a))[1 if drop_first else 0:], np.dtype(a.dtype))
                              for a in leaves])


def batched(spec, batch_size=None):
    """Each component gains a leading axis of ``batch_size`` (None: unknown)."""
    return map_specs(lambda s: TensorSpec(None if s.shape is None else (batch_size,) + s.shape, s.dtype), spec)


def unbatched(spec, what="Dataset.unbatch"):
    """Each component loses its leading axis."""
    def drop(s):
        if s.shape is not None and not s.shape:
            raise ValueError(f"{what}: the elements must have at least one dimension, received {s}")
        return TensorSpec(None if s.shape is None else s.shape[1:], s.dtype)
    return map_specs(drop, spec)


def _structs(spec, size):
    return map_specs(lambda s: jax.ShapeDtypeStruct(tuple(size if d is None else d for d in s.shape), s.dtype), spec)


def traced(fn, spec):
    """The spec of ``fn``'s output on elements of ``spec`` (tf.data's function tracing)."""
    try:
        outs = [jax.eval_shape(lambda e: call_on_element(fn, e), _structs(spec, size))
                for size in _PLACEHOLDER_SIZES]
    except HostOnlyCall:
        raise  # the caller works the spec out from rows run eagerly
    except Exception as error:  # noqa: BLE001 - re-raised with what was being done
        name = getattr(fn, "__name__", type(fn).__name__)
        raise TypeError(f"Dataset: cannot work out the element_spec after the function {name}: tracing it on "
                        f"elements of spec {spec} failed with {type(error).__name__}: {error}. Like tf.data, this "
                        "needs a function that computes with mk ops on its inputs (no .numpy(), no Python `if` on "
                        "values)") from error
    leaves_a, treedef = flatten(outs[0])
    leaves_b, _ = flatten(outs[1])
    return treedef.unflatten([
        TensorSpec(tuple(x if x == y else None for x, y in zip(a.shape, b.shape)), np.dtype(a.dtype))
        for a, b in zip(leaves_a, leaves_b)])


def most_specific_compatible(a, b, what):
    """The spec that covers both ``a`` and ``b`` (sizes that differ become None).

    Raises:
      TypeError: the structures or dtypes differ (tf.data's 'Incompatible dataset elements').
    """
    leaves_a, tree_a = flatten(a)
    leaves_b, tree_b = flatten(b)
    if tree_a != tree_b or any(x.dtype != y.dtype or (x.shape is not None and y.shape is not None
                                                        and len(x.shape) != len(y.shape))
                               for x, y in zip(leaves_a, leaves_b)):
        raise TypeError(f"{what}: Incompatible dataset elements:\n  {a} vs.   {b}")

    def merge(x, y):
        if x.shape is None or y.shape is None:
            return TensorSpec(None, x.dtype)
        return TensorSpec(tuple(p if p == q else None for p, q in zip(x.shape, y.shape)), x.dtype)

    return tree_a.unflatten([merge(x, y) for x, y in zip(leaves_a, leaves_b)])
