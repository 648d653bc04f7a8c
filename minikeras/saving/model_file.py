"""Whole-model files (``.keras``), in Keras 3's archive layout.

A ``.keras`` file is a zip archive of
  ``config.json``        {"module", "class_name", "config": the model's ``get_config()``,
                           "registered_name", ["build_config",] "compile_config": {...} or null};
                           a Sequential's config is {"name", "layers": [{"module", "class_name",
                           "config", "registered_name"}, ...], "build_input_shape"}
  ``metadata.json``      {"keras_version", "minikeras_version", "date_saved"}
  ``model.weights.h5``   the weights in the ``.weights.h5`` layout (see ``weights_h5``)
``config.json`` is written in Keras 3's words (``keras_config.to_keras``: ``"module":
"keras.layers"``, a Sequential's leading ``InputLayer``), so Keras 3 loads the file; a Keras 3
file is read back through ``keras_config.from_keras``. The model's class is found through
``registry`` (Sequential, and classes registered with ``register_keras_serializable``; a
functional model once ``Functional.from_config`` is registered), rebuilt with ``from_config``
and built with ``build_from_config``.

Reading is safe as Keras 3's ``safe_mode=True``: members are read by name into memory (never
extracted to paths from the archive), JSON is parsed with ``json`` only, nothing is unpickled,
a Lambda's bytecode is refused, and members larger than ``MAX_MEMBER_BYTES`` are refused
before they are decompressed.
"""
import datetime
import io
import json
import os
import warnings
import zipfile

import h5py

from minikeras import losses, metrics as metrics_module, optimizers
from minikeras.saving import assets, weights_h5
from minikeras.saving._files import KERAS_ARCHIVE_WEIGHTS, atomic_write
from minikeras.saving.keras_config import from_keras, to_keras
from minikeras.saving.registry import (
    CustomObjectScope,
    deserialize_keras_object,
    is_serializable,
    serialize_keras_object,
)
from minikeras.version import __version__

CONFIG, METADATA = "config.json", "metadata.json"
MAX_MEMBER_BYTES = {CONFIG: 64 << 20, METADATA: 1 << 20, KERAS_ARCHIVE_WEIGHTS: 64 << 30}
KERAS_VERSION = "3.15.1"  # the Keras 3 release whose files these are checked against


def _json_default(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "name"):
        return value.name  # dtypes
    raise TypeError(f"Cannot store {value!r} of type {type(value).__name__} in config.json")


def compile_config(model):
    """The compile settings of ``model`` as a Keras 3 ``compile_config`` (None if not compiled)."""
    if not getattr(model, "compiled", False) or getattr(model, "optimizer", None) is None:
        return None
    config = {"optimizer": optimizers.serialize(model.optimizer), "loss": None, "metrics": []}
    if model.loss is not None:
        try:
            config["loss"] = losses.serialize(model.loss)
        except ValueError as error:
            warnings.warn(f"save_model: the loss is not saved ({error}); compile the loaded model yourself",
                          stacklevel=3)
    for metric in getattr(model, "metric_specs", ()):
        if isinstance(metric, str):
            config["metrics"].append(metric)
        elif isinstance(metric, metrics_module.Metric) and getattr(metrics_module, type(metric).__name__, None) is \
                type(metric):
            config["metrics"].append({"module": "minikeras.metrics", "class_name": type(metric).__name__,
                                      "config": metric.get_config(), "registered_name": None})
        else:
            warnings.warn(f"save_model: metric {metric!r} is not saved (only metrics given by name, and "
                          "mk.metrics objects, are)", stacklevel=3)
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
        config["build_config"] = serialize_keras_object(build_config)
    get_compile_config = getattr(model, "get_compile_config", None)  # a model's own, or Model's default
    config["compile_config"] = (serialize_keras_object(get_compile_config()) if get_compile_config is not None
                                else compile_config(model))
    return config


