"""Where each object's variables live in a Keras 3 weights file.

Keras 3 (``saving_lib._save_state``) gives every saveable a path and stores its own
variables (not its children's) in ``<path>/vars/0..n-1``: the model at the root (``vars``),
the layers of a Sequential (and here of every Model) in ``layers/<snake_case class>``,
``_1``, ``_2``... for repeated classes in order, sub-layers held by an attribute in
``<path>/<attribute>`` (a list or dict attribute adds ``/<snake_case class>[_n]``), and the
optimizer in ``optimizer``. A layer's own variables are its trainable ones, then its
non-trainable ones, each in creation order.
"""
from minikeras.module import Module, snake_case
from minikeras.tensor import Variable

# A Sequential's layer list (saved as ``layers``) and input placeholder (Keras saves neither
# under these names), and add_weight's bookkeeping.
_SKIPPED_ATTRIBUTES = frozenset({"_layers", "_input_layer", "_weight_declarations"})


class Entry:
    """One saveable: its path in the file, the object, and its own variables in file order."""

    __slots__ = ("path", "owner", "variables")

    def __init__(self, path, owner, variables):
        self.path, self.owner, self.variables = path, owner, variables

    @property
    def group_name(self):
        return f"{self.path}/vars" if self.path else "vars"

    @property
    def name(self):
        return getattr(self.owner, "name", None) or type(self.owner).__name__

    def describe(self):
        kind = type(self.owner).__name__
        return f"{kind} '{self.name}'" if self.path else f"model '{self.name}'"


def _is_model(module):
    from minikeras.models.model import Model
    return isinstance(module, Model)


def _is_sequential(module):
    from minikeras.models.sequential import Sequential
    return isinstance(module, Sequential)


def own_variables(module):
    """The variables ``module`` holds itself (not through sub-modules): trainable first."""
    declared = {}
    get_declared = getattr(module, "_declared_weights", None)
    if get_declared is not None:
        declared = {id(v): trainable for v, trainable in get_declared()}
    found = {}

    def visit(value):
        if isinstance(value, Variable):
            found.setdefault(id(value), value)
        elif isinstance(value, (list, tuple)):
            for item in value:
                visit(item)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item)

    for key, value in vars(module).items():
        if not _skipped(module, key):
            visit(value)
    if get_declared is not None:
        for v, _ in get_declared():
            found.setdefault(id(v), v)
    ordered = sorted(found.values(), key=lambda v: v._uid)
    trainable = [v for v in ordered if declared.get(id(v), v.trainable)]
    return trainable + [v for v in ordered if not declared.get(id(v), v.trainable)]


def _skipped(module, key):
    if key in _SKIPPED_ATTRIBUTES or key in getattr(module, "_NOT_TRACKED", ()):
        return True
    return (key == "optimizer" or key.startswith("_trainer")) and _is_model(module)  # saved apart / not state


def _name_key(name):
    return "~" + name if name.startswith("_") else name  # private attributes last, as Keras


def _children(module, layers_first):
    if layers_first and _is_model(module):
        yield "layers", module.layers
    for key in sorted(vars(module), key=_name_key):
        if not _skipped(module, key):
            yield key, vars(module)[key]


def _join(path, name):
    return f"{path}/{name}" if path else name


def entries(model, keras_subclass_paths=False):
    """Entries for ``model`` and everything below it, in Keras's visiting order.

    ``keras_subclass_paths=True`` gives the paths Keras 3 uses for a subclassed model (its
    layers under their attribute names rather than ``layers/...``), to read such files.
    """
    out, visited = [], set()

    def visit(module, path):
        if id(module) in visited:
            return
        visited.add(id(module))
        out.append(Entry(path, module, own_variables(module)))
        layers_first = not keras_subclass_paths or _is_sequential(module)
        for name, value in _children(module, layers_first):
            child_path = _join(path, name)
            if isinstance(value, Module):
                visit(value, child_path)
            elif isinstance(value, (list, tuple, dict)):
                used = {}
                for item in (value.values() if isinstance(value, dict) else value):
                    if isinstance(item, Module):
                        base = snake_case(type(item).__name__)
                        used[base] = used.get(base, -1) + 1
                        visit(item, _join(child_path, base if used[base] == 0 else f"{base}_{used[base]}"))

    visit(model, "")
    return out


def optimizer_entry(model):
    """The entry of ``model.optimizer`` (path ``optimizer``), or None without a built one."""
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None or not hasattr(optimizer, "variables"):
        return None
    return Entry("optimizer", optimizer, list(optimizer.variables))
