"""A functional model's config in Keras 3's layout, and the model rebuilt from it.

    {"name": ..., "trainable": ...,
     "layers": [{"module", "class_name", "config", "registered_name", "name",
                 "inbound_nodes": [{"args": [...], "kwargs": {...}}, ...]}, ...],
     "input_layers": [[layer name, node index, tensor index], ...], "output_layers": [...]}

A symbolic tensor among a node's arguments is
``{"class_name": "__keras_tensor__", "config": {"shape", "dtype", "keras_history": [layer name,
node index, tensor index]}}``; node indices count the layer's calls that belong to this model.
"""
import jax

from minikeras.dtypes import dtype_name
from minikeras.layers.base import Layer
from minikeras.layers.core.input_layer import InputLayer
from minikeras.saving.registry import deserialize_keras_object, serialize_keras_object
from minikeras.symbolic import is_symbolic, map_symbolic

_TENSOR = "__keras_tensor__"


def functional_config(model):
    """``get_config()`` of a functional model (see the module docstring)."""
    nodes = {id(n) for n in model._graph_nodes}
    nodes.update(id(t.node) for t in model._graph_inputs)
    own = {id(layer): [n for n in layer._inbound_nodes() if id(n) in nodes] for layer in model.layers}
    for node in model._graph_nodes:  # keras.ops calls and keras.Operation subclasses, in graph order
        if not isinstance(node.operation, Layer):
            own.setdefault(id(node.operation), []).append(node)
    for op in model.operations:
        if not hasattr(getattr(op, "op", None), "node_config") and not hasattr(op, "get_config"):
            raise ValueError(f"Model '{model.name}' cannot be described by a config: it applies the op "
                             f"'{op.name}' to symbolic tensors directly; wrap it in a layer (mk.layers.Lambda, "
                             "or a merge layer such as mk.layers.Add), or use the keras.ops function, to save "
                             "the model")

    def history(tensor):
        node, index = tensor._keras_history
        return [node.operation.name, own[id(node.operation)].index(node), index]

    def describe(tensor):
        return {"class_name": _TENSOR, "config": {"shape": list(tensor.shape), "dtype": dtype_name(tensor.dtype),
                                                  "keras_history": history(tensor)}}
    layers = []
    for op in model.operations:
        if hasattr(getattr(op, "op", None), "node_config"):  # a keras.ops call: its entry (keras.ops.op_nodes)
            node, = own[id(op)]
            spec, args = op.op.node_config(op.name, *node.args)
            spec["name"] = op.name
            spec["inbound_nodes"] = [{"args": _plain(map_symbolic(describe, args)), "kwargs": {}}]
            layers.append(spec)
            continue
        spec = serialize_keras_object(op)
        spec["name"] = op.name
        spec["inbound_nodes"] = [{"args": _plain(map_symbolic(describe, list(n.args))),
                                  "kwargs": _plain(map_symbolic(describe, n.kwargs))}
                                 for n in own[id(op)] if not n.is_input]
        layers.append(spec)

    def ends(structure):
        if is_symbolic(structure):
            return [history(structure)]
        return map_symbolic(history, structure)
    return {"name": model.name, "trainable": model.trainable, "layers": layers,
            "input_layers": ends(model._inputs_struct), "output_layers": ends(model._outputs_struct)}


def _plain(structure):
    """Tuples as lists (JSON's arrays)."""
    if isinstance(structure, (list, tuple)):
        return [_plain(x) for x in structure]
    if isinstance(structure, dict):
        return {k: _plain(v) for k, v in structure.items()}
    return structure


