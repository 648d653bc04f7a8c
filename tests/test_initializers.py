"""Initializers: Keras 3's fan formulas and limits, sample statistics, orthogonality, truncation,
seeding (per-instance seeds and mk.random.set_seed), look-up by name, serialization."""
import math

import numpy as np
import pytest

import minikeras as mk
from minikeras import initializers

BIG = (3, 3, 40, 60)  # 32k samples (one shape everywhere: one compiled sampler); fans 360 and 540
TRUNC = 0.87962566103423978


@pytest.mark.parametrize("shape,fans", [
    ((), (1, 1)), ((7,), (7, 7)), ((784, 128), (784, 128)),
    ((3, 3, 32, 64), (3 * 3 * 32, 3 * 3 * 64)), ((5, 16, 8), (5 * 16, 5 * 8)),
])
def test_compute_fans_like_keras(shape, fans):
    assert initializers.compute_fans(shape) == fans


# name, fan used for the variance, scale, distribution
PRESETS = [
    ("glorot_uniform", "avg", 1.0, "uniform"), ("glorot_normal", "avg", 1.0, "truncated_normal"),
    ("he_uniform", "in", 2.0, "uniform"), ("he_normal", "in", 2.0, "truncated_normal"),
    ("lecun_uniform", "in", 1.0, "uniform"), ("lecun_normal", "in", 1.0, "truncated_normal"),
]


@pytest.mark.parametrize("name,fan,scale,distribution", PRESETS, ids=[p[0] for p in PRESETS])
def test_variance_scaling_presets(name, fan, scale, distribution):
    shape = BIG  # a conv kernel: fans include the 3x3 receptive field
    fan_in, fan_out = 3 * 3 * 40, 3 * 3 * 60
    n = (fan_in + fan_out) / 2 if fan == "avg" else fan_in
    std = math.sqrt(scale / n)
    mk.random.set_seed(0)
    values = initializers.get(name)(shape).numpy()
    assert values.shape == shape and values.dtype == np.float32
    assert abs(values.mean()) < 0.03 * std  # the sample mean's own std is std / 180
    assert values.std() == pytest.approx(std, rel=0.03)
    if distribution == "uniform":
        limit = math.sqrt(3 * scale / n)  # e.g. glorot: sqrt(6 / (fan_in + fan_out))
        assert np.abs(values).max() <= limit
        assert np.abs(values).max() > 0.99 * limit
    else:
        bound = 2 * std / TRUNC  # truncated at two standard deviations of the pre-truncation normal
        assert np.abs(values).max() <= bound * (1 + 1e-6)
        assert np.abs(values).max() > 0.95 * bound


def test_glorot_uniform_limit_formula_on_a_dense_kernel():
    values = initializers.GlorotUniform(seed=3)((784, 128)).numpy()
    limit = math.sqrt(6 / (784 + 128))
    assert np.abs(values).max() <= limit and np.abs(values).max() > 0.99 * limit


@pytest.mark.parametrize("mode,n", [("fan_in", 360), ("fan_out", 540), ("fan_avg", 450)])
def test_variance_scaling_untruncated_modes(mode, n):
    values = initializers.VarianceScaling(scale=3.0, mode=mode, distribution="untruncated_normal", seed=1)(BIG)
    assert values.numpy().std() == pytest.approx(math.sqrt(3.0 / n), rel=0.03)


def test_variance_scaling_validates_arguments():
    with pytest.raises(ValueError, match="scale"):
        initializers.VarianceScaling(scale=0.0)
    with pytest.raises(ValueError, match="mode"):
        initializers.VarianceScaling(mode="fan_sideways")
    with pytest.raises(ValueError, match="distribution"):
        initializers.VarianceScaling(distribution="cauchy")
    assert initializers.VarianceScaling(distribution="normal").distribution == "truncated_normal"


def test_random_normal_uniform_truncated():
    normal = initializers.RandomNormal(mean=1.0, stddev=0.5, seed=0)(BIG).numpy()
    assert normal.mean() == pytest.approx(1.0, abs=0.01) and normal.std() == pytest.approx(0.5, rel=0.02)
    uniform = initializers.RandomUniform(minval=-2.0, maxval=3.0, seed=0)(BIG).numpy()
    assert uniform.min() >= -2.0 and uniform.max() < 3.0 and uniform.mean() == pytest.approx(0.5, abs=0.03)
    truncated = initializers.TruncatedNormal(mean=0.5, stddev=0.1, seed=0)(BIG).numpy()
    assert truncated.min() >= 0.5 - 0.2 - 1e-6 and truncated.max() <= 0.5 + 0.2 + 1e-6
    assert truncated.std() == pytest.approx(0.1 * TRUNC, rel=0.03)
    default = initializers.RandomNormal(seed=0)(BIG).numpy()
    assert default.std() == pytest.approx(0.05, rel=0.03)  # Keras 3's default stddev


