"""General signatures: one trace of an ``mk.function`` for Tensors of many sizes.

A call's signature (``function._signature``) holds one entry per leaf of its arguments:
``("T", shape, dtype)`` for a Tensor, and entries for Variables and Python values that a
call must match exactly. A *general* signature has unknown sizes, as a ``tf.TensorSpec``
with None dimensions. ``mk.function`` traces a general signature once, with a symbolic size
(``jax.export.symbolic_shape``) for each unknown size, and compiles that one trace for each
concrete shape it is called with (``programs.program``).

A traced general signature names its unknown sizes (``"d0"``, ``"d1"``, ...). The None
sizes of first axes (batch axes) that were equal in the call that caused the trace share a
name, so one symbol stands for them and the program may rely on their equality (``x - y``
for a batch ``x`` and its labels ``y``); it then runs calls where they are equal, and a call
where they differ is traced with a name for each (TensorFlow checks such sizes when the graph
runs instead). Every other None size has a name of its own.

Two ways lead to a general signature, as in TensorFlow: an ``input_signature`` with None
dimensions (``relax_to_specs``), and ``reduce_retracing=True``, which traces a call that
matches no program with the most specific signature that also covers the signatures traced
before (``common``: TensorFlow's ``most_specific_common_subtype``). XLA programs have a fixed
rank, so a general signature keeps each Tensor's rank, where TensorFlow would relax to an
unknown rank.
"""
import jax
from jax import export

from minikeras.tensor_spec import TensorSpec


def is_tensor_entry(entry):
    return entry[0] == "T"


def _unknown(d):
    return type(d) is not int


def is_general(signature):
    """Whether a Tensor of ``signature`` has an unknown size (None or a name)."""
    return any(is_tensor_entry(e) and any(map(_unknown, e[1])) for e in signature)


def relax_to_specs(signature, spec_shapes):
    """``signature`` with None wherever ``spec_shapes`` (one shape, or None for an unknown
    rank, per Tensor of the signature, in order) has None."""
    specs = iter(spec_shapes)
    relaxed = []
    for entry in signature:
        if is_tensor_entry(entry):
            kind, shape, dtype = entry
            spec = next(specs)
            shape = (None,) * len(shape) if spec is None else tuple(
                None if s is None else d for d, s in zip(shape, spec))
            entry = (kind, shape, dtype)
        relaxed.append(entry)
    return tuple(relaxed)


def common(a, b):
    """The most specific signature (with None sizes) that covers both ``a`` and ``b``, or
    None: their Tensors must agree in dtype and rank (sizes that differ or are unknown in
    either become None) and their other entries must be equal."""
    if len(a) != len(b):
        return None
    merged = []
    for x, y in zip(a, b):
        if is_tensor_entry(x) and is_tensor_entry(y) and x[2] == y[2] and len(x[1]) == len(y[1]):
            merged.append((x[0], tuple(p if p == q and not _unknown(p) else None for p, q in zip(x[1], y[1])), x[2]))
        elif x == y:
            merged.append(x)
        else:
            return None
    return tuple(merged)


def named(relaxed, signature):
    """``relaxed`` (None sizes) with a name for each None: one name for the None sizes of
    first axes that are equal in ``signature`` (the call being traced), a name of its own for
    every other None."""
    names = {}
    result = []
    for r, s in zip(relaxed, signature):
        if is_tensor_entry(r):
            shape = []
            for axis, (want, got) in enumerate(zip(r[1], s[1])):
                if want is None:
                    key = got if axis == 0 and type(got) is int else object()
                    want = names.setdefault(key, f"d{len(names)}")
                shape.append(want)
            r = (r[0], tuple(shape), r[2])
        result.append(r)
    return tuple(result)


def accepts(general, signature):
    """Whether a program traced for ``general`` (named sizes) runs a call of ``signature``:
    equal entries, except sizes under a name of ``general``, which may be any size of at
    least 1 (a symbolic size is at least 1), the same for each use of one name. An unknown
    size of ``signature`` (``get_concrete_function`` of a TensorSpec) fits a name only."""
    if len(general) != len(signature):
        return False
    sizes = {}
    for g, s in zip(general, signature):
        if g == s and not is_tensor_entry(g):
            continue
        if not (is_tensor_entry(g) and is_tensor_entry(s) and g[2] == s[2] and len(g[1]) == len(s[1])):
            return False
        for want, got in zip(g[1], s[1]):
            if type(want) is int:
                if want != got:
                    return False
            elif type(got) is int:
                if got < 1 or sizes.setdefault(want, got) != got:
                    return False
    return True


def unknown_sizes(signature):
    """How many distinct unknown sizes ``signature`` has (fewer: more specific)."""
    return len({d for e in signature if is_tensor_entry(e) for d in e[1] if type(d) is str})


def shapes_as_specs(signature):
    """(shape with None for each unknown size, dtype) of each Tensor of ``signature``."""
    return [(tuple(None if _unknown(d) else d for d in e[1]), e[2]) for e in signature if is_tensor_entry(e)]


def specs_of(signature):
    """The TensorSpecs of ``signature``'s Tensors (None for unknown sizes), for messages."""
    return [TensorSpec(shape, dtype) for shape, dtype in shapes_as_specs(signature)]


def symbolic_avals(general, dtype_of):
    """``jax.ShapeDtypeStruct``s for the Tensors of ``general`` (named sizes): each name one
    symbolic dimension; ``dtype_of(name)`` gives the dtype."""
    names = sorted({d for e in general if is_tensor_entry(e) for d in e[1] if type(d) is str},
                   key=lambda n: int(n[1:]))
    symbols = dict(zip(names, export.symbolic_shape(", ".join(names)))) if names else {}
    return [jax.ShapeDtypeStruct(tuple(symbols[d] if type(d) is str else d for d in e[1]), dtype_of(e[2]))
            for e in general if is_tensor_entry(e)]

