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
"""
import inspect

_registered = {}  # registered name -> class
_names = {}  # class -> registered name
_builtins = {}  # (public module, class name) -> class
_builtin_modules = {}  # class -> public module
_namespaces = {}  # public module -> the module object (its classes found there by name, when looked up)


def register_keras_serializable(package="Custom", name=None):
    """Registers a class so that ``load_model`` finds it by ``"<package>><name>"``.

    Args:
      package: a namespace for the name (the registered name is ``package + ">" + name``).
      name: the class's name in files; default: its ``__name__``.

    Returns:
      A class decorator (the class is returned unchanged).

    Raises:
      ValueError: if another class is registered under the same name already.
    """
    def decorator(cls):
        registered = f"{package}>{name or cls.__name__}"
        previous = _registered.get(registered)
        if previous is not None and previous is not cls:
            raise ValueError(f"register_keras_serializable: '{registered}' is already registered to {previous!r}; "
                             f"give {cls!r} another package or name")
        if not hasattr(cls, "get_config"):
            raise TypeError(f"register_keras_serializable: {cls!r} has no get_config(), so it cannot be saved")
        _registered[registered] = cls
        _names[cls] = registered
        return cls
    return decorator


def register_builtin(module):
    """Class decorator for minikeras's own classes, saved under ``module`` (their public
    module, e.g. ``"minikeras.layers"``) and their class name, with no registered name."""
    def decorator(cls):
        _builtins[(module, cls.__name__)] = cls
        _builtin_modules[cls] = module
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
    """The name ``obj`` (a class, or an instance of one) is saved under: ``"<package>><name>"``
    when registered, else its class name."""
    cls = obj if isinstance(obj, type) else type(obj)
    return _names.get(cls, cls.__name__)


def is_serializable(obj):
    """Whether ``load_model`` can find the class of ``obj`` again: minikeras's own or registered."""
    cls = obj if isinstance(obj, type) else type(obj)
    return cls in _names or _public_module(cls) is not None


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The class saved under ``name``: from ``custom_objects``, then the registered classes,
    then ``module_objects`` (a dict); None if none has it."""
    for table in (custom_objects or {}, _registered, module_objects or {}):
        if name in table:
            return table[name]
    return None


def serialize_keras_object(obj):
    """``{"module", "class_name", "config", "registered_name"}`` for an object with ``get_config()``."""
    cls = type(obj)
    builtin = None if cls in _names else _public_module(cls)
    return {"module": builtin or cls.__module__, "class_name": cls.__name__, "config": obj.get_config(),
            "registered_name": None if builtin else get_registered_name(cls)}


def find_class(spec, custom_objects=None):
    """The class a ``serialize_keras_object`` dict names, or None when it is not known here.

    ``custom_objects`` is searched by registered name and by class name; then the registered
    classes; then minikeras's own, by module and class name.
    """
    class_name, registered = spec.get("class_name"), spec.get("registered_name")
    custom_objects = custom_objects or {}
    for name in (registered, class_name):
        if name is not None and name in custom_objects:
            return custom_objects[name]
    if registered is not None and registered in _registered:
        return _registered[registered]
    found = _builtins.get((spec.get("module"), class_name))
    if found is None and registered in (None, class_name):  # not a user's class ("package>Name")
        found = _from_namespace(spec.get("module"), class_name)
    return found


def deserialize_keras_object(spec, custom_objects=None, what="object"):
    """The object a ``serialize_keras_object`` dict describes: ``cls.from_config(config)``.

    Raises:
      ValueError: naming the class when it is neither minikeras's own, registered, nor in
        ``custom_objects``.
    """
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
        return cls.from_config(config, custom_objects=custom_objects)
    return cls.from_config(config)


def _takes_custom_objects(cls):
    try:
        return "custom_objects" in inspect.signature(cls.from_config).parameters
    except (TypeError, ValueError):
        return False
