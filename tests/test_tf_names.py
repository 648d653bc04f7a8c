"""mk.newaxis, mk.add_n, Tensor.set_shape/.device, mk.random.Generator, mk.random.stateless_* and
mk.data.experimental.Counter, against TF's behaviour (shapes, dtypes, errors, determinism and the
moments of the distributions; the bits are jax's, not TF's Philox)."""
import numpy as np
import pytest

import minikeras as mk

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"


def test_newaxis_and_device():
    x = np.zeros((2, 3), np.float32)
    assert mk.constant(x)[..., mk.newaxis].shape == (2, 3, 1)
    assert x[mk.newaxis].shape == (1, 2, 3)
    assert mk.constant(1.0).device == CPU0 and mk.Variable(1.0).device == CPU0

    @mk.function
    def f(t):
        assert t.device == ""  # a graph tensor's device, as in tf.function
        return t
    f(mk.constant(1.0))


def test_add_n_values_gradient_and_errors():
    a, b = mk.Variable([1.0, 2.0]), mk.constant([3.0, 4.0])
    with mk.GradientTape() as tape:
        total = mk.add_n([a, b, np.array([1.0, 1.0], np.float32)])
    np.testing.assert_array_equal(total.numpy(), [5.0, 7.0])
    np.testing.assert_array_equal(tape.gradient(total, a).numpy(), [1.0, 1.0])
    assert mk.add_n([1, 2]).dtype == mk.int32 and int(mk.add_n([1, 2])) == 3
    with pytest.raises(ValueError, match="at least one Tensor"):
        mk.add_n([])
    with pytest.raises(mk.errors.InvalidArgumentError, match=r"same size and shape.*\[2\] != input 1: \[3\]"):
        mk.add_n([mk.zeros(2), mk.zeros(3)])
    with pytest.raises(mk.errors.InvalidArgumentError, match="expected to be a float32 tensor but is a int32"):
        mk.add_n([mk.zeros(2), mk.zeros(2, mk.int32)])


def test_set_shape_checks_as_tf():
    t = mk.zeros((2, 3))
    t.set_shape((None, 3))
    t.set_shape([2, 3])
    t.set_shape(None)
    with pytest.raises(ValueError, match=r"Tensor's shape \(2, 3\) is not compatible with supplied shape \(2, 4\)"):
        t.set_shape((2, 4))
    with pytest.raises(ValueError, match="not compatible"):
        t.set_shape((2, 3, 1))


def _moments_ok(x, mean, std, n):
    assert abs(x.mean() - mean) < 5 * std / np.sqrt(n) and abs(x.std() - std) < 0.05 * std


def test_generator_repeats_and_follows_distributions():
    g1, g2 = mk.random.Generator.from_seed(1234), mk.random.Generator.from_seed(1234)
    a, b = g1.normal((20000,)), g2.normal((20000,))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert a.dtype == mk.float32
    _moments_ok(a.numpy(), 0.0, 1.0, 20000)
    assert not np.array_equal(g1.normal((4,)).numpy(), a.numpy()[:4])  # the state advanced
    u = g1.uniform((20000,), minval=2.0, maxval=4.0).numpy()
    assert u.min() >= 2.0 and u.max() < 4.0 and abs(u.mean() - 3.0) < 0.02
    ints = g1.uniform((1000,), minval=0, maxval=5, dtype=mk.int32)
    assert ints.dtype == mk.int32 and set(np.unique(ints.numpy())) == {0, 1, 2, 3, 4}
    with pytest.raises(ValueError, match="minval and maxval must be both `None` or both non-`None`"):
        g1.uniform((2,), dtype=mk.int32)
    tn = g1.truncated_normal((5000,), stddev=2.0).numpy()
    assert np.abs(tn).max() <= 4.0
    seeds = g1.make_seeds(3)
    assert seeds.shape == (2, 3) and seeds.dtype.kind == "i"
    children = g1.split(2)
    assert len(children) == 2 and not np.array_equal(children[0].normal((3,)).numpy(), children[1].normal((3,)).numpy())
    other = mk.random.Generator.from_non_deterministic_state()
    assert not np.array_equal(other.state.numpy(), mk.random.Generator.from_non_deterministic_state().state.numpy())
    copy = mk.random.Generator(copy_from=g2)
    np.testing.assert_array_equal(copy.normal((3,)).numpy(), g2.normal((3,)).numpy())


