"""mk.Module: Variables and sub-Modules found through attributes, lists, tuples and dicts."""
import numpy as np

import minikeras as mk
from minikeras.module import clear_session


class Leaf(mk.Module):
    def __init__(self, value, name=None):
        super().__init__(name=name)
        self.w = mk.Variable(np.full((2,), value, np.float32), name="w")


class Tree(mk.Module):
    def __init__(self):
        super().__init__()
        self.a = mk.Variable(1.0, name="a")
        self.frozen = mk.Variable(2.0, trainable=False, name="frozen")
        self.in_list = [mk.Variable(3.0, name="l0"), Leaf(4.0, name="leaf_in_list")]
        self.in_tuple = (mk.Variable(5.0, name="t0"), [mk.Variable(6.0, name="nested")])
        self.in_dict = {"x": mk.Variable(7.0, name="d0"), "child": Leaf(8.0, name="leaf_in_dict")}
        self.shared = self.a                      # the same Variable twice: listed once
        self.not_state = [1, "two", np.ones(3)]   # plain values are ignored


def test_variables_are_found_through_attributes_lists_tuples_and_dicts():
    tree = Tree()
    names = [v.name for v in tree.trainable_variables]
    assert names == ["a", "l0", "w", "t0", "nested", "d0", "w"]  # creation order
    assert [v.name for v in tree.non_trainable_variables] == ["frozen"]
    assert [v.name for v in tree.variables] == names + ["frozen"]  # trainable first
    assert {m.name for m in tree.submodules} == {"leaf_in_list", "leaf_in_dict"}
    assert all(isinstance(m, Leaf) for m in tree.submodules)


def test_module_names_are_snake_case_and_unique():
    clear_session()
    assert Leaf(0.0).name == "leaf"
    assert Leaf(0.0).name == "leaf_1"
    assert Leaf(0.0, name="mine").name == "mine"
    assert Tree().name == "tree"
    from minikeras.module import snake_case
    assert snake_case("BatchNormalization") == "batch_normalization"
    assert snake_case("Conv2D") == "conv2d"
    assert snake_case("MaxPooling2D") == "max_pooling2d"


def test_cycles_and_reassignment_are_handled():
    parent, child = Leaf(1.0), Leaf(2.0)
    parent.child = child
    child.parent = parent            # a cycle must not recurse forever
    assert len(parent.variables) == 2
    parent.child = None              # a removed sub-module takes its Variables with it
    assert len(parent.variables) == 1


class Net(mk.Module):
    """The tf.Module tutorial idiom: Keras layers as attributes of a plain Module."""

    def __init__(self):
        super().__init__()
        self.flatten = mk.layers.Flatten()
        self.dense = mk.layers.Dense(3, kernel_initializer="ones")

    def __call__(self, x):
        return self.dense(self.flatten(x))


def test_module_with_layers_exposes_their_weights_after_the_first_call():
    net = Net()
    assert net.variables == []  # layers build lazily
    assert {type(m).__name__ for m in net.submodules} == {"Flatten", "Dense"}
    x = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
    out = net(x)
    np.testing.assert_allclose(out.numpy(), np.repeat(x.reshape(2, 4).sum(1, keepdims=True), 3, axis=1))
    assert [v.shape for v in net.trainable_variables] == [(4, 3), (3,)]
    assert net.trainable_variables[0] is net.dense.kernel
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(net(x))
    grads = tape.gradient(loss, net.trainable_variables)
    np.testing.assert_allclose(grads[0].numpy(), np.repeat(x.reshape(2, 4).sum(0)[:, None], 3, axis=1))
    np.testing.assert_allclose(grads[1].numpy(), [2.0, 2.0, 2.0])


def test_module_repr_names_it():
    assert repr(Leaf(0.0, name="leafy")) == "<Leaf name='leafy'>"


def test_module_without_super_init_still_has_a_name():
    class Bare(mk.Module):
        def __init__(self):
            self.v = mk.Variable(1.0)

    clear_session()
    bare = Bare()
    assert len(bare.variables) == 1
    assert bare.name == "bare"


# -- the one walker and its skip rule --------------------------------------------------------------
class Skipping(mk.Module):
    _NOT_TRACKED = frozenset({"cache"})

    def __init__(self):
        super().__init__()
        self.kept = mk.Variable(1.0, name="kept")
        self.cache = [mk.Variable(2.0, name="cached"), Leaf(0.0, name="cached_leaf")]  # named in _NOT_TRACKED
        self.children = [Leaf(3.0, name="child"), {"deep": [Leaf(4.0, name="deep")]}]


def test_tracked_items_skip_not_tracked_names_and_give_depths():
    from minikeras.module import tracked_items
    module = Skipping()
    found = [(key, depth, getattr(item, "name", None)) for key, depth, item in tracked_items(module)]
    assert [(key, depth) for key, depth, _ in found] == [("kept", 0), ("children", 1), ("children", 3)]
    assert [name for _, _, name in found][1:] == ["child", "deep"]
    assert [v.name for v in module.variables] == ["kept", "w", "w"]
    assert [m.name for m in module.submodules] == ["child", "deep"]


def test_untracked_types_are_left_out_of_variables_but_walked_past():
    class WithMetric(mk.layers.Layer):
        def __init__(self):
            super().__init__()
            self.tracker = mk.metrics.Mean(name="tracker")   # a Layer's Metrics are not its weights
            self.scale = self.add_weight("scale", (2,), "ones")

    layer = WithMetric()
    assert [v.name for v in layer.variables] == ["scale"]
    assert layer.submodules == []


def test_model_layers_and_variables_skip_training_state():
    model = mk.Sequential([mk.layers.Input((3,)), mk.layers.Dense(2)])
    model.compile("adam", "mse")
    model.fit(np.ones((4, 3), np.float32), np.ones((4, 2), np.float32), verbose=0)
    assert [type(layer).__name__ for layer in model.layers] == ["Dense"]
    assert [v.name for v in model.variables] == ["kernel", "bias"]  # no optimizer slots, no loss tracker
    slots = {id(v) for v in model.optimizer.variables}
    assert slots and not slots & {id(v) for v in model.variables}
    assert mk.models.Model.TRAINING_STATE <= model._NOT_TRACKED
