"""The host part of a functional model: its leading string preprocessing layers.

Strings cannot enter a compiled program. In a functional model whose Inputs feed layers that
compute on the host (``runs_on_host``: ``TextVectorization``, ``StringLookup``, ``Hashing``...),
``split_host_prefix`` finds those layers' nodes - each one reads only Inputs or the outputs of
such nodes, or is a weightless step (a ``Discretization``) that feeds such a layer - and the
tensors the rest of the graph reads from them (the "boundary"). A call of
a model that has host layers of its own in front (a ``Sequential`` starting with
``IntegerLookup``) on such tensors is cut in two steps: its ``host_split()``'s ``host_fn`` on
the host, its device part in the compiled part. fit, evaluate and predict run the host steps on
the host (``run_host_nodes``, through ``Functional.host_split``), and their compiled steps
start from the boundary values (``FunctionalGraph.run_compiled_part``).
"""
import numpy as np

from minikeras.layers.preprocessing.host_layer import host_array
from minikeras.string_tensor import is_string_value
from minikeras.symbolic import KerasTensor
from minikeras.trainers.trainer import Trainer


class StringInputError(ValueError, TypeError):
    """Strings given to a numeric Input of a functional model: a ValueError, as Keras 3 raises
    for them, and a TypeError, as minikeras's layers and data checks raise for strings where
    numbers go."""


class HostSplit:
    """A functional graph cut after its leading host layers.

    Attributes:
      host_nodes: the nodes that run on the host, in the graph's order.
      compiled_nodes: the other nodes, in order (the compiled part).
      boundary: the KerasTensors the compiled part (or the outputs) reads from the Inputs and
        the host nodes, in order: Inputs first, then the host nodes' outputs.
    """

    def __init__(self, host_nodes, compiled_nodes, boundary):
        self.host_nodes = host_nodes
        self.compiled_nodes = compiled_nodes
        self.boundary = boundary


class SplitStep:
    """One half of a graph node whose operation is a model with host layers in front: the
    host half (``host_fn``) or the compiled half (the model's device part). Runs as a graph
    Node runs (``run(value_of)``), from one input tensor.

    Attributes:
      operation: the model the node calls (its layers count in the compiled part).
      input_tensors, output_tensors: what the half reads and makes (the host half makes a
        tensor of its own, the value the device part starts from).
    """

    def __init__(self, operation, fn, input_tensor, outputs):
        self.operation = operation
        self.fn = fn
        self.input_tensors = [input_tensor]
        self.outputs = outputs
        self.output_tensors = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]

    def run(self, value_of):
        return self.fn(value_of(self.input_tensors[0]))


def _split_model_node(node):
    """``(host_step, compiled_step)`` for a node calling a model whose own leading layers run
    on the host, on one tensor with no other arguments than ``training``; None for any other node."""
    model = node.operation
    if not isinstance(model, Trainer) or len(node.input_tensors) != 1 or set(node.kwargs) - {"training"}:
        return None
    host_fn, device = model.host_split()
    if host_fn is None:
        return None
    made = KerasTensor(device.part_input_shape, device.part_input_dtype)
    return (SplitStep(model, host_fn, node.input_tensors[0], made),
            SplitStep(model, lambda x: device(x, **node.kwargs), made, node.outputs))


def _feeds_host_layer(node, nodes):
    """Whether ``node`` is a step without trainable weights (a ``Discretization``, a cast) whose
    output a host layer reads: it runs on the host too, so that the host layer can (a
    FeatureSpace's cross of a discretized float with a string)."""
    if list(getattr(node.operation, "trainable_weights", ())):
        return False
    made = {id(t) for t in node.output_tensors}
    return any(getattr(other.operation, "runs_on_host", False) and any(id(t) in made for t in other.input_tensors)
               for other in nodes)


def split_host_prefix(inputs, nodes, outputs):
    """The ``HostSplit`` of a graph (its Input tensors, nodes in order, output tensors), or
    None when no node runs on the host."""
    available = {id(t) for t in inputs}
    host, compiled = [], []
    for node in nodes:
        reads_host_values = all(id(t) in available for t in node.input_tensors)
        halves = _split_model_node(node) if reads_host_values else None
        if reads_host_values and (getattr(node.operation, "runs_on_host", False) or _feeds_host_layer(node, nodes)):
            host.append(node)
            available.update(id(t) for t in node.output_tensors)
        elif halves is not None:
            host.append(halves[0])
            available.add(id(halves[0].output_tensors[0]))
            compiled.append(halves[1])
        else:
            compiled.append(node)
    if not host:
        return None
    read = {id(t) for node in compiled for t in node.input_tensors} | {id(t) for t in outputs}
    candidates = list(inputs) + [t for node in host for t in node.output_tensors]
    boundary = [t for t in candidates if id(t) in read]
    return HostSplit(host, compiled, boundary)


def adjust_rank(value, tensor):
    """``value`` with a trailing axis of size 1 added or dropped where ``tensor`` (an Input's
    KerasTensor) has one rank more or less and that axis (as Keras 3's functional models do:
    ``["a", "b"]`` for ``Input(shape=(1,), dtype="string")``)."""
    rank, expected = np.ndim(value), len(tensor.shape)
    if rank == expected + 1 and np.shape(value)[-1] == 1:
        return np.squeeze(value, axis=-1)
    if rank == expected - 1 and tensor.shape[-1] == 1:
        return np.expand_dims(value, axis=-1)
    return value


def host_value(value, tensor):
    """A raw input for a host layer as NumPy (a list of strings is one array), its rank adjusted
    to the Input's; a numeric value that goes straight to the compiled part is left as it is."""
    if isinstance(value, (list, tuple)) or is_string_value(value) or hasattr(value, "numpy"):
        value = host_array(value)
    return adjust_rank(value, tensor) if hasattr(value, "shape") else value


def run_host_nodes(split, inputs, values):
    """The boundary values for ``values`` (one per Input tensor of ``inputs``): the host nodes
    run eagerly on them; NumPy arrays, in the order of ``split.boundary``."""
    known = {id(t): v for t, v in zip(inputs, values)}
    for node in split.host_nodes:
        out = node.run(lambda t: known[id(t)])
        results = out if isinstance(out, (list, tuple)) else [out]
        for tensor, value in zip(node.output_tensors, results):
            known[id(tensor)] = value
    return [_as_numpy(known[id(t)]) for t in split.boundary]


def _as_numpy(value):
    return value.numpy() if hasattr(value, "numpy") else value
