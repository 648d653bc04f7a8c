"""Whole-model files (``.keras``), in Keras 3's archive layout.

A ``.keras`` file is a zip archive of
  ``config.json``        {"module", "class_name", "config": the model's ``get_config()``,
                           "registered_name", ["build_config",] "compile_config": {...} or null};
                           a Sequential's config is {"name", "layers": [{"module", "class_name",
                           "config", "registered_name"}, ...], "build_input_shape"}
  ``metadata.json``      {"keras_version", "minikeras_version", "date_saved"}
  ``model.weights.h5``   the weights in the ``.weights.h5`` layout (see ``weights_h5``)
The layer configs are minikeras's own ``get_config`` (Keras 3 cannot rebuild them), so the
archive round-trips within minikeras; its weights part is Keras 3's layout. The model asks
nothing of this module's callers: its class is found again through ``registry`` (Sequential,
and the classes registered with ``register_keras_serializable``), rebuilt with
``from_config`` and built with ``build_from_config``.
"""
import datetime
import io
import json
import os
import warnings
import zipfile

import h5py

import minikeras
from minikeras import losses, optimizers
from minikeras.saving import weights_h5
from minikeras.saving._files import KERAS_ARCHIVE_WEIGHTS, atomic_write
from minikeras.saving.registry import deserialize_keras_object, is_serializable, serialize_keras_object

CONFIG, METADATA = "config.json", "metadata.json"


def _json_default(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "name"):
        return value.name  # dtypes
    raise TypeError(f"Cannot store {value!r} of type {type(value).__name__} in config.json")


def _compile_config(model):
    if not getattr(model, "compiled", False) or getattr(model, "optimizer", None) is None:
        return None
    config = {"optimizer": optimizers.serialize(model.optimizer), "loss": None, "metrics": []}
    if model.loss is not None:
        try:
            config["loss"] = losses.serialize(model.loss)
        except ValueError as error:
            warnings.warn(f"save_model: the loss is not saved ({error}); compile the loaded model yourself",
                          stacklevel=3)
    for metric in getattr(model, "_trainer_metric_specs", []):
        if isinstance(metric, str):
            config["metrics"].append(metric)
        else:
            warnings.warn(f"save_model: metric {metric!r} is not saved (only metrics given by name are)", stacklevel=3)
    return config


def model_config(model):
    """The ``config.json`` of ``model``: its class, ``get_config()``, build and compile settings."""
    if not is_serializable(model):
        raise NotImplementedError(
            f"model.save('*.keras'): '{model.name}' is a {type(model).__name__}, a class load_model could not find "
            f"again. Register it with @mk.saving.register_keras_serializable() (its get_config() and from_config() "
            "rebuild it), use a Sequential model, or save its weights with model.save_weights('name.weights.h5') "
            "and rebuild it in code before load_weights")
    config = serialize_keras_object(model)
    build_config = model.get_build_config()
    if build_config is not None:
        config["build_config"] = build_config
    config["compile_config"] = _compile_config(model)
    return config


def save_model(model, filepath, overwrite=True):
    """Writes a model (architecture, weights, optimizer state) to a ``.keras`` file, atomically.

    The model is a Sequential or of a class registered with ``register_keras_serializable``."""
    path = os.fspath(filepath)
    if not str(path).endswith(".keras"):
        raise ValueError(f"Invalid filepath extension for saving: expected a `.keras` extension. Received: "
                         f"filepath={path}")
    config_json = json.dumps(model_config(model), default=_json_default)
    if not getattr(model, "built", True):
        raise ValueError(f"You are saving a model that has not yet been built ('{model.name}'). Build it first by "
                         "calling it on data or by model.build(input_shape)")
    metadata_json = json.dumps({"keras_version": "3", "minikeras_version": minikeras.__version__,
                                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")})
    weights = io.BytesIO()
    with h5py.File(weights, "w") as h5file:
        weights_h5.write(h5file, model)

    def write(temp_path):
        with zipfile.ZipFile(temp_path, "w") as archive:
            archive.writestr(METADATA, metadata_json)
            archive.writestr(CONFIG, config_json)
            archive.writestr(KERAS_ARCHIVE_WEIGHTS, weights.getvalue())

    atomic_write(path, write, overwrite=overwrite)


def _read_archive(path):
    if not os.path.exists(path):
        raise FileNotFoundError(f"No model file found at '{path}'")
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            missing = [n for n in (CONFIG, KERAS_ARCHIVE_WEIGHTS) if n not in names]
            if missing:
                raise ValueError(f"'{path}' is not a .keras model file: it lacks {missing}")
            return json.loads(archive.read(CONFIG)), archive.read(KERAS_ARCHIVE_WEIGHTS)
    except zipfile.BadZipFile as error:
        raise ValueError(f"Cannot read '{path}': not a .keras archive, or truncated ({error})") from error


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """Rebuilds a model saved by ``save_model`` / ``model.save('*.keras')``: layers, weights,
    and (with ``compile=True``) its compile settings and optimizer state.

    Args:
      custom_objects: classes by name, for layers or models that are not registered.
    """
    path = os.fspath(filepath)
    if not str(path).endswith(".keras"):
        raise ValueError(f"File format not supported: filepath={path}. minikeras loads whole models from `.keras` "
                         "files; for weights files use model.load_weights")
    config, weights = _read_archive(path)
    try:
        model = deserialize_keras_object(config, custom_objects, "model")
    except ValueError as error:
        raise ValueError(f"'{path}': {error}") from error
    if not model.built and config.get("build_config"):
        model.build_from_config(config["build_config"])
    compile_config = config.get("compile_config")
    if compile and compile_config:
        model.compile(optimizer=optimizers.deserialize(compile_config["optimizer"]),
                      loss=losses.deserialize(compile_config["loss"]) if compile_config.get("loss") else None,
                      metrics=compile_config.get("metrics") or None)
    try:
        with h5py.File(io.BytesIO(weights), "r") as h5file:
            assignments = weights_h5.read(h5file, model, path, skip_mismatch=False)
    except OSError as error:
        raise ValueError(f"Cannot read the weights inside '{path}': truncated or corrupted ({error})") from error
    for variable, value in assignments:
        variable.assign(value)
    return model
