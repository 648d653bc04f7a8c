"""A model's leading host layers (string preprocessing: ``TextVectorization``, ``StringLookup``,
``Hashing``...) run on the host before the compiled steps of fit, evaluate and predict.

Strings cannot enter a compiled program. A model says once where it is cut
(``model.host_split()`` gives ``(host_fn, device_model)``); ``model_inputs`` maps ``host_fn``
over the data here (an array at once; a Dataset batch by batch, as a ``map`` after its
batching), and the compiled steps call ``device_model`` on what it made. This is the
tutorials' "export model": ``Sequential([vectorize_layer, model, Activation("sigmoid")])``
whose ``predict`` takes raw strings.
"""
import numpy as np

from minikeras.data.dataset import Dataset
from minikeras.layers.preprocessing.host_layer import host_array
from minikeras.trainers.input_cast import cast_integer_inputs


def _raw_shape(x):
    if isinstance(x, Dataset):
        spec = x.element_spec
        spec = spec[0] if isinstance(spec, tuple) else spec
        return spec.shape
    return np.shape(host_array(x))


def model_inputs(model, x):
    """``x`` as the compiled steps of ``model`` take it: the leading host layers applied
    (``model.host_split()``'s ``host_fn``) and integer arrays cast to the dtypes of the Inputs
    they go to (``input_cast``)."""
    if x is None:
        return x
    host_fn, _ = model.host_split(lambda: _raw_shape(x))
    if host_fn is None:
        x = cast_integer_inputs(model, x)
        if not isinstance(x, Dataset):
            model.check_raw_inputs(x)
        return x
    if isinstance(x, Dataset):
        def element(*parts):
            if len(parts) == 1:  # x alone: several inputs (a tuple) are one x, not (x, y, ...)
                out = host_fn(parts[0])
                return (out,) if isinstance(out, tuple) else out
            return (host_fn(parts[0]),) + tuple(parts[1:])
        return x.map(element)
    return host_fn(x)
