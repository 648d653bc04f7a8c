"""keras.tree against Keras 3.15 (each expected value is what Keras 3 gives for the same call)."""
import collections

import numpy as np
import pytest

import minikeras as mk
from minikeras import keras

t = keras.tree
P = collections.namedtuple("P", "x y")


def test_flatten_map_and_pack_as_keras():
    s = {"b": [1, (2, None)], "a": 3}
    assert t.flatten(s) == [3, 1, 2, None]  # keys sorted, None a leaf
    assert t.map_structure(lambda x: None if x is None else x * 10, s) == {"b": [10, (20, None)], "a": 30}
    assert t.pack_sequence_as(s, [10, 20, 30, 40]) == {"b": [20, (30, 40)], "a": 10}
    assert t.flatten({"b": 1, "a": {"d": 2, "c": 3}}) == [3, 2, 1]
    assert t.flatten(collections.OrderedDict([("z", 1), ("a", 2)])) == [1, 2]
    assert t.flatten(P(1, [2, 3])) == [1, 2, 3] and t.map_structure(lambda v: v * 2, P(1, [2, 3])) == P(2, [4, 6])
    assert t.flatten(None) == [None] and t.map_structure(lambda v: v, [None, 1], none_is_leaf=False) == [None, 1]
    assert t.map_structure(lambda a, b: a + b, [1, (2,)], [10, (20,)]) == [11, (22,)]
    tensor = mk.constant([1.0, 2.0])
    assert t.flatten([tensor, {"v": np.ones(2)}])[0] is tensor  # Tensors and arrays are leaves
    with pytest.raises(ValueError, match="The target structure has 3 leaves, but the flat sequence has 2"):
        t.pack_sequence_as([1, (2, 3)], [1, 2])


def test_paths_nesting_and_shapes_as_keras():
    assert t.flatten_with_path({"a": [1, 2]}) == [(("a", 0), 1), (("a", 1), 2)]
    assert t.flatten_with_path(P(1, [2, 3])) == [((0,), 1), ((1, 0), 2), ((1, 1), 3)]
    assert [t.is_nested(v) for v in ([1], 1, np.ones(2), None, [], {}, "ab")] == [
        True, False, False, False, True, True, False]
    assert t.lists_to_tuples([1, [2, {"a": [3]}]]) == (1, (2, {"a": (3,)}))
    assert t.map_shape_structure(len, [(1, 2), {"a": (None, 3)}]) == [2, {"a": 2}]


def test_assert_same_structure_as_keras():
    t.assert_same_structure([1, None], [1, 2])  # None is a leaf
    with pytest.raises(ValueError, match="Structures don't have the same nested structure."):
        t.assert_same_structure([1, 2], [1, (2,)])
    with pytest.raises(ValueError, match="Expected an instance of list, got \\(1, 2\\)."):
        t.assert_same_structure([1, 2], (1, 2))


@t.register_tree_node_class
class Pair:
    def __init__(self, first, second):
        self.first, self.second = first, second

    def tree_flatten(self):
        return (self.first, self.second), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def test_a_registered_class_is_a_node():
    doubled = t.map_structure(lambda v: v * 2, Pair(1, [2]))
    assert isinstance(doubled, Pair) and (doubled.first, doubled.second) == (2, [4])
    assert t.flatten(Pair(1, [2, 3])) == [1, 2, 3]


def test_traverse_as_keras_documents_it():
    structure = [(1, 2), [3], {"a": 4}]
    seen = []
    assert t.traverse(seen.append, structure, top_down=True) == structure
    assert seen == [structure, (1, 2), 1, 2, [3], 3, {"a": 4}, 4]
    seen = []
    assert t.traverse(seen.append, structure, top_down=False) == structure
    assert seen == [1, 2, (1, 2), 3, [3], 4, {"a": 4}, structure]
    assert t.traverse(lambda x: t.MAP_TO_NONE if x == [3] else None, structure) == [(1, 2), None, {"a": 4}]
    assert t.traverse(lambda x: "pair" if isinstance(x, tuple) else None, structure) == ["pair", [3], {"a": 4}]
    assert t.traverse(lambda x: tuple(x) if isinstance(x, list) else None, [[1], 2], top_down=False) == ((1,), 2)


def test_map_structure_up_to_and_assert_same_paths():
    assert t.map_structure_up_to([None, None], len, [[1, 1], [2, 2]]) == [2, 2]
    assert t.map_structure_up_to([None, [None, None]], str, [[1, 1], [2, 2]]) == ["[1, 1]", ["2", "2"]]
    assert t.map_structure_up_to({"a": None}, lambda x, y: x + y, {"a": 1}, {"a": 2}) == {"a": 3}
    with pytest.raises(ValueError):
        t.map_structure_up_to([None, None, None], len, [[1], [2]])
    point1, point2 = collections.namedtuple("Point1", "x y"), collections.namedtuple("Point2", "x y")
    t.assert_same_paths(point1(0, 1), point2(2, 3))
    t.assert_same_paths([0, 1], (2, 3))
    with pytest.raises(ValueError, match="Paths in `a` missing in `b`:\n\\{\\(1,\\)\\}"):
        t.assert_same_paths([0, 1], [0])
