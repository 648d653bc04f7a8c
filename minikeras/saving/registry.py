"""Which class a saved config names: Keras 3's registry of serializable classes.

A ``.keras`` file names each object by ``module``, ``class_name`` and ``registered_name``.
minikeras's own classes are registered by the modules that define them (``register_builtin``)
and saved as Keras saves its own: ``{"module": "minikeras.layers", "class_name": "Dense",
"registered_name": None}``. A user's class is registered with ``register_keras_serializable``
and saved under its registered name, ``"<package>><name>"``:

    @mk.saving.register_keras_serializable(package="my_models")
    class TwoLayer(mk.Model):
        def __init__(self, units=16, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.hidden, self.out = mk.layers.Dense(units), mk.layers.Dense(1)
        def get_config(self):
            return {**super().get_config(), "units": self.units}
        ...

    mk.saving.load_model("two_layer.keras")   # finds TwoLayer by "my_models>TwoLayer"

Functions register too (a custom activation or loss, saved by name). Objects that are neither
minikeras's own nor registered are found in ``custom_objects=``, in a ``custom_object_scope``
around the load, or in ``get_custom_objects()`` (the registry itself, a dict), as in Keras 3.
"""
import inspect

import numpy as np

from minikeras import _context, activations, dtype_policies, losses
from minikeras.module import overrides_default

_registered = _context.execution.registered_objects  # name -> class or function (Keras's global custom objects)
_names = {}  # class -> registered name
_builtins = {}  # (public module, class name) -> class
_builtin_modules = {}  # class -> public module
_saved_class_names = {}  # class -> the class name its files carry, where not its own
_namespaces = {}  # public module -> the module object (its classes found there by name, when looked up)
_FUNCTION_MODULES = (activations, losses)  # where a saved function's name is looked up last
POLICY_CLASSES = ("DTypePolicy", "FloatDTypePolicy", "DTypePolicyMap")  # written by dtype_policies.serialize


def register_keras_serializable(package="Custom", name=None):
    """Registers a class so that ``load_model`` finds it by ``"<package>><name>"``.

    Args:
      package: a namespace for the name (the registered name is ``package + ">" + name``).
      name: the class's name in files; default: its ``__name__``.

    Returns:
      A class decorator (the class is returned unchanged).

    A name registered again is given to the new class (a notebook cell run twice), as Keras 3.

    Raises:
      ValueError: for a class without ``get_config``.
    """
    def decorator(cls):
        registered = f"{package}>{name or cls.__name__}"
        if inspect.isclass(cls) and not hasattr(cls, "get_config"):
            raise ValueError("Cannot register a class that does not have a get_config() method.")
        _registered[registered] = cls
        _names[cls] = registered
        return cls
    return decorator


def get_custom_objects():
    """The registry as a dict (registered name -> class or function): entries added to it are
    found by loading too, by registered name or class name (Keras's global custom objects)."""
    return _registered


class CustomObjectScope:
    """A context in which loading and ``get_registered_object`` also find the given objects
    (dicts of name -> class or function), innermost scope first.

        with mk.saving.custom_object_scope({"MyLayer": MyLayer}):
            model = mk.saving.load_model("model.keras")
    """

    def __init__(self, *custom_objects):
        self.custom_objects = {}
        for table in custom_objects:
            self.custom_objects.update(table or {})

    def __enter__(self):
        _context.call_state.custom_object_scopes.append(self.custom_objects)
        return self

    def __exit__(self, *exc_info):
        scopes = _context.call_state.custom_object_scopes
        del scopes[max(i for i, table in enumerate(scopes) if table is self.custom_objects)]


custom_object_scope = CustomObjectScope


def _tables(custom_objects):
    """Where a saved name is looked up, in order: the scopes (innermost first), ``custom_objects``."""
    return list(reversed(_context.call_state.custom_object_scopes)) + [custom_objects or {}]


def register_builtin(module, name=None):
    """Class decorator for minikeras's own classes, saved under ``module`` (their public
    module, e.g. ``"minikeras.layers"``) and their class name, with no registered name;
    ``name``: the class name Keras saves instead, where its export differs from the class
    (``GroupQueryAttention`` for ``GroupedQueryAttention``)."""
    def decorator(cls):
        _builtins[(module, cls.__name__)] = cls
        _builtin_modules[cls] = module
        if name is not None:
            _builtins[(module, name)] = cls
            _saved_class_names[cls] = name
        return cls
    return decorator


