"""The LSTM loop kernels (minikeras/xla_cpu/lstm_native.cc) against the same loops as lax.scan
(``layers.rnn.rnn_lstm_native``'s references): masks, the sequence's cotangent or none, units in
one, two or three 16-wide chunks, one thread and two (the same bits), and their bad input."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from xla_cpu_reference import close, rand

from minikeras.ops import lstm_loops as rnn_lstm_native
from minikeras.xla_cpu import lstm_native, tuning

pytestmark = pytest.mark.skipif(not lstm_native.available(), reason="lstm_native.cc could not be built here")


def _inputs(t, b, h, seed):
    mask = np.random.default_rng(seed).random((t, b)) > 0.3
    mask[:, 0] = True  # one sequence unmasked throughout
    return (rand((t, b, 4 * h), seed), rand((4 * h,), seed + 1), rand((h, 4 * h), seed + 2) * 0.3,
            rand((b, h), seed + 3), rand((b, h), seed + 4), jnp.asarray(mask))


@pytest.mark.parametrize("t, b, h", [(6, 5, 16), (4, 3, 32), (5, 13, 48)])
@pytest.mark.parametrize("masked", [False, True], ids=["no-mask", "mask"])
def test_forward_and_backward_match_the_scan(t, b, h, masked):
    p, bias, u, h0, c0, mask = _inputs(t, b, h, seed=t + b + h)
    mask = mask if masked else None
    got = jax.jit(lstm_native.forward)(p, bias, u, h0, c0, mask)
    want = jax.jit(rnn_lstm_native.forward_reference)(p, bias, u, h0, c0, mask)
    for a, w, what in zip(got, want, ("hs", "cs", "gates", "tcs")):
        close(a, w, what, tol=1e-5)
    hs, cs, gates, tcs = got
    c_prev = jnp.concatenate([c0[None], cs[:-1]], axis=0)
    for dhs in (rand(hs.shape, 7), None):
        args = (gates, tcs, c_prev, u.T, dhs, rand((b, h), 8), rand((b, h), 9), mask)
        got_b = jax.jit(lstm_native.backward)(*args)
        want_b = jax.jit(rnn_lstm_native.backward_reference)(*args)
        for a, w, what in zip(got_b, want_b, ("dz", "dh0", "dc0")):
            close(a, w, what, tol=1e-5)


def test_one_thread_and_two_give_the_same_bits(monkeypatch):
    p, bias, u, h0, c0, mask = _inputs(7, 9, 48, seed=3)
    results = []
    for threads in (1, 2):
        monkeypatch.setattr(lstm_native, "_threads", lambda b, h, threads=threads: threads)
        forward = jax.jit(lambda *a: lstm_native.forward(*a))  # a fresh trace for each thread count
        hs, cs, gates, tcs = forward(p, bias, u, h0, c0, mask)
        backward = jax.jit(lambda *a: lstm_native.backward(*a))
        results.append((hs, cs, gates, tcs) + tuple(backward(gates, tcs, cs, u.T, hs, h0, c0, mask)))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_supported_names_its_conditions(monkeypatch):
    monkeypatch.setattr(tuning, "LSTM_NATIVE_NEEDS_AVX512", False)
    assert lstm_native.supported((100, 64, 512), 128, jnp.float32)
    assert not lstm_native.supported((100, 64, 480), 120, jnp.float32)   # units % 16
    assert not lstm_native.supported((100, 64, 512), 128, jnp.bfloat16)
    assert not lstm_native.supported((100, None, 512), 128, jnp.float32)  # a symbolic batch
    monkeypatch.setattr(tuning, "LSTM_NATIVE", False)
    assert not lstm_native.supported((100, 64, 512), 128, jnp.float32)


def test_bad_shapes_are_refused_with_the_shapes():
    p, bias, u, h0, c0, _ = _inputs(3, 2, 16, seed=5)
    with pytest.raises(Exception, match=r"lstm: expected p \(T, B, 4H\).*got p \(3, 2, 64\), kernel \(16, 48\)"):
        lstm_native.forward(p, bias, u[:, :48], h0, c0, None)
    with pytest.raises(Exception, match=r"lstm: expected a bias \(4H\), states \(B, H\)"):
        lstm_native.forward(p, bias, u, h0[:1], c0, None)
    hs, cs, gates, tcs = lstm_native.forward(p, bias, u, h0, c0, None)
    with pytest.raises(Exception, match=r"lstm gradient: the saved values.*\(3, 2, 64\)"):
        lstm_native.backward(gates, tcs[:2], cs, u.T, None, h0, c0, None)