def test_orthogonal():
    tall = initializers.Orthogonal(gain=2.0, seed=0)((3, 3, 4, 8)).numpy().reshape(36, 8) / 2.0
    np.testing.assert_allclose(tall.T @ tall, np.eye(8), atol=1e-5)  # more rows: orthonormal columns
    wide = initializers.Orthogonal(seed=1)((4, 10)).numpy()
    np.testing.assert_allclose(wide @ wide.T, np.eye(4), atol=1e-5)  # more columns: orthonormal rows
    with pytest.raises(ValueError, match="at least two-dimensional"):
        initializers.Orthogonal()((5,))


def test_constant_initializers_and_dtypes():
    np.testing.assert_array_equal(initializers.Zeros()((2, 3)).numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(initializers.Ones()((2,), dtype="float16").numpy(), np.ones(2, np.float16))
    assert initializers.Zeros()((2,), dtype="int32").dtype == np.int32
    np.testing.assert_array_equal(initializers.Constant(3.5)((2, 2)).numpy(), np.full((2, 2), 3.5))
    np.testing.assert_array_equal(initializers.Identity(gain=2.0)((2, 3)).numpy(), 2 * np.eye(2, 3))
    assert initializers.he_normal()((4, 4), dtype=mk.float16).dtype == np.float16
    with pytest.raises(ValueError, match="floating dtype"):
        initializers.GlorotUniform()((3, 3), dtype="int32")


def test_seeds_and_global_seed_make_init_repeatable():
    a = initializers.GlorotUniform(seed=7)((4, 5)).numpy()
    np.testing.assert_array_equal(a, initializers.GlorotUniform(seed=7)((4, 5)).numpy())
    assert not np.array_equal(a, initializers.GlorotUniform(seed=8)((4, 5)).numpy())
    init = initializers.HeNormal()
    first, second = init((4, 5)).numpy(), init((4, 5)).numpy()
    assert not np.array_equal(first, second), "an unseeded initializer draws fresh values per call"
    mk.random.set_seed(123)
    run1 = [initializers.get("glorot_uniform")((4, 5)).numpy(), initializers.HeNormal()((4, 5)).numpy()]
    mk.random.set_seed(123)
    run2 = [initializers.get("glorot_uniform")((4, 5)).numpy(), initializers.HeNormal()((4, 5)).numpy()]
    for x, y in zip(run1, run2):
        np.testing.assert_array_equal(x, y)
    with pytest.raises(ValueError, match="seed"):
        initializers.RandomNormal(seed="abc")


def test_initializer_gives_concrete_values_inside_mk_function():
    holder = []

    @mk.function
    def f(x):
        if not holder:
            holder.append(mk.Variable(lambda: initializers.GlorotUniform()((3,)), name="w"))
            holder.append(initializers.Ones()((3,)))  # called directly while tracing: still concrete
        return x * holder[0] + holder[1]

    f(mk.constant([1.0, 2.0, 3.0]))
    assert isinstance(holder[1].numpy(), np.ndarray)


def test_get_serialize_deserialize():
    assert isinstance(initializers.get("glorot_uniform"), initializers.GlorotUniform)
    assert isinstance(initializers.get("GlorotUniform"), initializers.GlorotUniform)
    assert isinstance(initializers.get("he_normal"), initializers.HeNormal)
    assert isinstance(initializers.get("zeros"), initializers.Zeros)
    assert isinstance(initializers.get(initializers.Ones), initializers.Ones)
    init = initializers.VarianceScaling(scale=2.0, mode="fan_out", distribution="uniform", seed=4)
    assert initializers.get(init) is init
    assert initializers.get(None) is None
    config = initializers.serialize(init)
    assert config["class_name"] == "VarianceScaling"
    clone = initializers.deserialize(config)
    np.testing.assert_array_equal(clone((3, 4)).numpy(), init((3, 4)).numpy())
    assert initializers.get(initializers.serialize(initializers.Constant(2.0))).value == 2.0
    with pytest.raises(ValueError, match="Unknown initializer: 'glorot_unifrom'.*glorot_uniform"):
        initializers.get("glorot_unifrom")
    with pytest.raises(ValueError, match="Could not interpret"):
        initializers.get(42)
