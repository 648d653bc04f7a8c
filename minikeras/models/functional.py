"""What makes ``mk.Model(inputs, outputs)`` a model: the graph between symbolic tensors.

``FunctionalGraph`` is mixed into ``Model`` by ``model.Functional``. Its ``call`` replays the
graph's nodes (``models.graph``) on real Tensors in order: plain layer and op calls, so that
``mk.function`` traces the whole model once into one program, as it does a ``Sequential``.
"""
import jax
import numpy as np

from minikeras.layers.base import Layer
from minikeras.layers.mask_flow import get_mask, set_mask
from minikeras.models.functional_host import StringInputError, host_value, run_host_nodes, split_host_prefix
from minikeras.models.graph import describe_value, input_tensors_of, map_graph
from minikeras.ops.array import expand_dims, squeeze
from minikeras.ops.math import cast
from minikeras.string_tensor import is_string_value
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
                             "_inputs_struct", "_outputs_struct", "_host_split"})

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
        self._host_split = split_host_prefix(self._graph_inputs, self._graph_nodes, self._graph_outputs)
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

    @property
    def graph_nodes(self):
        """The graph's nodes (its layer and op calls), in the order ``call`` runs them."""
        return list(self._graph_nodes)

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
        return self._run_nodes(self._graph_nodes, values)

    def _run_nodes(self, nodes, values):
        """Runs ``nodes`` in order from ``values`` (``{id(KerasTensor): value}``, filled in as they
        run); the model's outputs (one output given as a one-element list comes back alone, as Keras
        3's ``unpack_singleton``)."""
        for node in nodes:
            out = node.run(lambda t: values[id(t)])
            results = jax.tree_util.tree_leaves(out, is_leaf=lambda v: isinstance(v, (Tensor, Variable)))
            for tensor, value in zip(node.output_tensors, results):
                values[id(tensor)] = value
        outputs = map_symbolic(lambda t: values[id(t)], self._outputs_struct)
        return outputs[0] if isinstance(outputs, (list, tuple)) and len(outputs) == 1 else outputs

    # -- leading host layers (string preprocessing) ------------------------------------------
    @property
    def has_host_layers(self):
        """Whether layers that run on the host (string preprocessing) read the model's Inputs."""
        return self._host_split is not None

    def apply_host_layers(self, inputs):
        """The values the compiled steps of fit/evaluate/predict start from: ``inputs`` (arrays,
        lists of ``str``, Tensors, as ``model(inputs)`` takes them) through the leading host
        layers, run eagerly on the host; one NumPy array, or a tuple of them in the order of the
        tensors the compiled part reads. ``inputs`` unchanged for a model without host layers."""
        split = self._host_split
        if split is None:
            self._refuse_strings(inputs)
            return inputs
        values = [host_value(value, tensor) for value, tensor in zip(self._input_values(inputs), self._graph_inputs)]
        self._check_input_values(values)
        boundary = run_host_nodes(split, self._graph_inputs, values)
        return boundary[0] if len(boundary) == 1 else tuple(boundary)

    def compiled_part_layers(self):
        """The layers of the graph's compiled part (after its host layers), in the graph's order."""
        split = self._host_split
        used = {id(node.operation) for node in ([] if split is None else split.compiled_nodes)}
        return [layer for layer in self._graph_layers if id(layer) in used]

    def run_compiled_part(self, inputs):
        """The outputs for ``inputs``, the values ``apply_host_layers`` made (the graph's compiled
        part, run from the tensors its host part makes)."""
        split = self._host_split
        values = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if len(values) != len(split.boundary):
            raise ValueError(f"Model '{self.name}': its compiled part expects {len(split.boundary)} values (what "
                             f"its host layers make), received {len(values)}")
        known = {}
        for tensor, value in zip(split.boundary, values):
            if isinstance(value, Tensor) and value.dtype != tensor.dtype and value.dtype != object:
                value = cast(value, tensor.dtype)
            known[id(tensor)] = value
        return self._run_nodes(split.compiled_nodes, known)

    # -- inputs ------------------------------------------------------------------------------
    def _input_values(self, inputs):
        """``inputs`` as a list in the order of ``model.inputs`` (a dict by Input names or keys; a
        nested structure, ``{"foo": x, "bar": {"baz": y}}``, laid out as ``model.input``)."""
        expected = self._graph_inputs
        if _is_nested(self._inputs_struct):
            by_tensor = _values_by_tensor(self._inputs_struct, inputs, f"Model '{self.name}'")
            return [by_tensor[id(t)] for t in expected]
        if isinstance(inputs, dict):
            keys = list(self._inputs_struct) if isinstance(self._inputs_struct, dict) else self.input_names
            missing = [k for k in keys if k not in inputs]
            if missing:
                raise ValueError(f"Model '{self.name}' expects inputs {keys}, but the dict it received has keys "
                                 f"{sorted(inputs)} (missing {missing})")
            if isinstance(self._inputs_struct, dict):
                by_tensor = {id(self._inputs_struct[k]): inputs[k] for k in keys}
                return [by_tensor[id(t)] for t in expected]
            return [inputs[k] for k in keys]
        if isinstance(inputs, (list, tuple)) and not (len(expected) == 1 and is_string_value(inputs)):
            values = list(inputs)
        else:
            values = [inputs]
        if len(values) != len(expected):
            raise ValueError(f"Model '{self.name}' expects {len(expected)} input(s) {self.input_names}, but it "
                             f"received {len(values)} input tensors")
        return values

    def _refuse_strings(self, inputs):
        """Strings given to a numeric Input raise ``StringInputError`` (other mismatches are left
        to the steps' own checks)."""
        if isinstance(inputs, (dict, list, tuple)) or is_string_value(inputs) or hasattr(inputs, "dtype"):
            try:
                values = self._input_values(inputs)
            except ValueError:
                return
            for tensor, value in zip(self._graph_inputs, values):
                self._check_not_strings(tensor, value)

    def _check_not_strings(self, tensor, value):
        kind = getattr(getattr(value, "dtype", None), "kind", None)  # None: a Python list or number
        if tensor.dtype != object and (kind in ("O", "U", "S") or is_string_value(value)):
            shape = tuple(np.shape(value)) if not hasattr(value, "shape") else tuple(value.shape)
            raise StringInputError(f"Input '{tensor.node.operation.name}' of model '{self.name}' expects "
                                   f"{tensor.dtype.name} values of shape {tensor.shape}, received strings of "
                                   f"shape {shape}: strings go to an Input of dtype 'string' "
                                   "(mk.Input(shape=(1,), dtype='string')) followed by string preprocessing "
                                   "layers (TextVectorization, StringLookup, Hashing)")

    def _check_input_values(self, values):
        for tensor, value in zip(self._graph_inputs, values):
            self._check_not_strings(tensor, value)
            shape = tuple(getattr(value, "shape", ()))
            if len(shape) != len(tensor.shape) or any(
                    e is not None and e != n for e, n in zip(tensor.shape[1:], shape[1:])):
                raise ValueError(f"Input '{tensor.node.operation.name}' of model '{self.name}' expects shape "
                                 f"{tensor.shape}, received a value of shape {shape}")

    def _standardize_inputs(self, inputs):
        """The model's input values, in the order of ``model.inputs``, a trailing axis of size 1
        added or dropped as Keras 3 does; shapes checked."""
        values = [adjust_input_rank(value, tensor)
                  for value, tensor in zip(self._input_values(inputs), self._graph_inputs)]
        self._check_input_values(values)
        return values


