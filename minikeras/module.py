"""Module: an object that tracks the Variables and sub-Modules assigned to its attributes."""
import gc
import re

from minikeras.symbolic import clear_op_names
from minikeras.tensor import Variable, in_creation_order

_name_counts = {}


def snake_case(name):
    """'Conv2D' -> 'conv2d', 'BatchNormalization' -> 'batch_normalization' (Keras's rule)."""
    name = re.sub(r"\W+", "", name)
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def compact_snake_case(name):
    """'GlorotUniform' -> 'glorot_uniform', 'RMSprop' -> 'rmsprop', 'KLDivergence' -> 'kldivergence':
    a capital starts a word unless it follows a capital (the names of initializers, losses and
    optimizers)."""
    return "".join(("_" + c.lower()) if c.isupper() and i and not name[i - 1].isupper() else c.lower()
                   for i, c in enumerate(name))


def unique_name(base):
    """'dense', then 'dense_1', 'dense_2', ... for each base name in this session."""
    count = _name_counts.get(base, 0)
    _name_counts[base] = count + 1
    return base if count == 0 else f"{base}_{count}"


def clear_session(free_memory=True):
    """Resets the automatic layer and op names (the next Dense is 'dense' again), as Keras's
    ``clear_session``; ``free_memory`` also runs Python's garbage collector, as Keras does."""
    _name_counts.clear()
    clear_op_names()
    if free_memory:
        gc.collect()


def tracked_items(module):
    """The Variables and Modules held by ``module``'s attributes: the one walker behind
    ``variables``, ``submodules``, ``Model.layers`` and the layout of weights files.

    The skip rule: attributes named in the class's ``_NOT_TRACKED`` are never searched
    (a model's optimizer and training state, a layer's call bookkeeping). Every other
    attribute is searched inside lists, tuples and dicts (nested ones too), but not inside
    the Variables and Modules found: callers recurse into Modules themselves.

    Yields:
      ``(attribute, depth, item)`` in attribute-assignment order, items of a container in
      its order; ``depth`` is 0 for an item held by the attribute itself, 1 for one in a
      list/tuple/dict there, 2 for one in a container inside that, and so on.
    """
    skipped = getattr(module, "_NOT_TRACKED", ())
    for key, value in list(vars(module).items()):
        if key not in skipped:
            yield from _items(key, value, 0)


def _items(key, value, depth):
    if isinstance(value, (Variable, Module)):
        yield key, depth, value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _items(key, item, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _items(key, item, depth + 1)


def _walk(module, seen, out_variables, out_modules, untracked):
    """Collects the Variables and Modules below ``module`` (depth first), not entering
    sub-Modules of the ``untracked`` types (their state is not ``module``'s)."""
    for _, _, item in tracked_items(module):
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, Variable):
            out_variables.append(item)
        elif not (untracked and isinstance(item, untracked)):
            out_modules.append(item)
            _walk(item, seen, out_variables, out_modules, untracked)


def own_variables(module):
    """The variables ``module`` holds itself (not through sub-modules), in Keras's file order:
    the trainable ones, then the non-trainable ones, each in creation order (a Layer's
    ``add_weight`` declarations decide which is which, so a frozen layer keeps its order).
    A module whose ``keras_file_variables()`` returns a list files that list instead (a LoRA
    layer: its merged matrix in the matrix's place, no factors; ``layers/lora.py``)."""
    in_file = getattr(module, "keras_file_variables", None)
    listed = in_file() if in_file is not None else None
    if listed is not None:
        return listed
    declared = {}
    get_declared = getattr(module, "declared_weights", None)
    if get_declared is not None:
        declared = {id(v): trainable for v, trainable in get_declared()}
    found = {}
    for _, _, item in tracked_items(module):
        if isinstance(item, Variable):
            found.setdefault(id(item), item)
    if get_declared is not None:
        for v, _ in get_declared():
            found.setdefault(id(v), v)
    ordered = in_creation_order(found.values())
    trainable = [v for v in ordered if declared.get(id(v), v.trainable)]
    return trainable + [v for v in ordered if not declared.get(id(v), v.trainable)]


def keras_default(method):
    """Marks ``method`` as a base class's default of one of Keras's saving hooks
    (``get_build_config``, ``save_own_variables``...): saving calls an object's hook where its
    class replaced the default (``overrides_default``) and does the default's work itself
    otherwise, with its own checks."""
    method.keras_default = True
    return method


def overrides_default(obj, name):
    """Whether ``obj``'s class has a method ``name`` of its own, not one marked ``keras_default``."""
    method = getattr(type(obj), name, None)
    return callable(method) and not getattr(method, "keras_default", False)


class Module:
    """A container of state (``tf.Module``): Variables and sub-Modules assigned as attributes
    (also inside lists, tuples and dicts) are found automatically.

    >>> class Net(mk.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = mk.Variable(mk.ones((2, 1)))
    ...     def __call__(self, x):
    ...         return x @ self.w
    >>> [v.shape for v in Net().trainable_variables]
    [(2, 1)]
    """

    _NOT_TRACKED = frozenset()  # attribute names never searched for state (see tracked_items)
    _name = None

    def __init__(self, name=None):
        self._name = unique_name(snake_case(type(self).__name__)) if name is None else name

    @property
    def name(self):
        if self._name is None:  # a subclass that skipped super().__init__()
            self._name = unique_name(snake_case(type(self).__name__))
        return self._name

    def _untracked_types(self):
        """Types of sub-Modules whose state is not part of this one's (Layers leave out Metrics)."""
        return ()

    def _collect(self):
        variables, modules = [], []
        _walk(self, {id(self)}, variables, modules, self._untracked_types())
        return variables, modules

    @property
    def variables(self):
        """Every Variable of this module and its sub-modules: trainable first, each group in
        order of creation (the order weights files and optimizer slots rely on)."""
        variables = in_creation_order(self._collect()[0])
        return [v for v in variables if v.trainable] + [v for v in variables if not v.trainable]

    @property
    def trainable_variables(self):
        return [v for v in self.variables if v.trainable]

    @property
    def non_trainable_variables(self):
        return [v for v in self.variables if not v.trainable]

    @property
    def submodules(self):
        """All modules reachable from this one (children, grandchildren, ...)."""
        return self._collect()[1]

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r}>"
