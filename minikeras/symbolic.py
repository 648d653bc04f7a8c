"""Symbolic tensors (Keras's ``KerasTensor``) and the graph nodes that make them.

``mk.Input(shape)`` returns a ``KerasTensor``: a shape (``None`` where the size is not known,
the batch axis at least), a dtype and a name, but no value. Calling a layer on KerasTensors,
or an op (``x + y``, ``mk.concat``, slicing), records a ``Node`` - the operation and the
arguments it was called with - and returns KerasTensors whose ``_keras_history`` points back
to it. ``mk.Model(inputs, outputs)`` walks those nodes back from the outputs; calling the model
replays them on real Tensors (plain ops, so a traced ``mk.function`` holds no per-node Python).

Output shapes come from tracing the operation abstractly (``jax.eval_shape``) twice, with each
unknown size set to two different numbers: a size that changes with them is unknown (None) in
the output, so every layer and op works without a ``compute_output_shape``.

This module imports nothing from minikeras but ``dtypes``: the tensor and op modules use it.
"""
import itertools
import re

import jax

from minikeras.dtypes import as_dtype

_PROBE_SIZES = (83, 89)  # what an unknown size is set to while a shape is traced (as Keras's jax backend)
_names = itertools.count()
_op_counts = {}  # op name -> how many ops of that name were called on symbolic tensors


class SymbolicInput(TypeError):
    """A KerasTensor reached code that needs a value (raised by ``to_array``); ops catch it to
    record a node instead."""

    def __init__(self, tensor):
        self.tensor = tensor
        super().__init__(
            f"{tensor!r} is a symbolic tensor (from mk.Input): it has a shape but no value, so it can only be "
            "passed to layers and mk ops while building a functional model (mk.Model(inputs, outputs)); "
            "call the model on data to compute values")


def _show_unknown_sizes(error, tensors):
    """``error``'s message with the probe size of unknown dimensions shown as None, as the
    user wrote them (a batch of 83 is no size of theirs), unless a known size is the same."""
    size = _PROBE_SIZES[0]
    if not error.args or not isinstance(error.args[0], str) or any(size in t.shape for t in tensors):
        return
    text = re.sub(rf"(?<![\w.]){size}(?![\w.])", "None", error.args[0])
    error.args = (text,) + error.args[1:]
    if isinstance(getattr(error, "_message", None), str):  # mk.errors' OpError keeps it apart
        error._message = text


# NumPy ufunc -> a KerasTensor's operator (and, for two operands, its reflection when the
# KerasTensor is the second one: np.less(a, x) is x > a).
_UFUNC_OPERATORS = {
    "add": ("__add__", "__radd__"), "subtract": ("__sub__", "__rsub__"), "multiply": ("__mul__", "__rmul__"),
    "true_divide": ("__truediv__", "__rtruediv__"), "divide": ("__truediv__", "__rtruediv__"),
    "floor_divide": ("__floordiv__", "__rfloordiv__"), "remainder": ("__mod__", "__rmod__"),
    "power": ("__pow__", "__rpow__"), "matmul": ("__matmul__", "__rmatmul__"),
    "less": ("__lt__", "__gt__"), "less_equal": ("__le__", "__ge__"),
    "greater": ("__gt__", "__lt__"), "greater_equal": ("__ge__", "__le__"),
    "negative": ("__neg__",), "absolute": ("__abs__",),
}
_MINIKERAS_OPS = {"arctan": "atan", "arcsin": "asin", "arccos": "acos", "fabs": "abs", "float_power": "pow"}


