"""Reading Keras 2's HDF5 weights (``model.save('m.h5')`` and ``save_weights('w.h5')``).

    model.save:    /model_weights   attrs: layer_names=[b'dense', b'dense_1', ...]
                   /model_weights/dense   attrs: weight_names=[b'dense/kernel:0', b'dense/bias:0']
                   /model_weights/dense/dense/kernel:0   (the arrays)
    save_weights:  the same with the root group in place of /model_weights.

Layers are matched in order, counting only layers that have weights (as Keras 2 does);
attributes too large for one HDF5 header are split into ``layer_names0``, ``layer_names1``...
"""
import warnings

import numpy as np

from minikeras.saving.weights_h5 import Mismatch


def is_legacy_layout(h5file):
    return "model_weights" in h5file or _has_attribute(h5file, "layer_names")


def _has_attribute(group, name):
    return name in group.attrs or f"{name}0" in group.attrs


def load_attribute(group, name):
    """A list-of-strings attribute, joined from its chunks if Keras split it."""
    if name in group.attrs:
        values = list(group.attrs[name])
    else:
        values, chunk = [], 0
        while f"{name}{chunk}" in group.attrs:
            values.extend(group.attrs[f"{name}{chunk}"])
            chunk += 1
    return [v.decode("utf8") if hasattr(v, "decode") else str(v) for v in values]


def read(h5file, model, filename, skip_mismatch):
    """Validates the Keras 2 file against ``model``; returns (variable, array) pairs."""
    root = h5file["model_weights"] if "model_weights" in h5file else h5file
    saved = []
    for name in load_attribute(root, "layer_names"):
        if name not in root:
            raise ValueError(f"'{filename}' lists layer '{name}' in its layer_names but has no group for it: the "
                             "file is damaged")
        weight_names = load_attribute(root[name], "weight_names")
        if weight_names:
            saved.append((name, weight_names))
    layers = [layer for layer in model.layers if layer.weights]
    if len(saved) != len(layers):
        raise ValueError(
            f"Layer count mismatch when loading weights from '{filename}': model '{model.name}' has {len(layers)} "
            f"layers with weights {[layer.name for layer in layers]}, the file has {len(saved)} "
            f"{[name for name, _ in saved]}")
    assignments = []
    for k, (layer, (name, weight_names)) in enumerate(zip(layers, saved)):
        weights = layer.weights
        where = f"layer #{k} (named '{layer.name}' in the model, '{name}' in the file '{filename}')"
        if len(weight_names) != len(weights):
            raise ValueError(f"Weight count mismatch for {where}: the layer has {len(weights)} weights "
                             f"{[w.path for w in weights]}, the file has {len(weight_names)} {weight_names}")
        pairs = []
        for variable, weight_name in zip(weights, weight_names):
            dataset = root[name][weight_name]
            if tuple(dataset.shape) != tuple(variable.shape):
                message = (f"Shape mismatch in {where} for weight '{variable.path}': the model expects shape "
                           f"{tuple(variable.shape)}, the file's '{weight_name}' has shape {tuple(dataset.shape)}")
                if not skip_mismatch:
                    raise Mismatch(message)
                warnings.warn(f"Skipping: {message}", stacklevel=3)
                pairs = None
                break
            pairs.append((variable, np.asarray(dataset[()])))
        assignments.extend(pairs or [])
    return assignments
