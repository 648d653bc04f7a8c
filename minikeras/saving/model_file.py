"""Whole-model files (``.keras``) for Sequential models, in Keras 3's archive layout.

A ``.keras`` file is a zip archive of
  ``config.json``        {"module", "class_name": "Sequential", "config": {"name", "layers": [
                           {"module", "class_name", "config", "registered_name"}, ...],
                           "build_input_shape"}, "compile_config": {...} or null}
  ``metadata.json``      {"keras_version", "minikeras_version", "date_saved"}
  ``model.weights.h5``   the weights in the ``.weights.h5`` layout (see ``weights_h5``)
The layer configs are minikeras's own ``get_config`` (Keras 3 cannot rebuild them), so the
archive round-trips within minikeras; its weights part is Keras 3's layout.
"""
import datetime
import io
import json
import os
import warnings
import zipfile

import h5py

from minikeras.saving import weights_h5
from minikeras.saving._files import KERAS_ARCHIVE_WEIGHTS, atomic_write

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
    from minikeras import losses, optimizers
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
    from minikeras.models.sequential import Sequential
    if not isinstance(model, Sequential):
        raise NotImplementedError(
            f"model.save('*.keras') supports Sequential models; '{model.name}' is a {type(model).__name__}. Save its "
            "weights with model.save_weights('name.weights.h5') and rebuild it in code before load_weights")
    layers = [{"module": "minikeras.layers", "class_name": type(layer).__name__, "config": layer.get_config(),
               "registered_name": None} for layer in model.layers]
    config = {"name": model.name, "layers": layers, "build_input_shape": getattr(model, "_batch_input_shape", None)}
    return {"module": "minikeras.models", "class_name": "Sequential", "config": config, "registered_name": None,
            "compile_config": _compile_config(model)}


def save_model(model, filepath, overwrite=True):
    """Writes a Sequential model (architecture, weights, optimizer state) to a ``.keras`` file, atomically."""
    import minikeras
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


def _layer_from_config(spec, custom_objects, path):
    from minikeras import layers
    name = spec.get("class_name")
    cls = (custom_objects or {}).get(name) or getattr(layers, str(name), None)
    if not (isinstance(cls, type) and issubclass(cls, layers.Layer)):
        raise ValueError(f"'{path}': unknown layer class {name!r}; pass it in custom_objects={{'{name}': ...}}")
    return cls.from_config(dict(spec.get("config") or {}))


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
    and (with ``compile=True``) its compile settings and optimizer state."""
    from minikeras import losses, optimizers
    from minikeras.models.sequential import Sequential
    path = os.fspath(filepath)
    if not str(path).endswith(".keras"):
        raise ValueError(f"File format not supported: filepath={path}. minikeras loads whole models from `.keras` "
                         "files; for weights files use model.load_weights")
    config, weights = _read_archive(path)
    if config.get("class_name") != "Sequential":
        raise ValueError(f"'{path}' holds a {config.get('class_name')!r} model; only Sequential models can be loaded")
    inner = config.get("config") or {}
    model = Sequential([_layer_from_config(spec, custom_objects, path) for spec in inner.get("layers", [])],
                       name=inner.get("name"))
    if not model.built and inner.get("build_input_shape"):
        model.build(tuple(inner["build_input_shape"]))
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
