"""``keras.Function(inputs, outputs)``: the graph of layers and ops between symbolic tensors,
callable without a Model (Keras 3's ``ops.function.Function``).

    a, b = keras.Input((3,), name="a"), keras.Input((3,), name="b")
    h = keras.layers.Dense(2)(a) + b[:, :2]
    f = keras.Function([a, b], h)
    f([np.ones((1, 3)), np.ones((1, 3))])        # runs the Dense and the ops on values
    f([keras.Input((3,)), keras.Input((3,))])    # on symbolic tensors: one node, a KerasTensor

It is an ``Operation``: called on values it replays the graph's nodes (``models.graph``'s order,
as a functional model runs); called on KerasTensors it records one node whose output spec is
the graph traced abstractly. The inputs must have the structure of ``inputs`` (a tensor, a list
or a dict) and shapes compatible with theirs; the result has the structure of ``outputs``.
"""
import jax

from minikeras.keras.operation import Operation
from minikeras.models.graph import map_graph
from minikeras.symbolic import flatten, is_symbolic, map_symbolic
from minikeras.tensor import Tensor, Variable


def _describe(inputs):
    if isinstance(inputs, dict):
        return f"a dict with keys {sorted(inputs)}"
    if isinstance(inputs, (list, tuple)):
        return f"a {type(inputs).__name__} of {len(inputs)} values"
    return f"one {type(inputs).__name__}"


class Function(Operation):
    """A callable graph from ``inputs`` to ``outputs`` (KerasTensors, or lists/dicts of them).

    Args:
      inputs: the KerasTensors the graph starts from (``keras.Input``).
      outputs: KerasTensors computed from them by layers and ops.
      name: the function's name.

    Attributes:
      inputs, outputs: the flat lists of KerasTensors; operations: the layers and ops of the
      graph, the inputs' own first, in Keras's order.
    """

    def __init__(self, inputs, outputs, name=None):
        super().__init__(name=name)
        self._inputs_struct, self._outputs_struct = inputs, outputs
        self._inputs, self._outputs = flatten(inputs), flatten(outputs)
        bad = [leaf for leaf in jax.tree_util.tree_leaves((inputs, outputs), is_leaf=is_symbolic)
               if not is_symbolic(leaf)]
        if bad or not self._inputs or not self._outputs:
            raise ValueError(f"keras.Function '{self.name}': `inputs` and `outputs` must be KerasTensors (or lists or "
                             f"dicts of them), received inputs={inputs!r}, outputs={outputs!r}")
        try:
            self._nodes, self._operations = map_graph(self._inputs, self._outputs)
        except ValueError as error:
            raise ValueError(f"keras.Function '{self.name}': {error}") from error

    @property
    def inputs(self):
        return list(self._inputs)

    @property
    def outputs(self):
        return list(self._outputs)

    @property
    def operations(self):
        return list(self._operations)

    def call(self, inputs):
        """The outputs' values for ``inputs``, in the structure of the function's ``outputs``."""
        given = self._flat_inputs(inputs)
        values = {id(tensor): value for tensor, value in zip(self._inputs, given)}
        for node in self._nodes:
            out = node.run(lambda t: values[id(t)])
            results = jax.tree_util.tree_leaves(out, is_leaf=lambda v: isinstance(v, (Tensor, Variable)))
            for tensor, value in zip(node.output_tensors, results):
                values[id(tensor)] = value
        return map_symbolic(lambda t: values[id(t)], self._outputs_struct)

    def _flat_inputs(self, inputs):
        """``inputs`` flattened in the order of the function's inputs, after checking their
        structure and shapes (Keras's messages)."""
        struct = self._inputs_struct
        if isinstance(struct, dict):
            ok = isinstance(inputs, dict) and all(key in inputs for key in struct)
            leaves = [inputs[key] for key in sorted(struct)] if ok else None
        elif isinstance(struct, (list, tuple)):
            ok = isinstance(inputs, (list, tuple)) and len(inputs) == len(struct)
            leaves = list(inputs) if ok else None
        else:
            ok = not isinstance(inputs, dict) and (not isinstance(inputs, (list, tuple)) or len(inputs) == 1)
            leaves = (list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]) if ok else None
        if not ok:
            raise ValueError(f"Function '{self.name}' was called with an invalid input structure. Expected input "
                             f"structure: {struct}, received {_describe(inputs)}")
        for tensor, value in zip(self._inputs, leaves):
            shape = getattr(value, "shape", None)
            if shape is None:
                continue
            shape = tuple(shape)
            if len(shape) != len(tensor.shape) or any(
                    want is not None and got is not None and want != got for want, got in zip(tensor.shape, shape)):
                raise ValueError(f"Function '{self.name}' was passed incompatible inputs. For input "
                                 f"'{tensor.name}', expected shape {tensor.shape}, but received instead a tensor "
                                 f"with shape {shape}.")
        return leaves

    def __repr__(self):
        return f"<Function name={self.name}>"
