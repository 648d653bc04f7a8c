"""keras.random and SeedGenerator against Keras 3 (on JAX): values for fixed seeds, statistics,
seeding rules, dtypes, errors, and a SeedGenerator as layer state (tracked, advanced in compiled
steps, not in weights files)."""
import json
import os
import subprocess

import h5py
import numpy as np
import pytest
from conftest import assert_close

import minikeras as mk
from minikeras import keras

r = keras.random
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras_random")
with open(os.path.join(FIXTURES, "draws.json")) as _f:
    KERAS_DRAWS = json.load(_f)

# the draws of make_draws.py, the same calls here
CASES = {
    "normal": lambda seed: r.normal((4,), mean=1.0, stddev=2.0, seed=seed),
    "uniform": lambda seed: r.uniform((2, 2), minval=-1.0, maxval=3.0, seed=seed),
    "truncated_normal": lambda seed: r.truncated_normal((4,), seed=seed),
    "randint": lambda seed: r.randint((4,), 2, 9, seed=seed),
    "categorical": lambda seed: r.categorical(np.log(np.array([[0.2, 0.8], [0.6, 0.4]], "float32")), 3, seed=seed),
    "dropout": lambda seed: r.dropout(np.arange(1.0, 9.0, dtype="float32").reshape(2, 4), 0.5, noise_shape=(None, 4),
                                      seed=seed),
    "shuffle": lambda seed: r.shuffle(np.arange(6), seed=seed),
    "gamma": lambda seed: r.gamma((3,), 2.5, seed=seed),
    "beta": lambda seed: r.beta((3,), 2.0, 3.0, seed=seed),
    "binomial": lambda seed: r.binomial((3,), 10, 0.3, seed=seed),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_are_keras_on_jax_for_an_int_seed_and_a_seed_generator(name):
    assert_close(CASES[name](7), KERAS_DRAWS["int_seed"][name], rtol=1e-6, atol=1e-6, what=name)
    generator = r.SeedGenerator(11)
    for i, expected in enumerate(KERAS_DRAWS["seed_generator"][name]):
        assert_close(CASES[name](generator), expected, rtol=1e-6, atol=1e-6, what=f"{name} draw {i}")


N = 20000


def test_statistics_of_the_continuous_distributions():
    x = r.normal((N,), mean=3.0, stddev=2.0, seed=1).numpy()
    assert abs(x.mean() - 3.0) < 0.05 and abs(x.std() - 2.0) < 0.05
    u = r.uniform((N,), minval=-2.0, maxval=4.0, seed=2).numpy()
    assert u.min() >= -2.0 and u.max() < 4.0 and abs(u.mean() - 1.0) < 0.05 and abs(u.var() - 3.0) < 0.1
    t = r.truncated_normal((N,), mean=1.0, stddev=0.5, seed=3).numpy()
    # a standard normal cut at +-2 has standard deviation 0.8796
    assert t.min() >= 0.0 and t.max() <= 2.0 and abs(t.mean() - 1.0) < 0.02 and abs(t.std() - 0.5 * 0.8796) < 0.01
    g = r.gamma((N,), 3.0, seed=4).numpy()
    assert g.min() > 0 and abs(g.mean() - 3.0) < 0.06 and abs(g.var() - 3.0) < 0.2
    b = r.beta((N,), 2.0, 6.0, seed=5).numpy()  # mean a/(a+b), variance ab/((a+b)^2 (a+b+1))
    assert 0 < b.min() and b.max() < 1 and abs(b.mean() - 0.25) < 0.01 and abs(b.var() - 12 / (64 * 9)) < 0.002


def test_statistics_of_the_discrete_distributions():
    k = r.randint((N,), -3, 5, seed=6).numpy()
    assert k.dtype == np.int32 and set(np.unique(k)) == set(range(-3, 5))
    assert np.all(np.abs(np.bincount(k + 3) / N - 1 / 8) < 0.015)
    n = r.binomial((N,), 20, 0.3, seed=7).numpy()
    assert n.dtype == np.float32 and n.min() >= 0 and n.max() <= 20
    assert abs(n.mean() - 6.0) < 0.1 and abs(n.var() - 4.2) < 0.25
    probs = np.array([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]], "float32")
    c = r.categorical(np.log(np.maximum(probs, 1e-30)), N // 2, seed=8).numpy()
    assert c.shape == (2, N // 2) and c.dtype == np.int32
    for row in range(2):
        assert np.all(np.abs(np.bincount(c[row], minlength=3) / (N // 2) - probs[row]) < 0.02)


def test_dropout_zeroes_at_the_rate_and_scales_the_rest():
    x = np.arange(1.0, N + 1.0, dtype="float32").reshape(100, -1)
    y = r.dropout(x, 0.3, seed=9).numpy()
    kept = y != 0
    assert abs(1 - kept.mean() - 0.3) < 0.015
    np.testing.assert_allclose(y[kept], x[kept] / 0.7, rtol=1e-6)
    shared = r.dropout(np.ones((4, 50), "float32"), 0.5, noise_shape=(1, None), seed=10).numpy()
    assert np.all(shared == shared[:1])  # one draw along the axis of size 1
    assert np.all(r.dropout(x, 1.0, seed=1).numpy() == 0) and np.all(r.dropout(x, 0.0, seed=1).numpy() == x)


def test_shuffle_permutes_along_the_axis():
    x = np.arange(24).reshape(4, 6)
    s = r.shuffle(x, axis=1, seed=3).numpy()
    assert s.shape == x.shape and not np.array_equal(s, x)
    assert all(sorted(row) == sorted(orig) for row, orig in zip(s.tolist(), x.tolist()))


def test_gradients_through_dropout_and_tensor_mean_and_stddev():
    x = mk.Variable(np.arange(1.0, 9.0, dtype="float32"))
    mean, stddev = mk.Variable(1.0), mk.Variable(2.0)
    with mk.GradientTape() as tape:
        y = r.dropout(x, 0.5, seed=4)
        z = r.normal((5,), mean=mean, stddev=stddev, seed=5)
        loss = mk.reduce_sum(y) + mk.reduce_sum(z)
    gx, gmean, gstd = tape.gradient(loss, [x, mean, stddev])
    np.testing.assert_allclose(gx.numpy(), (y.numpy() != 0) * 2.0)
    unit = r.normal((5,), seed=5).numpy()
    assert_close(gmean, 5.0) and assert_close(gstd, unit.sum())


def test_seeding_rules():
    a, b = r.normal((3,), seed=42).numpy(), r.normal((3,), seed=42).numpy()
    np.testing.assert_array_equal(a, b)  # an int seed: the same values each time
    generator = r.SeedGenerator(42)
    first, second = r.normal((3,), seed=generator).numpy(), r.normal((3,), seed=generator).numpy()
    np.testing.assert_array_equal(first, a)  # the first draw of SeedGenerator(s) is the draw of seed s
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(generator.state.numpy(), [42, 2])
    again = r.SeedGenerator(42)
    np.testing.assert_array_equal([r.normal((3,), seed=again).numpy() for _ in range(2)], [first, second])
    for large in (2**31 - 1, 2**31, 2**32 - 1):  # uint32 seeds at the int32 boundary, as Keras 3.15 takes them
        assert r.uniform((2, 2), seed=large).shape == (2, 2)
    keras.utils.set_random_seed(5)  # seed=None: the global generator
    unseeded = [r.uniform((3,)).numpy() for _ in range(2)]
    keras.utils.set_random_seed(5)
    np.testing.assert_array_equal([r.uniform((3,)).numpy() for _ in range(2)], unseeded)
    assert not np.array_equal(*unseeded)


def test_unseeded_seed_generators_follow_the_global_seed():
    # SeedGenerator(None) (a recurrent cell's, for its dropout) takes its seed from the global seed's
    # sequence, so tf.random.set_seed repeats a program whose layers own generators
    def states():
        mk.random.set_seed(11)
        return [r.SeedGenerator().state.numpy()[0] for _ in range(3)]

    first = states()
    assert first == states() and len(set(first)) == 3 and all(1 <= s <= 10**9 for s in first)
    x = np.ones((2, 3, 2), "float32")

    def dropped():
        mk.random.set_seed(3)
        return mk.layers.LSTM(4, dropout=0.5)(x, training=True).numpy()

    np.testing.assert_array_equal(dropped(), dropped())


def test_unseeded_seed_generators_and_dataset_shuffles_do_not_move_each_other():
    # each has its own sequence under the global seed: a shuffled Dataset made in between changes
    # no generator's seed, and a generator made in between changes no shuffle's order
    def run(shuffle_between, generator_between):
        mk.random.set_seed(5)
        seeds = [r.SeedGenerator().state.numpy()[0]]
        if shuffle_between:
            list(mk.data.Dataset.range(8).shuffle(8))
        if generator_between:
            r.SeedGenerator()
        order = [int(v) for v in mk.data.Dataset.range(8).shuffle(8)]
        return seeds + [r.SeedGenerator().state.numpy()[0]], order

    assert run(False, False)[0] == run(True, False)[0]
    assert run(False, False)[1] == run(False, True)[1]


def test_dtypes_and_shapes_as_keras():
    assert r.normal((2, 3), seed=1).dtype == mk.float32 and r.normal((2, 3), seed=1).shape == (2, 3)
    assert r.normal((2,), dtype="float16", seed=1).dtype == mk.float16
    assert r.uniform((2,), dtype="bfloat16", seed=1).dtype == mk.bfloat16
    assert r.randint((2,), 0, 4, dtype="uint8", seed=1).dtype == mk.uint8
    assert r.categorical(np.zeros((2, 3)), 4, dtype="int64" if mk.config.x64_enabled() else "int32",
                         seed=1).shape == (2, 4)
    assert r.gamma((3,), 1.0, seed=1).dtype == mk.float32 and r.binomial((3,), 3, 0.5, seed=1).dtype == mk.float32
    assert isinstance(r.normal((2,), seed=1), mk.Tensor)


@pytest.mark.parametrize("call, message", [
    (lambda: r.normal((2,), seed="a"), "Argument `seed` must be either an integer or an instance of `SeedGenerator`. "
                                       "Received: seed=a"),
    (lambda: r.normal((2,), seed=1.5), "Received: seed=1.5 \\(of type <class 'float'>\\)"),
    (lambda: r.SeedGenerator(1.5), "Argument `seed` must be an integer. Received: seed=1.5"),
    (lambda: r.SeedGenerator(1, foo=2), "Unrecognized keyword arguments: {'foo': 2}"),
    (lambda: r.uniform((2,), dtype="int32", seed=1), "`keras.random.uniform` requires a floating point `dtype`. "
                                                    "Received: dtype=int32"),
    (lambda: r.randint((2,), 0, 3, dtype="float32", seed=1), "`keras.random.randint` requires an integer `dtype`. "
                                                            "Received: dtype=float32"),
    (lambda: r.normal((2,), dtype="int32", seed=1), "dtype argument to `normal` must be a float or complex dtype, "
                                                   "got int32"),
    (lambda: r.gamma((2,), 1.0, dtype="int32", seed=1), "dtype argument to `gamma` must be a float dtype, got int32"),
    (lambda: r.categorical(np.zeros((4,)), 3, seed=1), "`logits` should be a 2-D tensor with shape "
                                                       "\\[batch_size, num_classes\\]"),
    (lambda: r.shuffle(np.ones((3, 4)), axis=2, seed=1), "axis 2 is out of bounds for array of dimension 2"),
])
def test_errors_as_keras(call, message):
    with pytest.raises(ValueError, match=message):
        call()


class SeededNoise(keras.layers.Layer):
    """make_draws.py's layer: a Dense plus noise from its own SeedGenerator."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seed_generator = r.SeedGenerator(3)
        self.dense = keras.layers.Dense(2)

    def call(self, x):
        return self.dense(x) + r.normal((2,), stddev=0.1, seed=self.seed_generator)


def test_a_layers_seed_generator_is_state_not_a_weight(tmp_path):
    keras.backend.clear_session()  # the generator's default name: 'seed_generator'
    model = keras.Sequential([keras.Input((3,)), SeededNoise()])
    layer = model.layers[0]
    state = layer.seed_generator.state
    assert state.path == "seed_generator/seed_generator_state" and state.dtype == mk.uint32 and not state.trainable
    assert any(v is state for v in layer.non_trainable_variables) and any(v is state for v in model.variables)
    assert not any(v is state for v in layer.weights + model.weights) and len(model.get_weights()) == 2
    assert layer.seed_generator.get_config() == {"seed": 3, "name": "seed_generator"}
    # Keras 3's weights file (no group for the seed) loads, and minikeras writes the same layout
    model.load_weights(os.path.join(FIXTURES, "seeded_noise.weights.h5"))
    np.testing.assert_array_equal(layer.dense.bias.numpy(), [1.0, -1.0])
    model.save_weights(tmp_path / "noise.weights.h5")
    with h5py.File(tmp_path / "noise.weights.h5") as f:
        assert sorted(f["layers/seeded_noise"]) == ["dense", "vars"] and len(f["layers/seeded_noise/vars"]) == 0


def test_the_state_advances_in_fit_and_in_compiled_functions():
    model = keras.Sequential([keras.Input((3,)), SeededNoise()])
    state = model.layers[0].seed_generator.state
    start = int(state.numpy()[1])
    model.compile("sgd", "mse")
    model.fit(np.ones((8, 3), "float32"), np.ones((8, 2), "float32"), batch_size=4, epochs=2, verbose=0)
    assert int(state.numpy()[1]) == start + 4  # one draw per step
    generator = r.SeedGenerator(0)  # held by no layer: still advanced by the compiled program

    @mk.function
    def draw():
        return r.uniform((2,), seed=generator)

    values = [draw().numpy() for _ in range(3)]
    np.testing.assert_array_equal(generator.state.numpy(), [0, 3])
    expected = r.SeedGenerator(0)
    np.testing.assert_array_equal(values, [r.uniform((2,), seed=expected).numpy() for _ in range(3)])


def test_the_global_generator_is_usable_in_a_compiled_step():
    @mk.function
    def draw():
        return r.normal((2,))

    assert not np.array_equal(draw().numpy(), draw().numpy())


def test_a_keras_file_of_a_layer_with_a_seed_generator_round_trips(tmp_path):
    model = keras.Sequential([keras.Input((3,)), SeededNoise()])
    model.save(tmp_path / "noise.keras")
    loaded = keras.saving.load_model(tmp_path / "noise.keras", custom_objects={"SeededNoise": SeededNoise})
    layer = loaded.layers[0]
    np.testing.assert_array_equal(layer.dense.kernel.numpy(), model.layers[0].dense.kernel.numpy())
    np.testing.assert_array_equal(layer.seed_generator.state.numpy()[0], 3)  # a new generator from the layer's code


def test_a_seed_generator_serializes_as_keras_3s():
    spec = keras.saving.serialize_keras_object(r.SeedGenerator(42, name="sg"))
    assert spec == {"module": "minikeras.random", "class_name": "SeedGenerator", "config": {"seed": 42, "name": "sg"},
                    "registered_name": None}
    keras_spec = dict(spec, module="keras.random")  # as Keras 3 writes it
    for given in (spec, mk.saving.keras_config.from_keras(keras_spec)):
        again = keras.saving.deserialize_keras_object(given)
        assert type(again) is r.SeedGenerator and again.get_config() == {"seed": 42, "name": "sg"}
        np.testing.assert_array_equal(again.state.numpy(), [42, 0])
    assert mk.saving.keras_config.to_keras(spec)["module"] == "keras.random"


FLOATS, INTS = ("float16", "bfloat16", "float32"), ("int8", "int16", "int32", "uint8", "uint16", "uint32")


def test_every_dtype_keras_tests():  # Keras 3's RandomDTypeTest, on the dtypes JAX has without x64
    draws = {
        "normal": lambda d: r.normal((2, 3), dtype=d), "uniform": lambda d: r.uniform((2, 3), dtype=d),
        "truncated_normal": lambda d: r.truncated_normal((2, 3), dtype=d),
        "dropout": lambda d: r.dropout(mk.cast(np.ones((3, 5)), d), rate=0.8, seed=0),
    }
    for name, draw in draws.items():
        for dtype in FLOATS:
            assert draw(dtype).dtype.name == dtype, (name, dtype)
    # the samplers with a loop compile slowly: float16 (a Python-number parameter taken by a
    # half-precision draw) here, float32 in the tests above
    assert r.gamma((2, 3), 2.0, dtype="float16").dtype.name == "float16"
    assert r.binomial((2,), 1e5, 0.5, dtype="float16").dtype.name == "float16"
    assert r.beta((2, 3), 2.0, 3.0, dtype="float16").dtype.name == "float16"
    for dtype in INTS:
        assert r.categorical(np.eye(4) * 1e5 + 1e6, 10, dtype=dtype).dtype.name == dtype
        assert r.randint((2, 3), 0, 10, dtype=dtype).dtype.name == dtype


def test_a_jax_key_is_a_seed_as_on_keras_jax():
    import jax
    key = jax.random.PRNGKey(7)  # Keras on JAX draws with the key as given
    np.testing.assert_array_equal(r.randint((3, 5), 0, 10, seed=key).numpy(),
                                  np.asarray(jax.random.randint(key, (3, 5), 0, 10, "int32")))
    assert r.normal((2,), seed=jax.random.key(3)).shape == (2,)


KERAS_READS = '''
import sys, numpy as np, keras


class SeededNoise(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seed_generator = keras.random.SeedGenerator(3)
        self.dense = keras.layers.Dense(2)

    def call(self, x):
        return self.dense(x) + keras.random.normal((2,), stddev=0.1, seed=self.seed_generator)


model = keras.Sequential([keras.Input((3,)), SeededNoise()])
model.load_weights(sys.argv[1])
np.save(sys.argv[2], model.layers[0].dense.kernel.numpy())
'''


@pytest.mark.skipif(not os.environ.get("MINIKERAS_KERAS_PYTHON"), reason="MINIKERAS_KERAS_PYTHON is unset")
def test_keras_3_reads_our_weights_file_of_a_layer_with_a_seed_generator(tmp_path):
    model = keras.Sequential([keras.Input((3,)), SeededNoise()])
    model.save_weights(tmp_path / "ours.weights.h5")
    out = str(tmp_path / "kernel.npy")
    command = [os.environ["MINIKERAS_KERAS_PYTHON"], "-c", KERAS_READS, str(tmp_path / "ours.weights.h5"), out]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "KERAS_BACKEND": "jax"})
    assert result.returncode == 0, result.stderr[-3000:]
    np.testing.assert_array_equal(np.load(out), model.layers[0].dense.kernel.numpy())
