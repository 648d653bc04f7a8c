"""What makes ``mk.Model(inputs, outputs)`` a model: the graph between symbolic tensors.

``FunctionalGraph`` is mixed into ``Model`` by ``model.Functional``. Its ``call`` replays the
graph's nodes (``models.graph``) on real Tensors in order: plain layer and op calls, so that
``mk.function`` traces the whole model once into one program, as it does a ``Sequential``.
"""
import jax

from minikeras.layers.base import Layer
from minikeras.layers.mask_flow import get_mask, set_mask
from minikeras.models.graph import describe_value, input_tensors_of, map_graph
from minikeras.ops.math import cast
from minikeras.symbolic import flatten, is_symbolic, map_symbolic
from minikeras.tensor import Tensor, Variable, to_array


class FunctionalGraph:
    """The functional API's model: layers (and ops) connected from ``inputs`` to ``outputs``.

    Args:
      inputs: a KerasTensor from ``mk.Input``, or a list or dict of them.
      outputs: KerasTensors computed from the inputs: one, or a list or dict of them.
      name: the model's name.

    >>> inputs = mk.Input(shape=(784,))
    >>> x = mk.layers.Dense(64, activation="relu")(inputs)
    >>> outputs = mk.layers.Dense(10)(x)
    >>> model = mk.Model(inputs=inputs, outputs=outputs, name="mnist_model")
    """

    # The graph (nodes, symbolic tensors) holds no state; the layers are tracked through
    # ``_graph_layers``, in the graph's order.
    GRAPH_STATE = frozenset({"_graph_nodes", "_graph_operations", "_graph_inputs", "_graph_outputs",
                             "_inputs_struct", "_outputs_struct"})

    def _init_graph(self, inputs, outputs):
        if isinstance(inputs, tuple):
            inputs = list(inputs)
        if isinstance(outputs, tuple):
            outputs = list(outputs)
        self._graph_inputs = input_tensors_of(inputs)
        self._graph_outputs = flatten(outputs)
        leaves = jax.tree_util.tree_leaves(outputs, is_leaf=is_symbolic)
        bad = [leaf for leaf in leaves if not is_symbolic(leaf)]
        if bad or not leaves:
            raise ValueError(f"mk.Model '{self.name}': all `outputs` must be symbolic tensors computed from the "
                             f"inputs by layers or ops, received {describe_value(bad[0]) if bad else 'nothing'}: "
                             "was a layer called on a concrete value (a NumPy array or mk.Tensor) instead of a "
                             "tensor that comes from mk.Input?")
        self._inputs_struct, self._outputs_struct = inputs, outputs
        self._graph_nodes, self._graph_operations = map_graph(self._graph_inputs, self._graph_outputs)
        layers = [op for op in self._graph_operations if isinstance(op, Layer)]
        names = [layer.name for layer in layers]
        for name in names:
            if names.count(name) > 1:
                raise ValueError(f'The name "{name}" is used {names.count(name)} times in the model '
                                 f"'{self.name}'. All layer names should be unique.")
        self._graph_layers = layers
        self.built = True
        self._output_shape = self.output_shape

    # -- the graph seen from outside -------------------------------------------------------
    @property
    def layers(self):
        """Every layer of the graph (the InputLayers first), in Keras's topological order."""
        return list(self._graph_layers)

    @property
    def operations(self):
        """The layers and the ops on symbolic tensors (``x + y``), in the graph's order."""
        return list(self._graph_operations)

    def nodes_of(self, operation):
        """The graph nodes (calls) of ``operation`` that belong to this model, in order."""
        nodes = self._graph_nodes + [t.node for t in self._graph_inputs]
        return sorted((n for n in nodes if n.operation is operation), key=lambda n: n.index)

    def is_sequential_like(self):
        """Whether the graph is a chain: one node per depth, each with one input, no shared layer
        (Keras's test for a summary without a "Connected to" column)."""
        if len(self._graph_inputs) != 1 or len(self._graph_outputs) != 1:
            return False
        if any(len(n.input_tensors) > 1 for n in self._graph_nodes):
            return False
        consumers = {}
        for node in self._graph_nodes:
            for tensor in node.input_tensors:
                consumers[id(tensor)] = consumers.get(id(tensor), 0) + 1
        return all(count == 1 for count in consumers.values()) and \
            all(len(self.nodes_of(op)) == 1 for op in self._graph_operations)

    @property
    def inputs(self):
        return list(self._graph_inputs)

    @property
    def outputs(self):
        return list(self._graph_outputs)

    @property
    def input(self):
        return self._inputs_struct

    @property
    def output(self):
        return self._outputs_struct

    @property
    def input_names(self):
        return [t.node.operation.name for t in self._graph_inputs]

    @property
    def output_names(self):
        """The names of the outputs: the dict's keys, else the names of the layers producing them."""
        if isinstance(self._outputs_struct, dict):
            return list(self._outputs_struct)
        return [t.node.operation.name for t in self._graph_outputs]

    @property
    def input_shape(self):
        return _shapes(self._inputs_struct)

    @property
    def output_shape(self):
        return _shapes(self._outputs_struct)

    def build(self, input_shape=None):
        self.built = True  # built when made

    # -- running the graph -----------------------------------------------------------------
    def call(self, inputs, training=None, mask=None):
        """The outputs for ``inputs`` (a Tensor, or a list or dict matching ``model.input``);
        ``mask``: the inputs' masks (one per input, None for none), else those they carry."""
        values = {}
        given = self._standardize_inputs(inputs)
        masks = [get_mask(v) for v in given] if mask is None else list(jax.tree_util.tree_leaves(
            mask if isinstance(mask, (list, tuple, dict)) else [mask], is_leaf=lambda m: m is None))
        for tensor, value, value_mask in zip(self._graph_inputs, given, masks + [None] * len(given)):
            if isinstance(value, Tensor) and value.dtype != tensor.dtype:  # as the mk.Input declares
                value = cast(value, tensor.dtype)
            if value_mask is not None:
                value = value if isinstance(value, Tensor) else Tensor(to_array(value))
                set_mask(value, value_mask)
            values[id(tensor)] = value
        for node in self._graph_nodes:
            out = node.run(lambda t: values[id(t)])
            results = jax.tree_util.tree_leaves(out, is_leaf=lambda v: isinstance(v, (Tensor, Variable)))
            for tensor, value in zip(node.output_tensors, results):
                values[id(tensor)] = value
        return map_symbolic(lambda t: values[id(t)], self._outputs_struct)

    def _standardize_inputs(self, inputs):
        """The model's input values, in the order of ``model.inputs``."""
        expected = self._graph_inputs
        if isinstance(inputs, dict):
            keys = list(self._inputs_struct) if isinstance(self._inputs_struct, dict) else self.input_names
            missing = [k for k in keys if k not in inputs]
            if missing:
                raise ValueError(f"Model '{self.name}' expects inputs {keys}, but the dict it received has keys "
                                 f"{sorted(inputs)} (missing {missing})")
            if isinstance(self._inputs_struct, dict):
                by_tensor = {id(self._inputs_struct[k]): inputs[k] for k in keys}
                values = [by_tensor[id(t)] for t in expected]
            else:
                values = [inputs[k] for k in keys]
        elif isinstance(inputs, (list, tuple)):
            values = list(inputs)
        else:
            values = [inputs]
        if len(values) != len(expected):
            raise ValueError(f"Model '{self.name}' expects {len(expected)} input(s) {self.input_names}, but it "
                             f"received {len(values)} input tensors")
        for tensor, value in zip(expected, values):
            shape = tuple(getattr(value, "shape", ()))
            if len(shape) != len(tensor.shape) or any(
                    e is not None and e != n for e, n in zip(tensor.shape[1:], shape[1:])):
                raise ValueError(f"Input '{tensor.node.operation.name}' of model '{self.name}' expects shape "
                                 f"{tensor.shape}, received a value of shape {shape}")
        return values


def _shapes(structure):
    if is_symbolic(structure):
        return structure.shape
    shapes = map_symbolic(lambda t: t.shape, structure)
    if isinstance(shapes, list) and len(shapes) == 1:
        return shapes[0]
    return shapes