def register_builtin_namespace(module, namespace):
    """Makes the public classes of ``namespace`` (a package, e.g. ``minikeras.layers``, saved as
    ``module``: ``"minikeras.layers"``) minikeras's own classes for saving and loading, like those
    decorated with ``register_builtin``. Classes are looked up by name when a file is saved or
    loaded, so a package registers itself at import, before its last name is defined."""
    _namespaces[module] = namespace


def _public_module(cls):
    module = _builtin_modules.get(cls)
    if module is not None:
        return module
    for name, namespace in _namespaces.items():
        if getattr(namespace, cls.__name__, None) is cls:
            return name
    return None


def _from_namespace(module, class_name):
    namespace = _namespaces.get(module)
    found = getattr(namespace, class_name, None) if namespace is not None and class_name else None
    return found if isinstance(found, type) else None


def get_registered_name(obj):
    """The name ``obj`` (a class or function, or an instance of a class) is saved under:
    ``"<package>><name>"`` when registered, else its ``__name__``."""
    cls = obj if isinstance(obj, type) or inspect.isfunction(obj) else type(obj)
    return _names.get(cls, cls.__name__)


def is_serializable(obj):
    """Whether ``load_model`` can find the class of ``obj`` again: minikeras's own or registered."""
    cls = obj if isinstance(obj, type) else type(obj)
    return cls in _names or _public_module(cls) is not None


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The class or function saved under ``name``: from the custom object scopes, then
    ``custom_objects``, then the registry, then ``module_objects`` (a dict); None if none has it."""
    for table in _tables(custom_objects) + [_registered, module_objects or {}]:
        if name in table:
            return table[name]
    return None


def serialize_keras_object(obj):
    """Keras 3's serialization: ``{"module", "class_name", "config", "registered_name"}`` for an
    object with ``get_config()``; a function as its name (``{"class_name": "function", "config":
    <registered name or __name__>, ...}``); None, numbers and strings as they are; lists, tuples
    and dicts item by item."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, (list, tuple)):
        return [serialize_keras_object(item) for item in obj]
    if isinstance(obj, dict):
        return {key: serialize_keras_object(value) for key, value in obj.items()}
    if inspect.isfunction(obj):
        return {"module": "builtins", "class_name": "function", "config": get_registered_name(obj),
                "registered_name": "function"}
    if not hasattr(obj, "get_config"):
        raise TypeError(f"Cannot serialize {obj!r}: it has no get_config()")
    if isinstance(obj, dtype_policies.DTypePolicy):  # Keras's modules and names (a DTypePolicyMap's included)
        return dtype_policies.serialize(obj)
    cls = type(obj)
    builtin = None if cls in _names else _public_module(cls)
    class_name = _saved_class_names.get(cls, cls.__name__) if builtin else cls.__name__
    out = {"module": builtin or cls.__module__, "class_name": class_name, "config": obj.get_config(),
           "registered_name": None if builtin else get_registered_name(cls)}
    if overrides_default(obj, "get_build_config"):  # a layer's own build state, as Keras saves it
        build_config = obj.get_build_config()
        if build_config is not None:
            out["build_config"] = serialize_keras_object(build_config)
    return out


def find_class(spec, custom_objects=None):
    """The class a ``serialize_keras_object`` dict names, or None when it is not known here.

    ``custom_objects`` is searched by registered name and by class name; then the registered
    classes; then minikeras's own, by module and class name.
    """
    class_name, registered = spec.get("class_name"), spec.get("registered_name")
    for table in _tables(custom_objects):
        for name in (registered, class_name):
            if name is not None and name in table:
                return table[name]
    if registered is not None and registered in _registered:
        return _registered[registered]
    if registered in (None, class_name) and class_name in _registered:  # added to get_custom_objects() by name
        return _registered[class_name]
    found = _builtins.get((spec.get("module"), class_name))
    if found is None and registered in (None, class_name):  # not a user's class ("package>Name")
        found = _from_namespace(spec.get("module"), class_name)
    return found