class KerasTensor:
    """A symbolic tensor: the shape (None for unknown sizes) and dtype of a value a functional
    model will compute, and the node that computes it.

    >>> x = mk.Input((784,))
    >>> x.shape
    (None, 784)
    """

    __array_priority__ = 200  # ``np.ndarray + KerasTensor`` calls KerasTensor.__radd__

    def __init__(self, shape, dtype, name=None, history=None):
        self.shape = tuple(None if n is None else int(n) for n in shape)
        self.dtype = as_dtype(dtype)
        self.name = name or f"keras_tensor_{next(_names)}"
        self._keras_history = history  # (node, index among the node's outputs), or None

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def node(self):
        return None if self._keras_history is None else self._keras_history[0]

    def __repr__(self):
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype.name}, name={self.name}>"

    def __bool__(self):
        raise TypeError(f"{self!r} has no truth value: it is symbolic (use mk.cond/mk.where on values)")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """NumPy's arithmetic on a KerasTensor is its operator (``np.add(x, 1)`` is ``x + 1``, a
        node); any other NumPy function cannot compute on it, and says so, as Keras 3 does."""
        names = _UFUNC_OPERATORS.get(ufunc.__name__)
        if method == "__call__" and names is not None and not kwargs and len(inputs) == len(names):
            if len(inputs) == 1:
                return getattr(self, names[0])()
            return getattr(self, names[0])(inputs[1]) if inputs[0] is self else getattr(self, names[1])(inputs[0])
        op = _MINIKERAS_OPS.get(ufunc.__name__, ufunc.__name__)
        raise TypeError(f"np.{ufunc.__name__} was called on {self!r}. A KerasTensor is symbolic: it is a placeholder "
                        "for a shape and a dtype, with no numerical value, so NumPy cannot compute on it. Use "
                        f"minikeras's op instead (mk.math.{op}(x) for np.{ufunc.__name__}(x)), which adds a node to "
                        "the functional model")

    def __len__(self):
        if not self.shape or self.shape[0] is None:
            raise TypeError(f"len() of {self!r}: its first dimension is unknown")
        return self.shape[0]

    def __iter__(self):
        raise TypeError(f"{self!r} is symbolic and cannot be iterated over")

    __hash__ = object.__hash__

    def spec(self, probe):
        """A jax.ShapeDtypeStruct with unknown sizes set to ``_PROBE_SIZES[probe]``."""
        size = _PROBE_SIZES[probe]
        return jax.ShapeDtypeStruct(tuple(size if n is None else n for n in self.shape), self.dtype)


def is_symbolic(x):
    return type(x) is KerasTensor


def is_keras_tensor(x):
    """Whether ``x`` is a symbolic tensor of the functional API (``keras.Input``'s kind), as
    ``keras.utils.is_keras_tensor``."""
    return isinstance(x, KerasTensor)


def get_source_inputs(tensor):
    """The input KerasTensors ``tensor`` is computed from, in the order the graph reaches them,
    each once (``keras.utils.get_source_inputs``). A KerasTensor made by no node is its own
    source; a value that is not a KerasTensor is returned as it is, as Keras does.

    >>> x, y = mk.Input((2,)), mk.Input((2,))
    >>> get_source_inputs(x + y * x) == [x, y]
    """
    if not hasattr(tensor, "_keras_history"):
        return tensor
    node = tensor.node
    if node is None:
        return [tensor]
    if node.is_input:
        return list(node.output_tensors)
    sources = []
    for parent in node.input_tensors:
        for source in get_source_inputs(parent):
            if all(source is not seen for seen in sources):
                sources.append(source)
    return sources


def any_symbolic(structure):
    """Whether ``structure`` (a value, or lists/tuples/dicts of them) holds a KerasTensor."""
    if type(structure) is KerasTensor:
        return True
    if isinstance(structure, (list, tuple)):
        return any(any_symbolic(x) for x in structure)
    if isinstance(structure, dict):
        return any(any_symbolic(x) for x in structure.values())
    return False


def flatten(structure):
    """The KerasTensors in ``structure``, in order (lists, tuples and dicts by sorted key)."""
    return [x for x in jax.tree_util.tree_leaves(structure, is_leaf=is_symbolic) if is_symbolic(x)]


def map_symbolic(fn, structure):
    """``structure`` with each KerasTensor ``x`` replaced by ``fn(x)``."""
    return jax.tree_util.tree_map(lambda x: fn(x) if is_symbolic(x) else x, structure, is_leaf=is_symbolic)