def test_generator_in_function_and_checkpoint(tmp_path):
    g = mk.random.Generator.from_seed(7)

    @mk.function
    def draw():
        return g.normal((3,))

    first, second = draw().numpy(), draw().numpy()
    assert not np.array_equal(first, second)  # the compiled program advances the state
    eager = mk.random.Generator.from_seed(7)
    np.testing.assert_array_equal(eager.normal((3,)).numpy(), first)
    ckpt = mk.train.Checkpoint(generator=g)
    path = ckpt.save(str(tmp_path / "ckpt"))
    expected = g.normal((4,)).numpy()
    g.normal((4,))
    ckpt.restore(path)
    np.testing.assert_array_equal(g.normal((4,)).numpy(), expected)


def test_stateless_ops_shapes_dtypes_determinism():
    seed = [1, 2]
    a = mk.random.stateless_normal((20000,), seed=seed, mean=1.0, stddev=2.0)
    expected = mk.random.stateless_normal((20000,), seed=seed, mean=1.0, stddev=2.0)
    np.testing.assert_array_equal(a.numpy(), expected.numpy())
    _moments_ok(a.numpy(), 1.0, 2.0, 20000)
    assert not np.array_equal(a.numpy()[:5], mk.random.stateless_normal((5,), seed=[1, 3]).numpy())

    @mk.function
    def compiled(s):
        return mk.random.stateless_uniform((4,), seed=s)
    np.testing.assert_array_equal(compiled(mk.constant(seed)).numpy(),
                                  mk.random.stateless_uniform((4,), seed=mk.constant(seed)).numpy())
    full = mk.random.stateless_uniform((2,), seed=seed, minval=None, maxval=None, dtype=mk.int32)
    assert full.dtype == mk.int32
    with pytest.raises(ValueError, match="must be both `None` or both non-`None`"):
        mk.random.stateless_uniform((2,), seed=seed, minval=3, maxval=None, dtype=mk.int32)
    tn = mk.random.stateless_truncated_normal((1000,), seed=seed).numpy()
    assert tn.dtype == np.float32 and np.abs(tn).max() <= 2.0
    cat = mk.random.stateless_categorical(np.log([[0.1, 0.9]]), 5000, seed=seed)
    assert cat.shape == (1, 5000) and cat.dtype.kind == "i" and abs(cat.numpy().mean() - 0.9) < 0.03
    binom = mk.random.stateless_binomial((5000,), seed=seed, counts=10.0, probs=0.3)
    assert binom.dtype == mk.int32 and abs(binom.numpy().mean() - 3.0) < 0.1
    with pytest.raises(mk.errors.InvalidArgumentError, match=r"seed must have shape \[2\], not \[3\]"):
        mk.random.stateless_normal((2,), seed=[1, 2, 3])
    g = mk.random.Generator.from_seed(0)
    s = g.make_seeds(1)[:, 0]
    assert mk.random.stateless_normal((2,), seed=s).shape == (2,)


def test_counter():
    counter = mk.data.experimental.Counter(start=5, step=2)
    assert counter.cardinality() == mk.data.INFINITE_CARDINALITY
    it = iter(counter)
    assert [int(next(it)) for _ in range(3)] == [5, 7, 9]
    ds = mk.data.Dataset.zip((mk.data.Dataset.from_tensor_slices(np.arange(3.0)), (counter, counter)))
    rows = list(ds.as_numpy_iterator())
    assert len(rows) == 3 and [int(r[1][0]) for r in rows] == [5, 7, 9]
    assert mk.data.experimental.Counter(dtype=mk.float32).element_spec.dtype == mk.float32
