"""``config.json`` in Keras 3's words: translating configs between minikeras and Keras 3.

A ``.keras`` file names each object ``{"module", "class_name", "config", "registered_name"}``.
Keras 3 writes ``"module": "keras.layers"`` (``"keras"`` for models and dtype policies) where
minikeras's registry says ``"minikeras.layers"`` (``"minikeras.models"``); ``to_keras`` and
``from_keras`` translate one into the other, recursively, so that

- a file minikeras writes loads in Keras 3: a Sequential's input shape becomes the leading
  ``InputLayer`` Keras writes, and ``batch_input_shape`` (which Keras's layers refuse) goes;
- a file Keras 3 writes loads here: a ``DTypePolicy`` becomes its dtype name, and keys that
  Keras writes but minikeras's class does not take are dropped when their value has no effect
  (``sparse=False``, ``ragged=False``, ``optional=False``, ``groups=1``, ``None``...) and are
  an error naming the class, the key and the value otherwise.

A ``Lambda`` layer's function is Python bytecode in Keras's files; ``from_keras`` refuses it
unless ``safe_mode=False`` (then it is rebuilt with ``marshal``, as Keras does). Nothing is
unpickled or evaluated in safe mode.
"""
import base64
import builtins
import inspect
import marshal
import types

from minikeras import constraints, initializers, losses, metrics, optimizers, regularizers
from minikeras.saving.registry import find_class, find_function, get_registered_name
from minikeras.saving.safe_mode import in_safe_mode

# Keras writes these (with these values) for layers that here take no such argument; the value
# they hold has no effect. Any other value of a key minikeras's class lacks is an error.
NO_EFFECT = {"sparse": False, "ragged": False, "optional": False, "groups": 1, "autocast": True,
             "data_format": "channels_last", "synchronized": False, "dtype": "float32"}

_NESTED_MODULES = {"minikeras.initializers": initializers, "minikeras.regularizers": regularizers,
                   "minikeras.constraints": constraints,
                   "minikeras.optimizers": optimizers, "minikeras.losses": losses, "minikeras.metrics": metrics}


def _is_spec(value):
    return isinstance(value, dict) and "class_name" in value and "config" in value


# --- minikeras -> Keras ---------------------------------------------------------------------

def _keras_module(module, class_name):
    if module == "minikeras.models" and class_name == "Functional":
        return "keras.src.models.functional"  # where Keras 3 writes (and looks up) its functional model
    if module == "minikeras.models" or (module == "minikeras" and class_name in ("Sequential", "Model")):
        return "keras"
    if isinstance(module, str) and module.startswith("minikeras."):
        return "keras." + module[len("minikeras."):]
    return module


def to_keras(value):
    """``value`` (a ``serialize_keras_object`` dict, or any JSON value holding some) with the
    module names Keras 3 looks up, and a Sequential's layers as Keras 3 writes them."""
    if isinstance(value, list):
        return [to_keras(v) for v in value]
    if not isinstance(value, dict):
        return value
    if _is_spec(value) and value.get("class_name") == "function" and isinstance(value["config"], str):
        registered = find_function(value["config"])  # a registered function: by its registered name, as Keras
        if registered is not None and get_registered_name(registered) != registered.__name__:
            return {"module": "builtins", "class_name": "function", "config": get_registered_name(registered),
                    "registered_name": "function"}
    out = {key: to_keras(v) for key, v in value.items()}
    if _is_spec(value) and "module" in value:
        out["module"] = _keras_module(value["module"], value["class_name"])
        config = out["config"]
        if isinstance(config, dict):
            if value["class_name"] == "Sequential" and out["module"] == "keras":
                out["config"] = _sequential_to_keras(config)
            elif "batch_input_shape" in config:
                config = dict(config)
                shape = config.pop("batch_input_shape")
                out["config"] = config
                if shape is not None and "build_config" not in out:
                    out["build_config"] = {"input_shape": shape}
    return out


def _input_dtype(first_layer):
    """The dtype of a Sequential's input as Keras needs it: strings for a leading text layer."""
    name, config = first_layer.get("class_name"), first_layer.get("config") or {}
    if name == "TextVectorization" or (name == "StringLookup" and not config.get("invert")):
        return "string"
    if name == "IntegerLookup" or (name == "StringLookup" and config.get("invert")):
        return "int64"
    return "float32"


def _sequential_to_keras(config):
    config = dict(config)
    shape = config.get("build_input_shape")
    layers = list(config.get("layers") or [])
    if shape is not None and not (layers and layers[0].get("class_name") == "InputLayer"):
        layers.insert(0, {"module": "keras.layers", "class_name": "InputLayer",
                          "config": {"batch_shape": shape, "dtype": _input_dtype(layers[0] if layers else {}),
                                     "name": f"{config.get('name', 'sequential')}_input"},
                          "registered_name": None})
    config["layers"] = layers
    return config


