"""The native threefry kernels (minikeras/xla_cpu/random_native.cc) against jax, bit for bit:
the dropout mask (``jax.random.bernoulli``'s bits, scaled) and the key split (``jax.random.split``)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk
from minikeras.xla_cpu import dropout, native_build, random_native, tuning

# Skipped where the kernels are off or cannot be built here (no compiler, another platform);
# a build that fails is a failure (as in test_xla_cpu_conv_native.py).
_UNAVAILABLE = "" if random_native.available() else native_build.why_unavailable("random_native.cc")
pytestmark = pytest.mark.skipif(bool(_UNAVAILABLE) and not _UNAVAILABLE.startswith("building"), reason=_UNAVAILABLE)


def test_the_kernels_build_where_a_compiler_is():
    assert random_native.available()


def _jax_scaled_mask(key, shape, rate):
    return jnp.where(jax.random.bernoulli(key, 1.0 - rate, shape), np.float32(1.0 / (1.0 - rate)), np.float32(0))


# odd sizes (the vector loop's tail), a single element, rates at the ends, and one mask big enough
# to be shared among threads (tuning.DROPOUT_NATIVE_THREAD_ELEMENTS) whose blocks end mid-vector
@pytest.mark.parametrize("seed, shape, rate", [
    (0, (128, 12, 12, 64), 0.25), (3, (128, 128), 0.5), (7, (5, 3), 0.1), (9, (70001,), 0.3),
    (1, (1,), 0.9), (2, (33,), 0.0), (4, (257,), 0.999)], ids=str)
def test_mask_is_jax_bernoulli_to_the_bit(seed, shape, rate):
    key = jax.random.fold_in(jax.random.key(seed), 11)
    expected = _jax_scaled_mask(key, shape, rate)
    native = jax.jit(lambda k: dropout.scaled_mask(k, shape, rate, jnp.float32))
    assert "minikeras_dropout_mask" in native.lower(key).as_text()
    np.testing.assert_array_equal(np.asarray(native(key)).view(np.uint32), np.asarray(expected).view(np.uint32))


def test_mask_takes_raw_key_data_as_jax_does():
    key = jax.random.PRNGKey(5)  # the legacy uint32[2] key
    expected = _jax_scaled_mask(key, (40, 3), 0.4)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda k: dropout.scaled_mask(k, (40, 3), 0.4, jnp.float32))(key)),
                                  np.asarray(expected))


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16], ids=str)
def test_a_low_precision_mask_is_the_float32_one_rounded(dtype):
    key = jax.random.key(2)
    mask16 = jax.jit(lambda k: dropout.scaled_mask(k, (9, 9), 0.25, dtype))
    assert "minikeras_dropout_mask" in mask16.lower(key).as_text()
    got = mask16(key)
    assert got.dtype == dtype
    want = jnp.where(jax.random.bernoulli(key, 0.75, (9, 9)), jnp.asarray(1 / 0.75, dtype), jnp.asarray(0, dtype))
    np.testing.assert_array_equal(np.asarray(got, np.float32), np.asarray(want, np.float32))


def test_the_kernels_off_keep_jax_code(monkeypatch):
    key = jax.random.key(2)
    monkeypatch.setattr(tuning, "NATIVE_KERNELS", False)
    off = jax.jit(lambda k: dropout.scaled_mask(k, (9, 9), 0.5, jnp.float32))
    assert "minikeras_dropout_mask" not in off.lower(key).as_text()
    np.testing.assert_array_equal(np.asarray(off(key)), np.asarray(_jax_scaled_mask(key, (9, 9), 0.5)))


@pytest.mark.parametrize("native", [True, False], ids=["native", "unrolled"])
@pytest.mark.parametrize("seed", [0, 1, 12345, 2 ** 31 - 1])
def test_split_is_jax_split_to_the_bit(monkeypatch, native, seed):
    monkeypatch.setattr(tuning, "NATIVE_KERNELS", native)
    data = jax.random.key_data(jax.random.key(seed))
    expected = np.asarray(jax.random.key_data(jax.random.split(jax.random.wrap_key_data(data))))
    split = jax.jit(lambda d: dropout.split_key_data(d))  # a new function: jax caches traces per function
    assert ("minikeras_threefry_split" in split.lower(data).as_text()) == native
    first, second = split(data)
    np.testing.assert_array_equal(np.stack([np.asarray(first), np.asarray(second)]), expected)


def test_split_and_mask_run_under_vmap():
    keys = jax.random.split(jax.random.key(3), 3)
    data = jax.vmap(jax.random.key_data)(keys)
    firsts, seconds = jax.vmap(dropout.split_key_data)(data)
    for row, first, second in zip(np.asarray(data), np.asarray(firsts), np.asarray(seconds)):
        expected = np.asarray(jax.random.key_data(jax.random.split(jax.random.wrap_key_data(row))))
        np.testing.assert_array_equal(np.stack([first, second]), expected)
    masks = jax.vmap(lambda k: dropout.scaled_mask(k, (17,), 0.5, jnp.float32))(keys)
    for key, mask in zip(keys, np.asarray(masks)):
        np.testing.assert_array_equal(mask, np.asarray(_jax_scaled_mask(key, (17,), 0.5)))


def test_a_compiled_dropout_step_draws_what_the_jax_code_draws(monkeypatch):
    """The same mk.function with the kernels on and off: the same generator states and outputs."""
    def run(native):
        monkeypatch.setattr(tuning, "NATIVE_KERNELS", native)
        mk.random.set_seed(7)
        layer = mk.layers.Dropout(0.3)

        @mk.function
        def step(x):
            return layer(x, training=True) + layer(x, training=True)

        x = mk.ones((6, 50))
        return [step(x).numpy() for _ in range(3)], mk.random.get_generator_state()

    (on, state_on), (off, state_off) = run(True), run(False)
    for a, b in zip(on, off):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(state_on, state_off)


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16], ids=str)
def test_a_widened_low_precision_mask_holds_the_same_values_and_gives_the_same_products(dtype):
    key = jax.random.key(3)
    narrow = jax.jit(lambda k: dropout.scaled_mask(k, (64, 33), 0.25, dtype))(key)
    wide = jax.jit(lambda k: dropout.scaled_mask(k, (64, 33), 0.25, dtype, widened=True))(key)
    assert wide.dtype == (jnp.float32 if random_native.available() else dtype)
    np.testing.assert_array_equal(np.asarray(wide, np.float32), np.asarray(narrow, np.float32))
    x = jnp.asarray(np.random.default_rng(0).standard_normal((64, 33)) * 10, dtype)
    np.testing.assert_array_equal(np.asarray((x * wide).astype(dtype), np.float32), np.asarray(x * narrow, np.float32))


def test_bfloat16_dropout_and_its_gradient_round_as_bfloat16_products():
    """mk.nn.dropout of a bfloat16 tensor (its mask may be float32 holding bfloat16 values): kept
    elements are x * bfloat16(1 / 0.75) rounded once, and so is the gradient's g * mask."""
    rng = np.random.default_rng(1)
    x = mk.constant(jnp.asarray(rng.standard_normal((32, 40)) * 10, jnp.bfloat16))
    w = jnp.asarray(rng.standard_normal((32, 40)), jnp.bfloat16)
    with mk.GradientTape() as tape:
        tape.watch(x)
        out = mk.nn.dropout(x, 0.25, seed=5)
        loss = mk.reduce_sum(mk.cast(out * mk.constant(w), "float32"))
    dx = tape.gradient(loss, x)
    assert out.dtype == dx.dtype == mk.bfloat16
    kept = np.asarray(out.numpy(), np.float32) != 0
    assert 0.6 < kept.mean() < 0.9
    scale = jnp.asarray(1 / 0.75, jnp.bfloat16)
    for got, value in ((out, x.numpy()), (dx, w)):
        np.testing.assert_array_equal(np.asarray(got.numpy(), np.float32),
                                      np.where(kept, np.asarray(value * scale, np.float32), 0))
