"""keras.name_scope against Keras 3.15: the paths of Variables and layer weights created inside
it (the expected paths are those Keras 3.15 gives for the same code)."""
import threading

import pytest

from minikeras import keras
from minikeras.keras.name_scope import current_path


def test_scopes_prefix_variable_and_weight_paths():
    with keras.name_scope("outer"):
        v = keras.Variable(1.0, name="v")
        dense = keras.layers.Dense(2, name="d")
        dense.build((None, 3))
        with keras.name_scope("inner"):
            w = keras.Variable(1.0, name="w")
            inner = keras.layers.Dense(2, name="e")
            inner.build((None, 3))
    assert (v.path, v.name, w.path) == ("outer/v", "v", "outer/inner/w")
    assert (dense.kernel.path, dense.kernel.name, dense.bias.path) == ("outer/d/kernel", "kernel", "outer/d/bias")
    assert inner.kernel.path == "outer/inner/e/kernel"
    assert keras.Variable(1.0, name="after").path == "after"
    assert current_path() == ""


def test_a_layer_takes_the_scope_it_is_built_in():
    dense = keras.layers.Dense(2, name="late_dense")
    with keras.name_scope("late"):
        dense.build((None, 3))
    assert dense.kernel.path == "late/late_dense/kernel"
    x = keras.Input((3,))
    with keras.name_scope("blk"):
        y = keras.layers.Dense(2, name="dd")(x)
    assert [w.path for w in keras.Model(x, y).weights] == ["blk/dd/kernel", "blk/dd/bias"]


def test_override_parent_deduplicate_and_caller():
    scope = keras.name_scope("abc")
    assert (scope.name, scope.deduplicate, scope.override_parent) == ("abc", True, None)
    with keras.name_scope("p"):
        with keras.name_scope("q", override_parent="r"):
            assert keras.Variable(1.0, name="z").path == "r/q/z"
        with keras.name_scope("p"):  # no caller: a second level, as Keras
            assert current_path() == "p/p"
    owner = object()
    with keras.name_scope("s", caller=owner):
        with keras.name_scope("s", caller=owner):
            assert current_path() == "s"
        with keras.name_scope("s", caller=owner, deduplicate=False):
            assert current_path() == "s/s"
        assert current_path() == "s"


def test_scopes_belong_to_their_thread():
    seen = []
    with keras.name_scope("main"):
        thread = threading.Thread(target=lambda: seen.append(keras.Variable(1.0, name="t").path))
        thread.start()
        thread.join()
    assert seen == ["t"]


def test_bad_names():
    for bad in (3, "a/b"):
        with pytest.raises(ValueError, match=f"cannot contain character `/`. Received: name={bad}"):
            keras.name_scope(bad)
