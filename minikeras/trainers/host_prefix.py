"""A model's leading host layers (string preprocessing: ``TextVectorization``, ``StringLookup``,
``Hashing``...): run on the host before the compiled steps of fit, evaluate and predict.

Strings cannot enter a compiled program, so for a Sequential whose first layers compute on the
host (``runs_on_host``), ``preprocess`` applies them to ``x`` first (an array at once; a
Dataset batch by batch, as a ``map`` after its batching), and the compiled step runs the rest:
while ``applied()`` is active, ``Sequential.call`` starts after those layers. This is the
tutorials' "export model": ``Sequential([vectorize_layer, model, Activation("sigmoid")])``
whose ``predict`` takes raw strings.

A functional model does the same with the host layers that read its Inputs (its
``apply_host_layers``, ``has_host_layers``): the compiled steps take the values those layers
make (``mk.Model(mk.Input(shape=(1,), dtype="string"), model(vectorize_layer(inputs)))``).
"""
import contextlib

import numpy as np

from minikeras import _context
from minikeras.data.dataset import Dataset
from minikeras.layers.preprocessing.host_layer import host_array
from minikeras.trainers.input_cast import cast_integer_inputs


def leading_host_layers(layers):
    """How many of ``layers`` (in order) compute on the host before the first compiled one."""
    count = 0
    for layer in layers:
        if not getattr(layer, "runs_on_host", False):
            break
        count += 1
    return count


def skipped(layers):
    """How many leading layers a model's call skips now (inside ``applied()``), 0 otherwise."""
    return leading_host_layers(layers) if _context.call_state.host_applied else 0


def is_applied_to(model):
    """Whether ``model``'s leading host layers are taken as applied now (its steps run)."""
    models = _context.call_state.host_applied
    return bool(models) and models[-1] is model


@contextlib.contextmanager
def applied(model=None):
    """While active, in this thread, a model's leading host layers are taken as already applied
    to its inputs (``model``: the model whose steps run; a functional model checks that it is
    the one). The one writer of ``_context.call_state.host_applied``."""
    models = _context.call_state.host_applied
    models.append(model)
    try:
        yield
    finally:
        models.pop()


def _prefix(model):
    layers = getattr(model, "_layers", None)
    if layers is None or type(model).__name__ != "Sequential":
        return []
    return layers[:leading_host_layers(layers)]


def _apply(prefix, x):
    for layer in prefix:
        x = layer(x)
    return x.numpy() if hasattr(x, "numpy") else x


def _raw_shape(x):
    if isinstance(x, Dataset):
        spec = x.element_spec
        spec = spec[0] if isinstance(spec, tuple) else spec
        return spec.shape
    return np.shape(host_array(x))


def model_inputs(model, x):
    """``x`` as the compiled steps of ``model`` take it: integer arrays cast to the dtypes of
    the Inputs they go to (``input_cast``) and the leading host layers applied."""
    if hasattr(model, "apply_host_layers"):  # functional: cast the raw inputs, then the host layers
        return _functional(model, cast_integer_inputs(model, x))
    return cast_integer_inputs(model, preprocess(model, x))


def _functional(model, x):
    if x is None:
        return x
    if isinstance(x, Dataset):
        if not model.has_host_layers:
            return x  # left as it is: its batches are the Dataset's business
        def element(*parts):
            if len(parts) == 1:
                return model.apply_host_layers(parts[0])
            return (model.apply_host_layers(parts[0]),) + tuple(parts[1:])
        return x.map(element)
    return model.apply_host_layers(x)


def preprocess(model, x):
    """``x`` with ``model``'s leading host layers applied (``x`` unchanged when it has none)."""
    prefix = _prefix(model)
    if not prefix or x is None:
        return x
    if not model.built:  # built for the raw inputs (strings), not for what the host layers make of them
        model.build((None,) + tuple(_raw_shape(x))[1:])
    if isinstance(x, Dataset):
        def element(*parts):
            if len(parts) == 1:
                return _apply(prefix, parts[0])
            return (_apply(prefix, parts[0]),) + tuple(parts[1:])
        return x.map(element)
    return _apply(prefix, x)
