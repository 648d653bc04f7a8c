"""Whole models in the legacy HDF5 file that Keras 3 still writes for ``model.save('m.h5')``.

    attrs: keras_version, backend, model_config={"class_name", "config"} (JSON),
           training_config={"loss", "metrics", ..., "optimizer_config": {"class_name", "config"}}
    /model_weights            attrs: layer_names=[every layer], backend, keras_version
    /model_weights/<layer>    attrs: weight_names=['sequential/dense/kernel', ...] (the arrays at
                              those paths inside the group); plus top_level_model_weights
    /optimizer_weights        attrs: weight_names=[optimizer variables' paths] (arrays by name)

As in Keras 3, saving warns that the format is legacy; the model's config is the one a ``.keras``
file holds (``model_file.model_config``, in Keras's words), so Keras 3 reads these files, and
``load`` reads Keras 3's. Weights are matched layer by layer in order (``legacy_h5.read``), the
optimizer's variables in order.
"""
import io
import json
import os
import tempfile
import warnings

import h5py
import numpy as np

from minikeras.saving import legacy_h5
from minikeras.saving._files import atomic_write
from minikeras.saving._walk import optimizer_entry
from minikeras.saving.keras_config import from_keras, to_keras
from minikeras.saving.model_file import KERAS_VERSION, compile_config, compile_from_config, model_config
from minikeras.saving.registry import deserialize_keras_object

EXTENSIONS = (".h5", ".hdf5")
MODEL_CLASSES = ("Sequential", "Functional", "Model")
LEGACY_WARNING = ("You are saving your model as an HDF5 file via `model.save()` or `keras.saving.save_model(model)`. "
                  "This file format is considered legacy. We recommend using instead the native Keras format, e.g. "
                  "`model.save('my_model.keras')` or `keras.saving.save_model(model, 'my_model.keras')`. ")


def is_h5_path(filepath):
    return str(os.fspath(filepath)).endswith(EXTENSIONS)


def _json(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "name"):
        return value.name
    raise TypeError(f"Cannot store {value!r} of type {type(value).__name__} in an HDF5 model file's config")


def save(model, filepath, overwrite=True, include_optimizer=True):
    """Writes ``model`` (config, weights, compile settings and optimizer state) to a legacy HDF5
    file, atomically, with Keras 3's warning that the format is legacy."""
    _refuse_assets(model, filepath)
    warnings.warn(LEGACY_WARNING, UserWarning, stacklevel=4)  # the caller of model.save
    if not getattr(model, "built", True):
        raise ValueError(f"You are saving a model that has not yet been built ('{model.name}'). Build it first by "
                         "calling it on data or by model.build(input_shape)")
    config = to_keras(model_config(model))
    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as f:
        f.attrs["keras_version"] = KERAS_VERSION
        f.attrs["backend"] = "jax"
        f.attrs["model_config"] = json.dumps({"class_name": config["class_name"], "config": config["config"]},
                                             default=_json).encode("utf8")
        training = compile_config(model) if include_optimizer else None
        if training is not None:
            optimizer = to_keras(training.pop("optimizer"))
            training["optimizer_config"] = {"class_name": optimizer["class_name"], "config": optimizer["config"]}
            training = {"loss_weights": None, "weighted_metrics": None, **training}
            f.attrs["training_config"] = json.dumps(training, default=_json).encode("utf8")
        _write_weights(f.create_group("model_weights"), model)
        entry = optimizer_entry(model) if include_optimizer else None
        if entry is not None and entry.variables and getattr(entry.owner, "built", True):
            _write_named(f.create_group("optimizer_weights"), entry.variables)
    atomic_write(os.fspath(filepath), buffer.getvalue(), overwrite=overwrite)


def _refuse_assets(model, filepath):
    """A legacy HDF5 model file holds configs and weights, no assets: a layer that keeps state as
    assets (an adapted TextVectorization's or StringLookup's vocabulary) would load without it,
    every token unknown. Refused, naming the format that keeps it."""
    for item in [model] + list(model.submodules):
        save_assets = getattr(item, "save_assets", None)
        if save_assets is None:
            continue
        with tempfile.TemporaryDirectory() as folder:
            save_assets(folder)
            if os.listdir(folder):
                raise ValueError(
                    f"Cannot save model '{model.name}' to the legacy HDF5 file '{os.fspath(filepath)}': its layer "
                    f"'{item.name}' ({type(item).__name__}) keeps state that file cannot hold (its vocabulary, an "
                    "asset), and the loaded model would map every token to OOV. Save it as a .keras file instead: "
                    f"model.save('{os.path.splitext(os.fspath(filepath))[0]}.keras')")