class Node:
    """One call of an operation (a Layer, or an op on KerasTensors) while a graph is built.

    Attributes:
      operation: the Layer or ``OpCall`` called.
      args, kwargs: what it was called with (KerasTensors where the graph's values go).
      outputs: its result: a KerasTensor or a structure of them.
      input_tensors, output_tensors: the KerasTensors among the arguments and the result.
      index: which call of the operation this is (0 for its first).
    """

    def __init__(self, operation, args, kwargs, outputs, index=0):
        self.operation = operation
        self.index = index
        self.args = args
        self.kwargs = kwargs
        self.outputs = outputs
        self.input_tensors = flatten((args, kwargs))
        self.output_tensors = flatten(outputs)
        for position, tensor in enumerate(self.output_tensors):
            tensor._keras_history = (self, position)

    @property
    def is_input(self):
        return not self.input_tensors

    @property
    def parent_nodes(self):
        return [t.node for t in self.input_tensors if t.node is not None]

    def run(self, value_of, **extra_kwargs):
        """Calls the operation on real values: ``value_of(keras_tensor)`` gives each input's value."""
        args = map_symbolic(value_of, self.args)
        kwargs = dict(map_symbolic(value_of, self.kwargs), **extra_kwargs)
        return self.operation(*args, **kwargs)


def output_spec(fn, args, kwargs, describe, evaluate=jax.eval_shape):
    """The KerasTensors (shapes and dtypes, no history yet) of ``fn(*args, **kwargs)``, where
    ``fn`` receives traced values in place of the KerasTensors (other arguments as given).

    ``fn`` is traced twice with the unknown sizes set to two different numbers; an output size
    that differs between the two is unknown. ``describe`` names the operation in errors.
    ``evaluate(f, specs)`` traces ``f(specs)`` abstractly (``jax.eval_shape`` by default; layers
    pass one that lets their Variables be assigned, and restores them).
    """
    leaves, treedef = jax.tree_util.tree_flatten((args, kwargs), is_leaf=is_symbolic)
    where = [i for i, leaf in enumerate(leaves) if is_symbolic(leaf)]

    def with_values(values):
        filled = list(leaves)
        for i, value in zip(where, values):
            filled[i] = value
        args, kwargs = jax.tree_util.tree_unflatten(treedef, filled)
        return fn(*args, **kwargs)

    results = []
    for probe in (0, 1):
        try:
            results.append(evaluate(with_values, [leaves[i].spec(probe) for i in where]))
        except SymbolicInput:
            raise
        except Exception as error:
            if probe == 0:
                _show_unknown_sizes(error, [leaves[i] for i in where])
                raise
            raise ValueError(f"{describe}: its output shape depends on an unknown input size "
                             f"(None): {error}") from error

    def merge(a, b):
        if len(a.shape) != len(b.shape) or a.dtype != b.dtype:
            raise ValueError(f"{describe}: its output's rank or dtype depends on an unknown input size (None): "
                             f"{a} for one size, {b} for another")
        shape = tuple(m if m == n else None for m, n in zip(a.shape, b.shape))
        return KerasTensor(shape, a.dtype)
    if jax.tree_util.tree_structure(results[0]) != jax.tree_util.tree_structure(results[1]):
        raise ValueError(f"{describe}: the structure of its outputs depends on an unknown input size (None)")
    return jax.tree_util.tree_map(merge, results[0], results[1])


def clear_op_names():
    """Restarts the automatic names of ops on symbolic tensors ('add', 'add_1', ...)."""
    _op_counts.clear()


class OpCall:
    """An op called on KerasTensors (``x + 1``, ``mk.concat([a, b])``), as a graph operation:
    calling it calls the op with the same static parameters (Keras's op nodes)."""

    def __init__(self, op, params):
        self.op = op
        self.params = dict(params)
        base = op.name
        n = _op_counts.get(base, 0)
        _op_counts[base] = n + 1
        self.name = base if n == 0 else f"{base}_{n}"

    def __call__(self, *inputs):
        return self.op(*inputs, **self.params)

    def __repr__(self):
        return f"<op {self.name}>"


def record_op(op, inputs, params, forward):
    """The KerasTensor of primitive ``op`` applied to ``inputs`` (KerasTensors and jax arrays)
    with static ``params``; ``forward(*arrays, **params)`` is the op's jax forward (traced for
    the shape)."""
    out = output_spec(lambda *values: forward(*values, **params), tuple(inputs), {}, f"op '{op.name}'")
    Node(OpCall(op, params), tuple(inputs), {}, out)
    return out