def _build_and_compile(model, config, custom_objects, compile):
    """As Keras after rebuilding a model: ``build_from_config``, then ``compile_from_config``
    (the model's own where it has one: Model's default warns, and compiles nothing, for a
    class that overrides ``compile`` only), with ``custom_objects`` in scope."""
    with CustomObjectScope(custom_objects):
        if not model.built and config.get("build_config"):
            model.build_from_config(config["build_config"])
        if compile and config.get("compile_config"):
            if hasattr(model, "compile_from_config"):
                model.compile_from_config(config["compile_config"])
            else:
                compile_from_config(model, config["compile_config"], custom_objects)


def model_to_json(model, **kwargs):
    """``model.to_json()``: the model's ``config.json`` as a string (its class, config, build and
    compile settings, in Keras 3's words, as Keras's ``to_json``); ``kwargs`` go to ``json.dumps``."""
    return json.dumps(to_keras(model_config(model)), default=_json_default, **kwargs)


def model_from_json(json_string, custom_objects=None):
    """The model ``model_to_json`` (or Keras 3's ``to_json``) described: built and compiled as
    the string says, with new weights."""
    config = from_keras(json.loads(json_string), custom_objects)
    model = deserialize_keras_object(config, custom_objects, what="model")
    _build_and_compile(model, config, custom_objects, compile=True)
    return model