def _write_weights(group, model):
    layers = list(model.layers)
    group.attrs["layer_names"] = np.array([layer.name.encode("utf8") for layer in layers], dtype=object) \
        if layers else np.array([], dtype="S1")
    group.attrs["backend"] = b"jax"
    group.attrs["keras_version"] = KERAS_VERSION.encode("utf8")
    for layer in sorted(layers, key=lambda layer: layer.name):
        _write_named(group.create_group(layer.name), list(layer.trainable_weights) + list(layer.non_trainable_weights))
    in_layers = {id(v) for layer in layers for v in layer.weights}
    _write_named(group.create_group("top_level_model_weights"), [v for v in model.weights if id(v) not in in_layers])


def _write_named(group, variables):
    names = [v.path for v in variables]
    if len(set(names)) != len(names):  # two variables with one path would overwrite each other
        names = [f"{name}_{i}" if names.count(name) > 1 else name for i, name in enumerate(names)]
    group.attrs["weight_names"] = np.array([n.encode("utf8") for n in names], dtype=object) if names \
        else np.array([], dtype=np.float64)  # what Keras writes for no weights
    for name, variable in zip(names, variables):
        group.create_dataset(name, data=np.asarray(variable.numpy()))


def load(filepath, custom_objects=None, compile=True, safe_mode=True):
    """Rebuilds a model from a legacy HDF5 model file (Keras 3's, Keras 2's or minikeras's):
    config, weights, and with ``compile`` its compile settings and optimizer state."""
    path = os.fspath(filepath)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No model file found at '{path}'")
    with h5py.File(path, "r") as f:
        raw = f.attrs.get("model_config")
        if raw is None:
            raise ValueError(f"No model config found in the file at {path}. (A weights-only .h5 file: build the "
                             "model in code and call model.load_weights.)")
        config = _with_modules(_json_attr(raw))
        training = f.attrs.get("training_config") if compile else None
        if training is not None:
            training = _json_attr(training)
            training["optimizer"] = training.pop("optimizer_config")
            config["compile_config"] = training
        try:
            config = from_keras(config, custom_objects, safe_mode)
            model = deserialize_keras_object(config, custom_objects, what="model")
        except ValueError as error:
            raise ValueError(f"'{path}': {error}") from error
        assignments = legacy_h5.read(f, model, path, skip_mismatch=False)
        optimizer_values = None
        if training is not None:
            compile_from_config(model, config["compile_config"], custom_objects)
            if "optimizer_weights" in f:
                group = f["optimizer_weights"]
                optimizer_values = [np.asarray(group[name][()])
                                    for name in legacy_h5.load_attribute(group, "weight_names")]
    for variable, value in assignments:
        variable.assign(value)
    if optimizer_values:
        _restore_optimizer(model, optimizer_values, path)
    return model


def _with_modules(spec):
    """Keras 3's legacy ``model_config`` names models and layers by class only (no ``module``):
    the module a ``.keras`` file would give them, so that ``from_keras`` finds the classes."""
    if isinstance(spec, dict) and "class_name" in spec and isinstance(spec.get("config"), dict):
        spec = dict(spec)
        spec.setdefault("module", "keras" if spec["class_name"] in MODEL_CLASSES else "keras.layers")
        layers = spec["config"].get("layers")
        if isinstance(layers, list):
            spec["config"] = dict(spec["config"], layers=[_with_modules(layer) for layer in layers])
    return spec


def _json_attr(value):
    return json.loads(value.decode("utf8") if hasattr(value, "decode") else value)


def _restore_optimizer(model, values, path):
    optimizer = model.optimizer
    if not getattr(optimizer, "built", True) and hasattr(optimizer, "build"):
        optimizer.build(model.trainable_variables)
    variables = optimizer_entry(model).variables
    shapes_fit = len(variables) == len(values) and all(tuple(v.shape) == np.shape(a) for v, a in zip(variables, values))
    if not shapes_fit:
        warnings.warn(f"Error in loading the saved optimizer state from '{path}' ({len(values)} arrays for "
                      f"{len(variables)} optimizer variables). As a result, your model is starting with a freshly "
                      "initialized optimizer.", stacklevel=3)
        return
    for variable, value in zip(variables, values):
        variable.assign(value)
