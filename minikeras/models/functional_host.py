"""The host part of a functional model: its leading string preprocessing layers.

Strings cannot enter a compiled program. In a functional model whose Inputs feed layers that
compute on the host (``runs_on_host``: ``TextVectorization``, ``StringLookup``, ``Hashing``...),
``split_host_prefix`` finds those layers' nodes - each one reads only Inputs or the outputs of
such nodes - and the tensors the rest of the graph reads from them (the "boundary"). fit,
evaluate and predict run the host nodes on the host (``run_host_nodes``), and their compiled
steps start from the boundary values (``FunctionalGraph.call`` while the host prefix is
applied, ``minikeras.trainers.host_prefix``).
"""
import numpy as np

from minikeras.layers.preprocessing.host_layer import host_array
from minikeras.string_tensor import is_string_value


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


def split_host_prefix(inputs, nodes, outputs):
    """The ``HostSplit`` of a graph (its Input tensors, nodes in order, output tensors), or
    None when no node runs on the host."""
    available = {id(t) for t in inputs}
    host, compiled = [], []
    for node in nodes:
        if getattr(node.operation, "runs_on_host", False) and all(id(t) in available for t in node.input_tensors):
            host.append(node)
            available.update(id(t) for t in node.output_tensors)
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
