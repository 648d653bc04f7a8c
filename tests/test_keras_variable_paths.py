"""Variable paths as Keras 3.15 gives them (``variable.path``, what keras.distribution's
LayoutMap and OptimizerMap keys match): a layer opens a scope of its own name while it is built
and called, so a Sequential's or a subclassed model's layers have its prefix; a functional
model's layers, built when it is made, do not; a layer loaded from a config with a build_config
is built where it is deserialized. Expected values printed by Keras 3.15 on JAX for the same code."""
import os

import numpy as np

from minikeras import keras

L = keras.layers


def _paths(model):
    return [v.path for v in model.variables]


def test_sequential_paths():
    seq = keras.Sequential([keras.Input((3,)), L.Dense(2, name="d1"), L.Dense(1, name="d2")], name="seq")
    assert _paths(seq) == ["seq/d1/kernel", "seq/d1/bias", "seq/d2/kernel", "seq/d2/bias"]
    lazy = keras.Sequential([L.Dense(2, name="e1")], name="seq2")
    lazy(np.ones((1, 3)))
    assert _paths(lazy) == ["seq2/e1/kernel", "seq2/e1/bias"]
    built = keras.Sequential([L.Dense(2, name="f1")], name="seq3")
    built.build((None, 3))
    assert _paths(built) == ["seq3/f1/kernel", "seq3/f1/bias"]
    outer = keras.Sequential([keras.Input((3,)), keras.Sequential([L.Dense(2, name="i1")], name="innerseq"),
                              L.Dense(1, name="o1")], name="outer")
    assert _paths(outer) == ["outer/innerseq/i1/kernel", "outer/innerseq/i1/bias", "outer/o1/kernel",
                             "outer/o1/bias"]
    prebuilt = L.Dense(2, name="k1")
    prebuilt.build((None, 3))
    assert _paths(keras.Sequential([prebuilt], name="seq4")) == ["k1/kernel", "k1/bias"]  # fixed when built


def test_functional_subclassed_and_layer_paths():
    x = keras.Input((3,))
    assert _paths(keras.Model(x, L.Dense(2, name="g1")(x), name="func")) == ["g1/kernel", "g1/bias"]
    inner = keras.Model(x, L.Dense(2, name="j1")(x), name="innerf")
    x2 = keras.Input((3,))
    assert _paths(keras.Model(x2, L.Dense(1, name="j2")(inner(x2)), name="outerf")) == [
        "j1/kernel", "j1/bias", "j2/kernel", "j2/bias"]

    class Sub(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.a, self.b = L.Dense(2, name="h1"), L.Dense(1, name="h2")

        def call(self, x):
            return self.b(self.a(x))

    sub = Sub(name="sub")
    sub(np.ones((1, 3)))
    assert _paths(sub) == ["sub/h1/kernel", "sub/h1/bias", "sub/h2/kernel", "sub/h2/bias"]

    class Block(L.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.inner = L.Dense(2, name="inner")

        def build(self, input_shape):
            self.w = self.add_weight(shape=(1,), name="w")

        def call(self, x):
            return self.inner(x) * self.w

    block = Block(name="blk")
    block(np.ones((1, 3)))
    assert _paths(block) == ["blk/w", "blk/inner/kernel", "blk/inner/bias"]


def test_optimizer_slot_names_follow_paths():
    seq = keras.Sequential([keras.Input((3,)), L.Dense(1, name="d1")], name="seq")
    seq.compile(keras.optimizers.Adam(), "mse")
    seq.fit(np.ones((2, 3)), np.ones((2, 1)), verbose=0)
    assert [v.path for v in seq.optimizer.variables][:4] == [
        "adam/iteration", "adam/learning_rate", "adam/seq_d1_kernel_momentum", "adam/seq_d1_kernel_velocity"]


def test_loaded_paths(tmp_path):
    """A Keras-made file (its layers carry build_configs) loads with Keras's paths, and so does a
    minikeras-made one (built in the Sequential's scope, as Keras loads it too)."""
    path = os.path.join(os.path.dirname(__file__), "fixtures", "keras_geometric_augment", "pipeline_dense.keras")
    assert [v.path for v in keras.saving.load_model(path).weights] == [
        "dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"]
    seq = keras.Sequential([keras.Input((3,)), L.Dense(2, name="d1")], name="seq")
    seq.save(tmp_path / "seq.keras")
    assert _paths(keras.saving.load_model(tmp_path / "seq.keras")) == ["seq/d1/kernel", "seq/d1/bias"]