# --- Keras -> minikeras ---------------------------------------------------------------------

def _minikeras_module(module, class_name):
    if module == "keras" or module == "keras.models":
        return "minikeras.models" if class_name in ("Sequential", "Functional", "Model") else "minikeras"
    if isinstance(module, str) and module.startswith("keras.src."):
        module = "keras." + module.split(".")[2]  # keras.src.layers.core.dense -> keras.layers
    if isinstance(module, str) and module.startswith("keras."):
        return "minikeras." + module[len("keras."):]
    return module


def _accepted_arguments(cls):
    """Keyword arguments ``cls(...)`` takes: its ``__init__``'s, and those of the base classes
    its ``**kwargs`` reach."""
    names = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            params = inspect.signature(init).parameters.values()
        except (TypeError, ValueError):
            return None
        names.update(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        if not any(p.kind == p.VAR_KEYWORD for p in params):
            return names - {"self"}
    return None  # object.__init__ reached through **kwargs: anything may be accepted


def _nested_class(spec):
    module = _NESTED_MODULES.get(spec.get("module"))
    return getattr(module, spec["class_name"], None) if module is not None else None


def _lambda_function(value, where, safe_mode):
    if in_safe_mode(safe_mode):
        raise ValueError(
            f"{where}: its function is Python bytecode (a lambda saved by Keras), and loading it could run "
            "arbitrary code. Refused in safe mode; if you trust the file, pass safe_mode=False to load_model "
            "or call keras.config.enable_unsafe_deserialization()")
    config = value.get("config") or {}
    try:
        code = marshal.loads(base64.decodebytes(config["code"].encode("ascii")))
        defaults = config.get("defaults")
        return types.FunctionType(code, {"__builtins__": builtins}, None,
                                  tuple(defaults) if defaults is not None else None)
    except (KeyError, ValueError, TypeError, EOFError) as error:
        raise ValueError(f"{where}: its lambda's bytecode cannot be loaded by this Python ({error}); rebuild "
                         "the model in code and load its weights instead") from error


def _clean_config(cls, config, where):
    accepted = _accepted_arguments(cls)
    if accepted is None:
        return config
    # keys a class's own from_config reads besides its constructor's arguments
    accepted = accepted | set(getattr(cls, "FROM_CONFIG_KEYS", ()))
    out = {}
    for key, value in config.items():
        if key in accepted:
            out[key] = value
        elif value is None or (key in NO_EFFECT and value == NO_EFFECT[key]):
            continue
        else:
            raise ValueError(f"{where} has {key}={value!r}, which minikeras's {cls.__name__} does not support "
                             f"(it takes {sorted(accepted)})")
    return out


def from_keras(value, custom_objects=None, safe_mode=True, where="config.json"):
    """``value`` from a Keras 3 (or minikeras) ``config.json`` with minikeras's module names,
    dtype policies as dtype names, and keys without effect here dropped.

    Raises:
      ValueError: naming the object and key, for a key with an effect minikeras lacks, or a
        Lambda's bytecode in safe mode.
    """
    if isinstance(value, list):
        return [from_keras(v, custom_objects, safe_mode, where) for v in value]
    if not isinstance(value, dict):
        return value
    if value.get("class_name") == "__lambda__":  # anywhere in the file, as Keras's safe_mode
        return _lambda_function(value, where, safe_mode)
    if _is_spec(value) and value.get("class_name") == "function":  # a user's function: registered or custom
        found = find_function(value["config"], custom_objects)
        if found is not None:
            return found
    if _is_spec(value) and value.get("class_name") == "DTypePolicy":
        return (value.get("config") or {}).get("name", "float32")
    if not _is_spec(value) or not isinstance(value.get("config"), dict):
        return {k: from_keras(v, custom_objects, safe_mode, where) for k, v in value.items()}
    spec = {k: v for k, v in value.items() if k != "shared_object_id"}
    if "module" in value:  # (a functional config's "__keras_tensor__" entries have none)
        spec["module"] = _minikeras_module(value["module"], value["class_name"])
    config = value["config"]
    name = config.get("name")
    inner_where = f"{value['class_name']} '{name}'" if name else value["class_name"]
    config = {k: from_keras(v, custom_objects, safe_mode, inner_where) for k, v in config.items()}
    cls = find_class(spec, custom_objects) or _nested_class(spec)
    if isinstance(cls, type) and spec.get("registered_name") is None:  # the user's own classes get all keys
        config = _clean_config(cls, config, inner_where)
    spec["config"] = config
    return spec