def functional_from_config(config, custom_objects=None):
    """``(inputs, outputs, name)`` of the model ``config`` describes: its layers made from their
    configs and called again as the config's nodes say."""
    made, pending = {}, []
    for spec in _without_mask_ops(config["layers"], _leaf_names(config["output_layers"])):
        layer_spec = {k: v for k, v in spec.items() if k not in ("name", "inbound_nodes")}
        layer = deserialize_keras_object(layer_spec, custom_objects, what="layer")
        made[spec["name"]] = layer
        pending.extend((layer, i, node) for i, node in enumerate(spec.get("inbound_nodes") or []))
    outputs_of = {(name, 0): [layer.output] for name, layer in made.items() if isinstance(layer, InputLayer)}

    def ready(value):
        return not (isinstance(value, dict) and value.get("class_name") == _TENSOR) or \
            tuple(value["config"]["keras_history"][:2]) in outputs_of

    def tensor(value):
        if isinstance(value, dict) and value.get("class_name") == _TENSOR:
            name, node_index, index = value["config"]["keras_history"]
            return outputs_of[(name, node_index)][index]
        if isinstance(value, dict):
            return {k: tensor(v) for k, v in value.items()}
        if isinstance(value, list):
            return [tensor(v) for v in value]
        return value

    while pending:
        progress = False
        for item in list(pending):
            layer, index, node = item
            if not all(ready(v) for v in _leaves(node)):
                continue
            args = tensor(node.get("args", []))
            out = layer(*args, **tensor(node.get("kwargs", {})))
            outputs_of[(layer.name, index)] = [t for t in jax.tree_util.tree_leaves(out, is_leaf=is_symbolic)]
            pending.remove(item)
            progress = True
        if not progress:
            raise ValueError(f"Functional config of '{config.get('name')}': the nodes of layers "
                             f"{sorted({layer.name for layer, _, _ in pending})} refer to tensors no layer makes")

    def ends(structure, top=True):  # triples in lists and dicts, nested as the model's inputs are
        if isinstance(structure, dict):
            return {k: ends(v, top=False) for k, v in structure.items()}
        if structure and isinstance(structure[0], str):  # one tensor: Keras 3 writes its triple unnested
            return outputs_of[tuple(structure[:2])][structure[2]]
        found = [ends(v, top=False) for v in structure]
        return found[0] if top and len(found) == 1 else found
    return ends(config["input_layers"]), ends(config["output_layers"]), config.get("name")


def _leaves(node):
    found = []

    def walk(value):
        if isinstance(value, dict) and value.get("class_name") == _TENSOR:
            found.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
    walk(node)
    return found


def _leaf_names(structure):
    """The layer names of a config's ``input_layers``/``output_layers`` (triples, or a structure of them)."""
    if isinstance(structure, dict):
        return {name for v in structure.values() for name in _leaf_names(v)}
    if isinstance(structure, list) and structure and isinstance(structure[0], str):
        return {structure[0]}
    return {name for v in structure or [] for name in _leaf_names(v)}


def _without_mask_ops(specs, output_names=()):
    """Keras 3 records the ops that compute masks (``NotEqual`` of an ``Embedding(mask_zero=True)``)
    as graph layers and passes their outputs as ``mask=`` / ``<arg>_mask=`` arguments. Here masks
    ride on the tensors and each layer computes its own, so those ops and arguments are dropped:
    the op layers whose outputs feed only mask arguments, and the mask arguments they feed."""
    op_modules = ("keras.src.ops", "keras.ops", "minikeras.ops")
    ops = {s["name"] for s in specs if str(s.get("module", "")).startswith(op_modules)}
    if not ops:
        return specs
    other_uses = set(output_names)  # an op computing a model output is no mask op

    def walk(value, in_mask):
        if isinstance(value, dict) and value.get("class_name") == _TENSOR:
            if not in_mask:
                other_uses.add(value["config"]["keras_history"][0])
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, in_mask)
        elif isinstance(value, list):
            for v in value:
                walk(v, in_mask)
    for spec in specs:
        for node in spec.get("inbound_nodes") or []:
            walk(node.get("args", []), False)
            for k, v in (node.get("kwargs") or {}).items():
                walk(v, k == "mask" or k.endswith("_mask"))
    dropped = ops - other_uses

    def feeds_dropped(value):
        return bool(_leaves({"v": value})) and all(t["config"]["keras_history"][0] in dropped
                                                   for t in _leaves({"v": value}))
    kept = []
    for spec in specs:
        if spec["name"] in dropped:
            continue
        nodes = [{**node, "kwargs": {k: v for k, v in (node.get("kwargs") or {}).items()
                                     if not ((k == "mask" or k.endswith("_mask")) and feeds_dropped(v))}}
                 for node in spec.get("inbound_nodes") or []]
        kept.append({**spec, "inbound_nodes": nodes})
    return kept
