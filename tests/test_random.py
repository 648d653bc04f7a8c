"""mk.random against tf.random: shapes, dtypes, ranges and moments of the draws, fresh
numbers on every call, repeatability after set_seed, and the errors for bad arguments."""
import numpy as np
import pytest

import minikeras as mk


def test_set_seed_makes_eager_draws_repeat():
    mk.random.set_seed(3)
    a, b = mk.random.normal((4,)), mk.random.uniform((4,))
    mk.random.set_seed(3)
    np.testing.assert_array_equal(mk.random.normal((4,)).numpy(), a.numpy())
    np.testing.assert_array_equal(mk.random.uniform((4,)).numpy(), b.numpy())


def test_consecutive_draws_differ():
    mk.random.set_seed(3)
    assert not np.allclose(mk.random.normal((4,)).numpy(), mk.random.normal((4,)).numpy())


def test_different_seeds_differ():
    mk.random.set_seed(1)
    a = mk.random.normal((4,)).numpy()
    mk.random.set_seed(2)
    assert not np.allclose(a, mk.random.normal((4,)).numpy())


def test_normal_shape_dtype_and_moments():
    mk.random.set_seed(0)
    z = mk.random.normal((200, 100), mean=2.0, stddev=3.0)
    assert z.shape == (200, 100) and z.dtype == mk.float32
    assert abs(float(np.mean(z.numpy())) - 2.0) < 0.1
    assert abs(float(np.std(z.numpy())) - 3.0) < 0.1
    assert mk.random.normal([2, 3], dtype=mk.float16).dtype == mk.float16


def test_truncated_normal_stays_within_two_stddev():
    mk.random.set_seed(0)
    z = mk.random.truncated_normal((10000,), mean=1.0, stddev=0.5).numpy()
    assert z.min() >= 0.0 and z.max() <= 2.0
    assert abs(z.mean() - 1.0) < 0.02


def test_uniform_range_and_default():
    mk.random.set_seed(0)
    u = mk.random.uniform((10000,)).numpy()
    assert u.dtype == np.float32 and u.min() >= 0.0 and u.max() < 1.0
    u = mk.random.uniform((10000,), minval=-2.0, maxval=3.0).numpy()
    assert u.min() >= -2.0 and u.max() < 3.0 and abs(u.mean() - 0.5) < 0.1


def test_uniform_integers():
    mk.random.set_seed(0)
    i = mk.random.uniform((1000,), minval=2, maxval=5, dtype=mk.int32)
    assert i.dtype == mk.int32
    assert set(np.unique(i.numpy()).tolist()) == {2, 3, 4}


def test_uniform_integers_need_maxval():
    with pytest.raises(ValueError, match="maxval"):
        mk.random.uniform((3,), dtype=mk.int32)


def test_normal_needs_a_floating_dtype():
    with pytest.raises(ValueError, match="floating dtype.*int32"):
        mk.random.normal((3,), dtype=mk.int32)


def test_normal_is_differentiable_in_mean_and_stddev():
    mean, stddev = mk.constant(1.0), mk.constant(2.0)
    mk.random.set_seed(5)
    with mk.GradientTape() as tape:
        tape.watch([mean, stddev])
        z = mk.random.normal((5,), mean=mean, stddev=stddev)
        total = mk.reduce_sum(z)
    g_mean, g_std = tape.gradient(total, [mean, stddev])
    mk.random.set_seed(5)
    standard = mk.random.normal((5,)).numpy()
    np.testing.assert_allclose(z.numpy(), standard * 2.0 + 1.0, rtol=1e-6)
    assert float(g_mean) == 5.0
    np.testing.assert_allclose(float(g_std), standard.sum(), rtol=1e-5)


def test_shuffle_permutes_the_first_axis():
    mk.random.set_seed(0)
    x = np.arange(20).reshape(10, 2)
    out = mk.random.shuffle(x).numpy()
    assert out.shape == (10, 2)
    assert sorted(out[:, 0].tolist()) == list(range(0, 20, 2))
    np.testing.assert_array_equal(out[:, 1], out[:, 0] + 1)   # rows stay whole
    assert not np.array_equal(out, x)


def test_generator_is_made_on_first_use_as_process_state(monkeypatch):
    from minikeras.ops import random as random_ops
    monkeypatch.setitem(random_ops._state, "generator", None)  # as in a fresh process

    @mk.function
    def f(x, noisy):
        return x + mk.random.normal(x.shape) if noisy else x

    np.testing.assert_array_equal(f(mk.zeros(3), False).numpy(), np.zeros(3))  # first trace: no draw
    a = f(mk.zeros(3), True)  # a later trace makes the generator: not a Variable the function creates
    generator = mk.random.get_global_generator()
    assert random_ops._state["generator"] is generator and generator.name == "random_generator"
    before = generator.numpy().copy()
    b = f(mk.zeros(3), True)  # the compiled call reads and advances it
    assert not np.array_equal(before, generator.numpy())
    assert not np.allclose(a.numpy(), b.numpy())
    mk.random.set_seed(4)
    c = f(mk.zeros(3), True)
    mk.random.set_seed(4)
    np.testing.assert_array_equal(f(mk.zeros(3), True).numpy(), c.numpy())


def test_generator_state_is_a_non_trainable_variable():
    generator = mk.random.get_global_generator()
    assert isinstance(generator, mk.Variable) and not generator.trainable
    before = generator.numpy().copy()
    mk.random.normal((1,))
    assert not np.array_equal(before, generator.numpy())


def test_gamma_shapes_and_moments_as_tf_random_gamma():
    # TensorFlow 2.21: shape + broadcast(alpha, beta).shape
    assert mk.random.gamma([4], 0.2).shape == (4,)
    assert mk.random.gamma([2, 3], [1.0, 2.0], beta=[[1.0], [2.0], [3.0]]).shape == (2, 3, 3, 2)
    mk.random.set_seed(3)
    draws = np.asarray(mk.random.gamma([20000], [0.5, 3.0], beta=[2.0, 0.5]))
    alpha, rate = np.array([0.5, 3.0]), np.array([2.0, 0.5])
    np.testing.assert_allclose(draws.mean(0), alpha / rate, rtol=0.05)
    np.testing.assert_allclose(draws.var(0), alpha / rate**2, rtol=0.1)
    assert np.all(np.isnan(np.asarray(mk.random.gamma([2], -1.0))))  # TensorFlow gives NaN too
