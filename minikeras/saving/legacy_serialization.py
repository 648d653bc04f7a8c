"""Keras 2's object serialization, kept in Keras 3 as ``keras.legacy.saving`` (and
``keras.utils.legacy``): ``{"class_name", "config"}`` dicts without ``module`` or
``registered_name``, functions as their names.

    config = serialize_keras_object(MyLayer(3))           # {"class_name": "Custom>MyLayer", "config": {...}}
    layer = deserialize_keras_object(config, module_objects={"Custom>MyLayer": MyLayer})

As in Keras 3, ``deserialize_keras_object`` knows no built-in object by itself: a name is looked
up in the custom object scopes, the registry (``register_keras_serializable``),
``custom_objects`` and ``module_objects``, in that order. Keras 2's shared-object ids are not
written or read (``SharedObjectSavingScope`` is not part of Keras 3's public API).
"""
import inspect

from minikeras import _context
from minikeras.saving.registry import CustomObjectScope, get_custom_objects, get_registered_name

_PASSIVE = "__passive_serialization__"


def serialize_keras_object(instance):
    """Keras 2's form of ``instance``: ``{"class_name": <registered name>, "config": ...}`` for an
    object with ``get_config`` (items that are objects serialized the same way, marked
    ``__passive_serialization__``), the registered name of a function or class, None for None.

    Raises:
      ValueError: for anything else ("Cannot serialize 3 because it doesn't implement `get_config()`.").
    """
    instance = inspect.unwrap(instance)
    if instance is None:
        return None
    if hasattr(instance, "get_config") and not isinstance(instance, type):
        config = {}
        for key, item in instance.get_config().items():
            if isinstance(item, str):
                config[key] = item
                continue
            try:
                serialized = serialize_keras_object(item)
            except ValueError:
                config[key] = item
                continue
            if isinstance(serialized, dict) and not isinstance(item, dict):
                serialized[_PASSIVE] = True
            config[key] = serialized
        return {"class_name": get_registered_name(instance.__class__), "config": config}
    if hasattr(instance, "__name__"):
        return get_registered_name(instance)
    raise ValueError(f"Cannot serialize {instance} because it doesn't implement `get_config()`.")


def _unknown(what, name):
    return ValueError(f"Unknown {what}: '{name}'. Please ensure you are using a `keras.utils.custom_object_scope` "
                      "and that this object is included in the scope. See "
                      "https://www.tensorflow.org/guide/keras/save_and_serialize#registering_the_custom_object for "
                      "details.")


def _lookup(name, custom_objects, module_objects):
    for table in (list(reversed(_context.call_state.custom_object_scopes)) + [get_custom_objects(),
                                                                              custom_objects or {},
                                                                              module_objects or {}]):
        if name in table:
            return table[name]
    return None


def deserialize_keras_object(identifier, module_objects=None, custom_objects=None, printable_module_name="object"):
    """The object ``serialize_keras_object`` described: a dict is rebuilt with its class's
    ``from_config`` (items marked ``__passive_serialization__`` rebuilt first, string items naming
    a known function replaced by it); a name gives the function, or an instance of the class,
    found under it; a function is returned as it is.

    Args:
      identifier: a dict, a name, a function or None.
      module_objects: a dict of the names the caller's module offers (Keras's built-ins are not
        looked up otherwise).
      custom_objects: a dict of user objects.
      printable_module_name: what the object is, for errors ("layer", "optimizer"...).

    Raises:
      ValueError: for an unknown name, a dict without ``class_name`` and ``config``, or another value.
    """
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        if "class_name" not in identifier or "config" not in identifier:
            raise ValueError(f"Improper config format for {identifier}. Expecting python dict contains `class_name` "
                             "and `config` as keys")
        class_name = identifier["class_name"]
        cls = _lookup(class_name, custom_objects, module_objects)
        if cls is None:
            raise _unknown(printable_module_name, class_name)
        config = identifier["config"]
        if isinstance(config, dict):
            config = dict(config)
            for key, item in config.items():
                if key == "name":
                    continue
                if isinstance(item, dict) and _PASSIVE in item:
                    item = {k: v for k, v in item.items() if k != _PASSIVE}
                    config[key] = deserialize_keras_object(item, module_objects, custom_objects, "config_item")
                elif isinstance(item, str) and inspect.isfunction(_lookup(item, custom_objects, module_objects)):
                    config[key] = _lookup(item, custom_objects, module_objects)
        if hasattr(cls, "from_config"):
            if "custom_objects" in inspect.signature(cls.from_config).parameters:
                return cls.from_config(config, custom_objects={**get_custom_objects(), **(custom_objects or {})})
            with CustomObjectScope(custom_objects or {}):
                return cls.from_config(config)
        with CustomObjectScope(custom_objects or {}):  # a function returning an object, called with the config
            return cls(**config)
    if isinstance(identifier, str):
        found = _lookup(identifier, custom_objects, module_objects)
        if found is None:
            raise _unknown(printable_module_name, identifier)
        return found() if inspect.isclass(found) else found
    if inspect.isfunction(identifier):
        return identifier
    raise ValueError(f"Could not interpret serialized {printable_module_name}: {identifier}")
