"""Where each object's variables live in a Keras 3 weights file.

Keras 3 (``saving_lib._save_state``) gives every saveable a path and stores its own
variables (not its children's) in ``<path>/vars/0..n-1``: the model at the root (``vars``),
the layers of a Sequential (and here of every Model) in ``layers/<snake_case class>``,
``_1``, ``_2``... for repeated classes in order, sub-layers held by an attribute in
``<path>/<attribute>`` (a list or dict attribute adds ``/<snake_case class>[_n]``), and the
optimizer in ``optimizer``. A ``SeedGenerator`` held by a layer is not filed (Keras 3 saves no
seed state). A layer's own variables are its trainable ones, then its
non-trainable ones, each in creation order.

The attributes searched are those of ``module.tracked_items``, the walker behind
``variables`` and ``Model.layers``, with its one skip rule (``_NOT_TRACKED``). A Metric held by
an attribute (a custom ``train_step``'s tracker) and what is below it are *optional* entries:
Keras 3 writes no metric state (its Metric has no ``save_own_variables``), so they are not
written, and they are read only from a file that has their group (an older minikeras file).
A model says how its layers are filed (``saves_layers``, ``keras_files_layers_by_attribute``).
"""
from minikeras.metrics.base import Metric
from minikeras.module import Module, own_variables, snake_case, tracked_items
from minikeras.random.seed_generator import SeedGenerator


class Entry:
    """One saveable: its path in the file, the object, and its own variables in file order;
    ``optional`` for metric state (never written, read when the file has it)."""

    __slots__ = ("path", "owner", "variables", "optional")

    def __init__(self, path, owner, variables, optional=False):
        self.path, self.owner, self.variables, self.optional = path, owner, variables, optional

    @property
    def group_name(self):
        return f"{self.path}/vars" if self.path else "vars"

    @property
    def name(self):
        return getattr(self.owner, "name", None) or type(self.owner).__name__

    def describe(self):
        kind = type(self.owner).__name__
        return f"{kind} '{self.name}'" if self.path else f"model '{self.name}'"


def _name_key(name):
    return "~" + name if name.startswith("_") else name  # private attributes last, as Keras


def _children(module, layers_first):
    """(attribute, sub-modules) of ``module`` in file order: a model's ``layers`` first, then
    the other attributes by name; a module in a container nested in a container is not filed."""
    if layers_first:
        yield "layers", module.layers
    by_attribute = {}
    for key, depth, item in tracked_items(module):
        if isinstance(item, Module) and not isinstance(item, SeedGenerator) and depth <= 1:
            by_attribute.setdefault(key, (depth, []))[1].append(item)
    for key in sorted(by_attribute, key=_name_key):
        depth, items = by_attribute[key]
        yield key, items[0] if depth == 0 else items


def _join(path, name):
    return f"{path}/{name}" if path else name


def entries(model, keras_subclass_paths=False):
    """Entries for ``model`` and everything below it, in Keras's visiting order.

    ``keras_subclass_paths=True`` gives the paths Keras 3 uses for a subclassed model (its
    layers under their attribute names rather than ``layers/...``), to read such files.
    """
    out, visited = [], set()

    def visit(module, path, optional=False):
        if id(module) in visited:
            return
        visited.add(id(module))
        optional = optional or isinstance(module, Metric)
        out.append(Entry(path, module, own_variables(module), optional))
        layers_first = getattr(module, "saves_layers", False) and not (
            keras_subclass_paths and module.keras_files_layers_by_attribute)
        for name, value in _children(module, layers_first):
            child_path = _join(path, name)
            if isinstance(value, Module):
                visit(value, child_path, optional)
            else:
                used = {}
                for item in value:
                    base = snake_case(type(item).__name__)
                    used[base] = used.get(base, -1) + 1
                    visit(item, _join(child_path, base if used[base] == 0 else f"{base}_{used[base]}"), optional)

    visit(model, "")
    return out


def optimizer_entry(model):
    """The entry of ``model.optimizer`` (path ``optimizer``), or None without a built one."""
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None or not hasattr(optimizer, "variables"):
        return None
    return Entry("optimizer", optimizer, list(optimizer.variables))