def adjust_input_rank(value, tensor):
    """``value`` with a trailing axis of size 1 added or dropped where the Input ``tensor`` has
    one rank more (and that axis) or one rank less, as Keras 3's functional models do."""
    shape = getattr(value, "shape", None)
    if shape is None:
        return value
    if len(shape) == len(tensor.shape) + 1 and shape[-1] == 1:
        return squeeze(value, axis=-1)
    if len(shape) == len(tensor.shape) - 1 and tensor.shape[-1] == 1:
        return expand_dims(value, axis=-1)
    return value


def _shapes(structure):
    if is_symbolic(structure):
        return structure.shape
    shapes = map_symbolic(lambda t: t.shape, structure)
    if isinstance(shapes, list) and len(shapes) == 1:
        return shapes[0]
    return shapes


def _is_nested(structure):
    """Whether ``structure`` (a model's inputs) has a list or dict inside a list or dict."""
    items = structure.values() if isinstance(structure, dict) else structure
    return isinstance(structure, (list, tuple, dict)) and any(isinstance(v, (list, tuple, dict)) for v in items)


def _values_by_tensor(structure, values, where):
    """``{id(KerasTensor): value}``: ``values`` taken apart as ``structure`` (KerasTensors in
    nested lists and dicts) is; a ValueError names the first place where they differ."""
    found = {}

    def walk(spec, value, path):
        at = "".join(f"[{k!r}]" for k in path) or "the inputs"
        if isinstance(spec, dict):
            if not isinstance(value, dict) or any(k not in value for k in spec):
                keys = sorted(value) if isinstance(value, dict) else type(value).__name__
                raise ValueError(f"{where} expects a dict with keys {list(spec)} at {at}, received {keys}")
            for key in spec:
                walk(spec[key], value[key], path + (key,))
        elif isinstance(spec, (list, tuple)):
            if not isinstance(value, (list, tuple)) or len(value) != len(spec):
                received = f"{len(value)} entries" if isinstance(value, (list, tuple)) else type(value).__name__
                raise ValueError(f"{where} expects a list of {len(spec)} entries at {at}, received {received}")
            for i, (inner, item) in enumerate(zip(spec, value)):
                walk(inner, item, path + (i,))
        else:
            found[id(spec)] = value

    walk(structure, values, ())
    return found
