"""``keras.ops`` calls on symbolic tensors in a functional model's config, as Keras 3 writes them.

Keras 3 saves an op node as a layer entry named by the op's Operation class::

    {"module": "keras.src.ops.numpy", "class_name": "Sum", "registered_name": "Sum",
     "config": {"name": "sum", "axis": -1, "keepdims": true},
     "inbound_nodes": [{"args": [<tensor>], "kwargs": {}}]}

the class's constructor arguments in ``config`` and its call arguments in the node
(``op_classes.OP_CLASSES`` lists both for every op). ``node_config`` writes that entry for
one call; ``register(functions)`` makes each class loadable (``saving.registry``): its
``from_config`` returns an ``OpNode`` that calls the minikeras function again.
"""
import inspect
import types

import jax
import numpy as np

from minikeras.keras.ops.op_classes import OP_CLASSES
from minikeras.saving.registry import register_builtin_namespace
from minikeras.tensor import Tensor

_NUMPY = "__numpy__"


def _constants_out(value):
    """Array arguments as Keras 3 writes them: ``{"class_name": "__numpy__", "config": {"value", "dtype"}}``."""
    if isinstance(value, (np.ndarray, jax.Array, Tensor)) and np.ndim(value) > 0:
        array = np.asarray(value)
        return {"class_name": _NUMPY, "config": {"value": array.tolist(), "dtype": array.dtype.name}}
    if isinstance(value, (list, tuple)):
        return type(value)(_constants_out(v) for v in value)
    if isinstance(value, dict):
        return {k: _constants_out(v) for k, v in value.items()}
    return value


def _constants_in(value):
    if isinstance(value, dict) and value.get("class_name") == _NUMPY:
        return np.asarray(value["config"]["value"], dtype=value["config"]["dtype"])
    if isinstance(value, list):
        return [_constants_in(v) for v in value]
    if isinstance(value, dict):
        return {k: _constants_in(v) for k, v in value.items()}
    return value

_MODULE = "keras.src.ops."


def _jsonable(value):
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if hasattr(value, "item") and getattr(value, "shape", None) == ():
        return value.item()
    return value


def node_config(op_name, node_name, fn, args, kwargs):
    """``(spec, call_args)``: the layer entry (without ``inbound_nodes``) and the node's
    positional arguments for the call ``fn(*args, **kwargs)`` of the keras.ops function
    ``op_name``. Raises ValueError when Keras 3 has no Operation class for it."""
    if op_name not in OP_CLASSES:
        raise ValueError(f"keras.ops.{op_name} on symbolic tensors has no Keras 3 Operation class to save it as; "
                         "wrap it in a layer (mk.layers.Lambda) to save the model")
    group, class_name, init_params, call_params = OP_CLASSES[op_name]
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    values = dict(bound.arguments)
    extra = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            extra = list(values.pop(p.name, ()))
        elif p.kind == p.VAR_KEYWORD:
            values.pop(p.name, None)
    unknown = [p for p in init_params + call_params if p not in values]
    if unknown:
        raise ValueError(f"keras.ops.{op_name}: cannot save its call in Keras 3's layout (arguments {unknown} of "
                         f"Keras's {class_name} are not arguments here)")
    config = {"name": node_name, **{p: _jsonable(values[p]) for p in init_params}}
    spec = {"module": _MODULE + group, "class_name": class_name, "config": config, "registered_name": class_name}
    return spec, _constants_out([values[p] for p in call_params] + extra)


class OpNode:
    """A loaded op node: called with the node's arguments, it calls the keras.ops function."""

    function = None
    call_params = ()

    def __init__(self, name, params):
        self.name = name
        self.params = params

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(config.pop("name", cls.__name__.lower()), config)

    def get_config(self):
        return {"name": self.name, **self.params}

    def __call__(self, *args, **kwargs):
        args, kwargs = _constants_in(list(args)), _constants_in(kwargs)
        named = dict(self.params)
        named.update(zip(self.call_params, args))
        extra = list(args[len(self.call_params):])
        signature = inspect.signature(self.function).parameters.values()
        if not any(p.kind == p.VAR_POSITIONAL for p in signature):
            return self.function(**named, **kwargs)
        positional = []
        for p in signature:
            if p.kind == p.VAR_POSITIONAL:
                positional.extend(extra)
                break
            positional.append(named.pop(p.name))
        return self.function(*positional, **named, **kwargs)


def register(functions):
    """Makes every Keras Operation class of ``OP_CLASSES`` whose function is in ``functions``
    (``{name: keras.ops function}``) loadable from a ``.keras`` config."""
    namespace = types.SimpleNamespace()
    for op_name, (_, class_name, _, call_params) in OP_CLASSES.items():
        fn = functions.get(op_name)
        if fn is not None:
            setattr(namespace, class_name, type(class_name, (OpNode,), {
                "function": staticmethod(fn), "call_params": tuple(call_params), "__module__": __name__}))
    # the loader reads Keras's "keras.src.ops.<group>" as "minikeras.ops" (saving.keras_config)
    register_builtin_namespace("minikeras.ops", namespace)
