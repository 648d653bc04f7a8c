"""``keras.tree``: nested structures (lists, tuples, namedtuples, dicts) as Keras 3 walks them.

    keras.tree.flatten({"b": 1, "a": [2, None]})              # [2, None, 1]: dict keys sorted
    keras.tree.map_structure(lambda x: x * 2, {"a": (1, 2)})  # {"a": (2, 4)}

As Keras 3's (optree with ``none_is_leaf=True``): None is a leaf, a dict's values come in the
order of its sorted keys, Tensors, Variables, arrays and strings are leaves, and a list is not a
tuple. Built on ``jax.tree_util``; ``register_tree_node_class`` takes a class with
``tree_flatten``/``tree_unflatten``, the protocol both use.
"""
import jax

_tree = jax.tree_util


def _none_is_leaf(value):
    return value is None


def _treedef(structure, none_is_leaf=True):
    return _tree.tree_structure(structure, is_leaf=_none_is_leaf if none_is_leaf else None)


def is_nested(structure):
    """Whether ``structure`` is a list, tuple, dict or registered node (an empty one too)."""
    treedef = _treedef(structure)
    return not (treedef.num_nodes == 1 and treedef.num_leaves == 1)  # an empty list is a node


def flatten(structure):
    """The leaves of ``structure`` in order (a dict's by sorted key), None included."""
    return _tree.tree_leaves(structure, is_leaf=_none_is_leaf)


def flatten_with_path(structure):
    """``[(path, leaf)]``: each path a tuple of list/tuple indices and dict keys."""
    out = []
    for keys, leaf in _tree.tree_flatten_with_path(structure, is_leaf=_none_is_leaf)[0]:
        node, path = structure, []
        for key in keys:
            if isinstance(key, _tree.SequenceKey):
                step = key.idx
            elif isinstance(key, _tree.DictKey):
                step = key.key
            elif isinstance(key, _tree.GetAttrKey):  # a namedtuple's field: its index, as Keras
                step = type(node)._fields.index(key.name)
            else:
                step = key.key
            path.append(step)
            node = node[step]
        out.append((tuple(path), leaf))
    return out


def assert_same_structure(a, b, check_types=None):
    """Raises ValueError unless ``a`` and ``b`` nest the same way (a list and a tuple differ);
    ``check_types`` is Keras's argument, kept for its signature."""
    if _treedef(a) != _treedef(b):
        if type(a) is not type(b) and (is_nested(a) or is_nested(b)):
            raise ValueError(f"Expected an instance of {type(a).__name__}, got {b}.")
        raise ValueError("Structures don't have the same nested structure.")


def map_structure(func, *structures, none_is_leaf=True):
    """``func`` applied to the leaves of ``structures`` (which must nest alike), in their structure.
    With ``none_is_leaf=False`` a None is kept as it is, without calling ``func``."""
    if not structures:
        raise ValueError("Must provide at least one structure")
    first = _treedef(structures[0], none_is_leaf)
    for other in structures[1:]:
        if _treedef(other, none_is_leaf) != first:
            raise ValueError(f"Structures don't have the same nested structure: {structures[0]} and {other}")
    return _tree.tree_map(func, *structures, is_leaf=_none_is_leaf if none_is_leaf else None)


def pack_sequence_as(structure, flat_sequence):
    """``flat_sequence``'s items put in the nesting of ``structure`` (the inverse of ``flatten``)."""
    treedef = _treedef(structure)
    flat = list(flat_sequence)
    if len(flat) != treedef.num_leaves:
        raise ValueError(f"The target structure has {treedef.num_leaves} leaves, but the flat sequence has "
                         f"{len(flat)} elements: structure={structure}, flat_sequence={flat_sequence}")
    return _tree.tree_unflatten(treedef, flat)


def lists_to_tuples(structure):
    """``structure`` with every list turned into a tuple, at every depth."""
    if isinstance(structure, dict):
        return type(structure)((key, lists_to_tuples(value)) for key, value in structure.items())
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*(lists_to_tuples(value) for value in structure))
    if isinstance(structure, (list, tuple)):
        return tuple(lists_to_tuples(value) for value in structure)
    return structure


class MAP_TO_NONE:  # noqa: N801 - Keras's name
    """What ``traverse``'s ``func`` returns to replace a subtree with None."""


def _children(structure):
    """``(children, treedef)`` one level down, or None for a leaf."""
    children, treedef = _tree.tree_flatten(structure, is_leaf=lambda x: x is not structure)
    if treedef.num_nodes == 1 and treedef.num_leaves == 1:
        return None
    return children, treedef


def traverse(func, structure, top_down=True):
    """Walks ``structure`` depth-first, calling ``func`` on every subtree (the whole structure and
    each leaf included). Top-down: a subtree for which ``func`` returns something other than None
    is replaced by it and not walked into. Bottom-up: ``func`` sees each subtree with its
    children already walked, and a result other than None replaces it. ``MAP_TO_NONE`` as a
    result puts None in its place."""
    def walk_children():
        found = _children(structure)
        if found is None:
            return structure
        children, treedef = found
        return _tree.tree_unflatten(treedef, [traverse(func, c, top_down=top_down) for c in children])

    if top_down:
        result = func(structure)
        if result is None:
            return walk_children()
    else:
        walked = walk_children()
        result = func(walked)
        if result is None:
            return walked
    return None if result is MAP_TO_NONE else result


def map_structure_up_to(shallow_structure, func, *structures):
    """``func`` mapped over ``structures`` down to the leaves of ``shallow_structure`` only: what
    lies deeper in ``structures`` is handed to ``func`` whole.

    >>> map_structure_up_to([None, None], len, [[1, 1], [2, 2]])   # [2, 2]

    (Keras 3.15's own implementation raises for the None leaves of its documented example; this
    one does what the documentation says, and agrees with Keras for other leaves.)
    """
    if not structures:
        raise ValueError("Must provide at least one structure")
    shallow = _treedef(shallow_structure)
    parts = [shallow.flatten_up_to(s) for s in structures]
    return _tree.tree_unflatten(shallow, [func(*args) for args in zip(*parts)])


def _paths(structure):
    return {path for path, _ in flatten_with_path(structure)}


def assert_same_paths(a, b):
    """Raises ValueError unless ``a`` and ``b`` have the same paths (list/tuple indices, dict keys),
    whatever their collection types; the message lists the paths each lacks."""
    a_paths, b_paths = _paths(a), _paths(b)
    if a_paths != b_paths:
        message = "`a` and `b` don't have the same paths."
        if a_paths - b_paths:
            message += f"\nPaths in `a` missing in `b`:\n{a_paths - b_paths}"
        if b_paths - a_paths:
            message += f"\nPaths in `b` missing in `a`:\n{b_paths - a_paths}"
        raise ValueError(message)


def _is_shape(value):
    return isinstance(value, (list, tuple)) and all(n is None or isinstance(n, int) for n in value)


def map_shape_structure(func, structure):
    """``func`` applied to each shape (a tuple or list of ints and None) in ``structure``."""
    return _tree.tree_map(func, structure, is_leaf=lambda v: v is None or _is_shape(v))


def register_tree_node_class(cls):
    """Registers a class with ``tree_flatten()`` -> ``(children, aux)`` and the classmethod
    ``tree_unflatten(aux, children)`` as a node: its children are walked, it is not a leaf."""
    return _tree.register_pytree_node_class(cls)
