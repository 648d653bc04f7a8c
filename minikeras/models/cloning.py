"""``keras.models.clone_model``: a model of the same architecture with new layers (new weights).

    clone = keras.models.clone_model(model)                          # fresh weights
    clone.set_weights(model.get_weights())                           # ... or the same ones
    quantized = keras.models.clone_model(model, clone_function=lambda layer: ...)

Keras 3's rules: a Sequential is rebuilt from its layers' clones, a functional model by
replaying its graph on new inputs with each layer's clone (``call_function(operation, *args,
**kwargs)`` makes the calls of layers and ops, when given; ops on KerasTensors are stateless and
reused, not cloned), a subclassed model from its config. A layer
met twice (a shared layer) is cloned once; ``recursive=True`` clones nested Sequential and
functional models layer by layer instead of through ``clone_function``. A compiled model's
clone is compiled with the same settings.
"""
import jax

from minikeras.layers.base import Layer
from minikeras.layers.core.input_layer import Input
from minikeras.models.model import Functional
from minikeras.models.sequential import Sequential
from minikeras.saving.model_file import compile_config, compile_from_config
from minikeras.saving.registry import deserialize_keras_object, serialize_keras_object
from minikeras.symbolic import KerasTensor, flatten, is_symbolic, map_symbolic


def clone_model(model, input_tensors=None, clone_function=None, call_function=None, recursive=False, **kwargs):
    """A copy of ``model`` with new layers: the same architecture, new weights.

    Args:
      model: a Sequential, functional or subclassed (registered, with ``get_config``) model.
      input_tensors: KerasTensors (from ``keras.Input``) for the clone's inputs, in the structure
        of ``model.input``; default: new ones like the model's.
      clone_function: ``fn(layer) -> layer`` for each layer (default: a new layer from its
        config); return the layer itself to share it.
      call_function: ``fn(layer, *args, **kwargs)`` that calls each cloned layer while a
        functional model's graph is rebuilt (to wrap or replace calls).
      recursive: clone the layers of nested Sequential and functional models one by one.

    Raises:
      ValueError: as Keras 3 for arguments the model's kind does not take, unexpected keywords,
        and input tensors that are not KerasTensors.
    """
    cache = kwargs.pop("cache", None)
    if kwargs:
        raise ValueError(f"Unexpected keyword argument(s): {tuple(kwargs.keys())}")
    if isinstance(model, Sequential):
        if call_function is not None:
            raise ValueError(
                "`call_function` argument is not supported with Sequential models.  In a Sequential model, layers "
                "aren't called at model-construction time (they're merely listed). Use `call_function` with "
                f"Functional models only. Received model of type '{type(model).__name__}', with "
                f"call_function={call_function}")
        clone = _clone_sequential(model, _wrapped(clone_function, None, recursive, cache), input_tensors)
    elif isinstance(model, Functional):
        clone = _clone_functional(model, _wrapped(clone_function, call_function, recursive, cache), input_tensors,
                                  call_function)
    else:
        if clone_function or input_tensors:
            raise ValueError(
                "Arguments `clone_function` and `input_tensors` are only supported for Sequential models or "
                f"Functional models. Received model of type '{type(model).__name__}', with "
                f"clone_function={clone_function} and input_tensors={input_tensors}")
        if call_function is not None:
            raise ValueError("Argument `call_function` is only supported for Functional models. Received model of "
                             f"type '{type(model).__name__}', with call_function={call_function}")
        return deserialize_keras_object(serialize_keras_object(model),
                                        custom_objects={type(model).__name__: type(model)})
    settings = compile_config(model)
    if settings is not None:
        compile_from_config(clone, settings, None)
    return clone


def _call(operation, *args, **kwargs):
    return operation(*args, **kwargs)


def _clone_layer(layer):
    return type(layer).from_config(layer.get_config())


def _wrapped(clone_function, call_function, recursive, cache):
    """``clone_function`` (default ``_clone_layer``) called once per layer, nested models cloned
    whole when ``recursive``."""
    clone_function = clone_function or _clone_layer
    cache = {} if cache is None else cache

    def clone(layer):
        if id(layer) not in cache:
            if recursive and isinstance(layer, (Sequential, Functional)):
                cache[id(layer)] = clone_model(layer, clone_function=clone_function, recursive=True, cache=cache,
                                               call_function=None if isinstance(layer, Sequential) else call_function)
            else:
                cache[id(layer)] = clone_function(layer)
        return cache[id(layer)]

    return clone


def _clone_sequential(model, clone, input_tensors):
    layers = [clone(layer) for layer in model.layers]
    if input_tensors is not None:
        if isinstance(input_tensors, (list, tuple)):
            if len(input_tensors) != 1:
                raise ValueError("Argument `input_tensors` must contain a single tensor.")
            input_tensors = input_tensors[0]
        if not isinstance(input_tensors, KerasTensor):
            raise ValueError(f"Argument `input_tensors` must be a KerasTensor. Received invalid value: "
                             f"input_tensors={input_tensors}")
        layers = [input_tensors] + layers
    elif model.built:
        (original,) = model.inputs
        layers = [Input(batch_shape=original.shape, dtype=original.dtype, name=original.name)] + layers
    return Sequential(layers, name=model.name, trainable=model.trainable)


def _clone_functional(model, clone, input_tensors, call_function):
    if input_tensors is not None:
        if not all(isinstance(t, KerasTensor) for t in jax.tree_util.tree_leaves(input_tensors, is_leaf=is_symbolic)):
            raise ValueError(f"All entries in `input_tensors` must be KerasTensors. Received invalid values: "
                             f"inputs_tensors={input_tensors}")
        if jax.tree_util.tree_structure(input_tensors, is_leaf=is_symbolic) != \
                jax.tree_util.tree_structure(model.input, is_leaf=is_symbolic):
            raise ValueError(f"`input_tensors` must have the same structure as model.input\nReference structure: "
                             f"{model.input}\nReceived structure: {input_tensors}")
    else:
        input_tensors = map_symbolic(lambda t: Input(batch_shape=t.shape, dtype=t.dtype, name=t.name), model.input)
    _build_in_weight_order(model, clone)
    values = {id(old): new for old, new in zip(model.inputs, flatten(input_tensors))}
    for node in model.graph_nodes:
        operation = node.operation
        if isinstance(operation, Layer):
            operation = clone(operation)
        args = map_symbolic(lambda t: values[id(t)], node.args)
        kwargs = map_symbolic(lambda t: values[id(t)], node.kwargs)
        outputs = (call_function or _call)(operation, *args, **kwargs)
        for tensor, value in zip(node.output_tensors, flatten(outputs)):
            values[id(tensor)] = value
    outputs = map_symbolic(lambda t: values[id(t)], model.output)
    return Functional(input_tensors, outputs, name=model.name)


def _build_in_weight_order(model, clone):
    """Builds the clones of the layers that own weights in the order the model's weights were
    made, each on new inputs shaped as its first call's, so that the clone's weights come in the
    model's order (``clone.set_weights(model.get_weights())``) even where the layers were made in
    another order than the graph calls them."""
    position = {id(v): i for i, v in enumerate(model.weights)}
    owners = sorted((min(position[id(v)] for v in layer.weights), i, layer)
                    for i, layer in enumerate(model.layers) if layer.weights)
    placeholder = lambda t: Input(batch_shape=t.shape, dtype=t.dtype)  # noqa: E731
    for _, _, layer in owners:
        cloned = clone(layer)
        if not cloned.built:
            node = model.nodes_of(layer)[0]
            cloned(*map_symbolic(placeholder, node.args), **map_symbolic(placeholder, node.kwargs))