def save_model(model, filepath, overwrite=True):
    """Writes a model (architecture, weights, optimizer state) to a ``.keras`` file, atomically.

    The model is a Sequential or of a class registered with ``register_keras_serializable``."""
    path = os.fspath(filepath)
    if not str(path).endswith(".keras"):
        raise ValueError(f"Invalid filepath extension for saving: expected a `.keras` extension. Received: "
                         f"filepath={path}")
    config_json = json.dumps(to_keras(model_config(model)), default=_json_default)
    if not getattr(model, "built", True):
        raise ValueError(f"You are saving a model that has not yet been built ('{model.name}'). Build it first by "
                         "calling it on data or by model.build(input_shape)")
    metadata_json = json.dumps({"keras_version": KERAS_VERSION, "minikeras_version": __version__,
                                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")})
    weights = io.BytesIO()
    with h5py.File(weights, "w") as h5file:
        weights_h5.write(h5file, model)

    archive_bytes = io.BytesIO()
    with zipfile.ZipFile(archive_bytes, "w") as archive:
        archive.writestr(METADATA, metadata_json)
        archive.writestr(CONFIG, config_json)
        archive.writestr(KERAS_ARCHIVE_WEIGHTS, weights.getvalue())
        for name, data in assets.members(model).items():  # lookup layers' vocabularies
            archive.writestr(name, data)
    atomic_write(path, archive_bytes.getvalue(), overwrite=overwrite)


def _read_member(archive, path, name):
    info = archive.getinfo(name)
    if info.file_size > MAX_MEMBER_BYTES[name]:
        raise ValueError(f"Cannot load '{path}': its member '{name}' is {info.file_size} bytes once decompressed, "
                         f"more than the {MAX_MEMBER_BYTES[name]} bytes a .keras file's '{name}' may have")
    return archive.read(name)


def _read_archive(path):
    if not os.path.exists(path):
        raise FileNotFoundError(f"No model file found at '{path}'")
    if os.path.isdir(path):
        raise IsADirectoryError(f"Cannot load '{path}': it is a directory, not a .keras file")
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            missing = [n for n in (CONFIG, KERAS_ARCHIVE_WEIGHTS) if n not in names]
            if missing:
                raise ValueError(f"'{path}' is not a complete .keras model file: it lacks {missing} (it has "
                                 f"{names[:10]})")
            config_bytes = _read_member(archive, path, CONFIG)
            weights = _read_member(archive, path, KERAS_ARCHIVE_WEIGHTS)
    except zipfile.BadZipFile as error:
        raise ValueError(f"Cannot read '{path}': not a .keras archive, or truncated ({error})") from error
    try:
        config = json.loads(config_bytes)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"Cannot load '{path}': its {CONFIG} is not valid JSON ({error})") from error
    if not (isinstance(config, dict) and "class_name" in config and isinstance(config.get("config"), dict)):
        raise ValueError(f"Cannot load '{path}': its {CONFIG} does not describe a model (expected an object with "
                         f"'class_name' and 'config', received {str(config)[:200]})")
    return config, weights


def _metric(spec, custom_objects):
    if not isinstance(spec, dict):
        return spec
    name = spec.get("class_name")
    cls = (custom_objects or {}).get(name) or getattr(metrics_module, str(name), None)
    if not (isinstance(cls, type) and issubclass(cls, metrics_module.Metric)):
        raise ValueError(f"Unknown metric class {name!r} in the compile config: Keras's keras.metrics.{name} has no "
                         f"minikeras counterpart yet; pass load_model(..., compile=False) and compile the model "
                         f"yourself, or give the class in custom_objects={{'{name}': ...}}")
    return cls.from_config(dict(spec.get("config") or {}))


def _nested(make, value):
    """``make`` applied to each entry of ``value``: one spec, or a list or dict of them (per output)."""
    if isinstance(value, list):
        return [_nested(make, v) for v in value]
    if isinstance(value, dict) and "class_name" not in value:
        return {k: _nested(make, v) for k, v in value.items()}
    return make(value)


def compile_from_config(model, compile_config, custom_objects):
    """Compiles ``model`` as ``compile_config`` (from ``compile_config(model)`` or Keras 3) says."""
    loss = compile_config.get("loss")
    kwargs = {k: compile_config[k] for k in ("loss_weights", "steps_per_execution", "jit_compile", "run_eagerly")
              if compile_config.get(k) is not None}
    metric = lambda spec: _metric(spec, custom_objects)  # noqa: E731
    model.compile(optimizer=optimizers.deserialize(compile_config["optimizer"], custom_objects),
                  loss=_nested(lambda spec: losses.deserialize(spec, custom_objects) if spec else None, loss),
                  metrics=_nested(metric, compile_config.get("metrics")) or None,
                  weighted_metrics=_nested(metric, compile_config.get("weighted_metrics")) or None, **kwargs)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """Rebuilds a model saved by ``save_model`` / ``model.save('*.keras')``: layers, weights,
    and (with ``compile=True``) its compile settings and optimizer state.

    Reads files written by minikeras and by Keras 3 (see ``keras_config``).

    Args:
      custom_objects: classes by name, for layers or models that are not registered.
      compile: restore the compile settings (optimizer, loss, metrics) and optimizer state.
      safe_mode: refuse Python bytecode (a Keras ``Lambda``'s function) in the file; pass
        False only for files you trust.

    Raises:
      ValueError: for a malformed archive or config.json, an unknown class (naming it), a
        Lambda's bytecode in safe mode, or weights that do not fit the model.
    """
    path = os.fspath(filepath)
    if not str(path).endswith(".keras"):
        raise ValueError(f"File format not supported: filepath={path}. minikeras loads whole models from `.keras` "
                         "files; for weights files use model.load_weights")
    config, weights = _read_archive(path)
    try:
        config = from_keras(config, custom_objects, safe_mode)
        model = deserialize_keras_object(config, custom_objects, what="model")
    except ValueError as error:
        raise ValueError(f"'{path}': {error}") from error
    _build_and_compile(model, config, custom_objects, compile)
    try:
        with h5py.File(io.BytesIO(weights), "r") as h5file:
            assignments, restore_random_state = weights_h5.read(h5file, model, path, skip_mismatch=False)
    except OSError as error:
        raise ValueError(f"Cannot read the weights inside '{path}': truncated or corrupted ({error})") from error
    for variable, value in assignments:
        variable.assign(value)
    restore_random_state(model)
    with zipfile.ZipFile(path) as archive:
        assets.load(model, archive, path)
    return model
