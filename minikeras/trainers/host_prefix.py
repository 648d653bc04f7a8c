"""A model's leading host layers (string preprocessing: ``TextVectorization``, ``StringLookup``,
``Hashing``...): run on the host before the compiled steps of fit, evaluate and predict.

Strings cannot enter a compiled program, so for a Sequential whose first layers compute on the
host (``runs_on_host``), ``preprocess`` applies them to ``x`` first (an array at once; a
Dataset batch by batch, as a ``map`` after its batching), and the compiled step runs the rest:
while ``applied()`` is active, ``Sequential.call`` starts after those layers. This is the
tutorials' "export model": ``Sequential([vectorize_layer, model, Activation("sigmoid")])``
whose ``predict`` takes raw strings.
"""
import contextlib

import numpy as np

from minikeras.data.dataset import Dataset
from minikeras.layers.preprocessing.host_layer import host_array

_active = [0]


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
    return leading_host_layers(layers) if _active[0] else 0


@contextlib.contextmanager
def applied():
    """While active, a model's leading host layers are taken as already applied to its inputs."""
    _active[0] += 1
    try:
        yield
    finally:
        _active[0] -= 1


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
