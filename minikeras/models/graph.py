"""The graph of a functional model: the Nodes between its inputs and outputs, in order.

``map_graph`` follows Keras 3's ``map_graph``: a depth-first walk back from the outputs finds
the nodes; each node's depth is its longest distance to an output; nodes run deepest first, and
``operations`` (``model.layers`` with the ops) are ordered by depth, then by discovery.
"""
from minikeras.symbolic import flatten, is_symbolic


def map_graph(inputs, outputs):
    """``(nodes, operations)``: the nodes to run (inputs' own nodes left out), deepest first,
    and the operations of all the graph's nodes (Keras's ``model._operations``).

    Raises ValueError naming the output and the input it depends on when an output is not
    computed from ``inputs`` alone.
    """
    input_ids = {id(t) for t in inputs}
    found, order, operation_index = set(), [], {}

    def visit(tensor, output):
        node = tensor.node
        if node is None:
            raise ValueError(f"Model output '{output.name}' depends on {tensor!r}, which no layer or mk.Input "
                             "produced")
        if id(node) in found:
            return
        operation_index.setdefault(id(node.operation), (len(operation_index), node.operation))
        if id(tensor) not in input_ids:
            if node.is_input:
                raise ValueError(
                    f"Model output '{output.name}' is not connected to the model's inputs "
                    f"{[t.name for t in inputs]}: it is computed from input '{tensor.name}', which is not among them")
            for parent in node.input_tensors:
                visit(parent, output)
        found.add(id(node))
        order.append(node)

    for output in outputs:
        visit(output, output)
    node_depth, operation_depth = {}, {}
    for node in reversed(order):
        depth = max(node_depth.setdefault(id(node), 0), operation_depth.get(id(node.operation), 0))
        node_depth[id(node)] = operation_depth[id(node.operation)] = depth
        for parent in node.parent_nodes:
            node_depth[id(parent)] = max(depth + 1, node_depth.get(id(parent), 0))
    for tensor in inputs:  # an input may be used by no output: it still comes first
        node_depth.setdefault(id(tensor.node), 0)
        operation_depth.setdefault(id(tensor.node.operation), 0)
    for tensor in inputs:
        if id(tensor.node.operation) not in operation_index:
            operation_index[id(tensor.node.operation)] = (len(operation_index), tensor.node.operation)
    run = [node for node in sorted(order, key=lambda n: -node_depth[id(n)])
           if not (node.is_input or any(id(t) in input_ids for t in node.output_tensors))]
    operations = sorted(operation_index.values(), key=lambda item: (-operation_depth[id(item[1])], item[0]))
    return run, [operation for _, operation in operations]


def input_tensors_of(structure):
    """The KerasTensors of a model's ``inputs`` argument, checked: each must come from mk.Input
    (or another layer's output)."""
    tensors = flatten(structure)
    leaves = structure if isinstance(structure, (list, tuple)) else (
        list(structure.values()) if isinstance(structure, dict) else [structure])
    if len(tensors) != len(leaves) or not tensors:
        bad = next((leaf for leaf in leaves if not is_symbolic(leaf)), None)
        raise ValueError(f"mk.Model: all `inputs` must be symbolic tensors from mk.Input(...), received "
                         f"{describe_value(bad) if leaves else 'no inputs'}")
    return tensors


def describe_value(value):
    """``value`` named by its type (and shape), not its possibly huge repr."""
    shape = getattr(value, "shape", None)
    return f"a {type(value).__name__}" + (f" of shape {tuple(shape)}" if shape is not None else f" ({value!r})")
