"""The object graph of a Checkpoint: a checkpoint key for every Variable reachable from it.

As in TensorFlow, a Variable's key is the path of attribute names that leads to it from the
Checkpoint, then ``/.ATTRIBUTES/VARIABLE_VALUE``: ``net/l1/kernel/.ATTRIBUTES/VARIABLE_VALUE``.
Modules (layers, models) are walked through the attributes that hold their state
(``module.tracked_items``); an item inside a list or dict attribute is ``<attribute>/<n>``,
n counting in order. A model's compiled optimizer is ``<model>/optimizer``. An optimizer's
variables are ``_iterations``, ``_learning_rate`` and ``_variables/<n>`` (its slots), as Keras
3 optimizers under TF name them. An object reached twice keeps its first path.
"""
from minikeras.module import Module, tracked_items
from minikeras.optimizers.base import Optimizer
from minikeras.tensor import Variable

VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"


def is_checkpointable(value):
    """Whether ``value`` can be a child of a Checkpoint: a Variable, Module, optimizer or
    Checkpoint, or a list, tuple or dict of them (``vars=[v1, v2]`` is ``vars/0``, ``vars/1``)."""
    if isinstance(value, (list, tuple)):
        return all(is_checkpointable(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_checkpointable(v) for k, v in value.items())
    return isinstance(value, (Variable, Module, Optimizer)) or hasattr(value, "checkpoint_children")


def _optimizer_children(optimizer):
    variables = optimizer.variables
    for i, variable in enumerate(variables):
        if i == 0 and variable.name == "iteration":
            yield "_iterations", variable
        elif i == 1 and variable.name == "learning_rate":
            yield "_learning_rate", variable
        else:
            yield f"_variables/{i}", variable


def _module_children(module):
    counts = {}
    for attribute, depth, item in tracked_items(module):
        if depth == 0:
            yield attribute, item
        else:
            n = counts.get(attribute, 0)
            counts[attribute] = n + 1
            yield f"{attribute}/{n}", item
    optimizer = getattr(module, "optimizer", None)
    if isinstance(optimizer, Optimizer):
        yield "optimizer", optimizer


def children_of(obj):
    """(name, child) pairs of a Module, an optimizer or a Checkpoint (``checkpoint_children``)."""
    if isinstance(obj, Optimizer):
        return _optimizer_children(obj)
    if isinstance(obj, Module):
        return _module_children(obj)
    if isinstance(obj, Variable):
        return ()
    if isinstance(obj, (list, tuple)):
        return ((str(i), item) for i, item in enumerate(obj))
    if isinstance(obj, dict):
        return obj.items()
    return obj.checkpoint_children()


def variables_by_key(root):
    """``{key: Variable}`` for every Variable reachable from ``root`` (a Checkpoint), in walk order."""
    found, seen = {}, set()

    def visit(obj, path):
        if id(obj) in seen:
            return
        if not isinstance(obj, (list, tuple, dict)):  # containers can be equal without being shared
            seen.add(id(obj))
        if isinstance(obj, Variable):
            found[path + VALUE_SUFFIX] = obj
            return
        for name, child in children_of(obj):
            visit(child, f"{path}/{name}" if path else name)

    visit(root, "")
    return found