def deserialize_keras_object(config, custom_objects=None, safe_mode=True, *, what="object"):
    """The object ``serialize_keras_object`` described: ``cls.from_config(config)`` for a class's
    dict, the function a function's name stands for (a registered or custom one, else
    minikeras's activation or loss of that name); None, numbers, strings and lists of them as
    they are, a plain dict item by item. ``safe_mode`` is Keras's argument (no bytecode is read
    here).

    Raises:
      ValueError: naming the class or function when it is neither minikeras's own, registered,
        in a custom object scope, nor in ``custom_objects``.
    """
    if isinstance(config, (list, tuple)):
        return [deserialize_keras_object(item, custom_objects, safe_mode, what=what) for item in config]
    if not isinstance(config, dict):
        return config
    if "class_name" not in config or "config" not in config:
        return {key: deserialize_keras_object(value, custom_objects, safe_mode, what=what)
                for key, value in config.items()}
    if config["class_name"] == "function":
        return _function(config["config"], custom_objects)
    if config["class_name"] in POLICY_CLASSES and config.get("module") in ("keras", "keras.dtype_policies"):
        return dtype_policies.deserialize(config, custom_objects)
    return _from_spec(config, custom_objects, what)


def find_function(name, custom_objects=None):
    """The user's function saved as ``name``: from the custom object scopes, ``custom_objects``
    or the registry, by registered name (``"<package>><name>"``) or by the ``__name__`` of the one
    registered function of that name (what a layer's config records for its activation); None
    if none is."""
    found = get_registered_object(name, custom_objects)
    if found is None:
        named = [fn for fn in _registered.values() if inspect.isfunction(fn) and fn.__name__ == name]
        found = named[0] if len(named) == 1 else None
    return found


def _function(name, custom_objects):
    found = find_function(name, custom_objects)
    if found is None:
        found = next((getattr(module, name) for module in _FUNCTION_MODULES
                      if inspect.isfunction(getattr(module, name, None))), None)
    if found is None:
        raise ValueError(f"Unknown function {name!r}: decorate it with @mk.saving.register_keras_serializable() "
                         f"before loading, or pass it in custom_objects={{'{name}': ...}}")
    return found


def _from_spec(spec, custom_objects, what):
    cls = find_class(spec, custom_objects)
    if not (isinstance(cls, type) and hasattr(cls, "from_config")):
        name = spec.get("registered_name") or spec.get("class_name")
        module = str(spec.get("module"))
        if module.startswith("minikeras.") and name == spec.get("class_name"):
            raise ValueError(
                f"Unknown {what} class {name!r}: Keras's {'keras.' + module[len('minikeras.'):]}.{name} has no "
                f"minikeras counterpart yet. Pass a class that implements it in custom_objects={{'{name}': ...}}")
        raise ValueError(
            f"Unknown {what} class {spec.get('class_name')!r} (saved as {name!r}, module {spec.get('module')!r}): "
            f"decorate the class with @mk.saving.register_keras_serializable() before loading, or pass it in "
            f"custom_objects={{'{spec.get('class_name')}': ...}}")
    config = dict(spec.get("config") or {})
    if custom_objects and _takes_custom_objects(cls):
        instance = cls.from_config(config, custom_objects=custom_objects)
    else:
        instance = cls.from_config(config)
    build_config = spec.get("build_config")
    if not build_config or getattr(instance, "built", True) or not hasattr(instance, "open_name_scope"):
        return instance
    # Keras builds a layer with a build_config here, so its variables' path prefix is the one of
    # where it is deserialized (a loaded Sequential's layer is "dense/kernel", not "sequential/...").
    with instance.open_name_scope():
        if overrides_default(instance, "build_from_config") or overrides_default(instance, "get_build_config"):
            with CustomObjectScope(custom_objects):  # a layer's own build state: Keras rebuilds it here
                instance.build_from_config(build_config)
            instance.built = True  # as Keras: a build method need not say so
    return instance


def _takes_custom_objects(cls):
    try:
        return "custom_objects" in inspect.signature(cls.from_config).parameters
    except (TypeError, ValueError):
        return False
