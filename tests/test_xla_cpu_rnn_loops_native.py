"""The LSTM and GRU loop kernels (minikeras/xla_cpu/rnn_loops_native.cc) against the same loops as
lax.scan (``ops.rnn_loops``' references): masks, the sequence's cotangent or none, units in one,
two or three 16-wide chunks, one thread and two (the same bits), and their bad input."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from xla_cpu_reference import close, rand

from minikeras.ops import rnn_loops
from minikeras.xla_cpu import rnn_loops_native, tuning

pytestmark = pytest.mark.skipif(not rnn_loops_native.available(), reason="rnn_loops_native.cc could not be built")
SHAPES = [(6, 5, 16), (4, 3, 32), (5, 13, 48)]


def _mask(t, b, seed):
    mask = np.random.default_rng(seed).random((t, b)) > 0.3
    mask[:, 0] = True  # one sequence unmasked throughout
    return jnp.asarray(mask)


def _lstm_inputs(t, b, h, seed):
    return (rand((t, b, 4 * h), seed), rand((4 * h,), seed + 1), rand((h, 4 * h), seed + 2) * 0.3,
            rand((b, h), seed + 3), rand((b, h), seed + 4), _mask(t, b, seed))


def _gru_inputs(t, b, h, seed):
    return (rand((t, b, 3 * h), seed), rand((3 * h,), seed + 1), rand((h, 3 * h), seed + 2) * 0.3,
            rand((3 * h,), seed + 5), rand((b, h), seed + 3), _mask(t, b, seed))


def _close_all(got, want, names):
    for a, w, what in zip(got, want, names):
        close(a, w, what, tol=1e-5)


@pytest.mark.parametrize("t, b, h", SHAPES)
@pytest.mark.parametrize("masked", [False, True], ids=["no-mask", "mask"])
def test_lstm_forward_and_backward_match_the_scan(t, b, h, masked):
    p, bias, u, h0, c0, mask = _lstm_inputs(t, b, h, seed=t + b + h)
    mask = mask if masked else None
    got = jax.jit(rnn_loops_native.lstm_forward)(p, bias, u, h0, c0, mask)
    _close_all(got, jax.jit(rnn_loops.lstm_forward_reference)(p, bias, u, h0, c0, mask), ("hs", "cs", "gates", "tcs"))
    hs, cs, gates, tcs = got
    c_prev = jnp.concatenate([c0[None], cs[:-1]], axis=0)
    for dhs in (rand(hs.shape, 7), None):
        args = (gates, tcs, c_prev, u.T, dhs, rand((b, h), 8), rand((b, h), 9), mask)
        _close_all(jax.jit(rnn_loops_native.lstm_backward)(*args), jax.jit(rnn_loops.lstm_backward_reference)(*args),
                   ("dz", "dh0", "dc0"))


@pytest.mark.parametrize("t, b, h", SHAPES)
@pytest.mark.parametrize("masked", [False, True], ids=["no-mask", "mask"])
def test_gru_forward_and_backward_match_the_scan(t, b, h, masked):
    p, b_in, u, b_rec, h0, mask = _gru_inputs(t, b, h, seed=t + b + h)
    mask = mask if masked else None
    got = jax.jit(rnn_loops_native.gru_forward)(p, b_in, u, b_rec, h0, mask)
    _close_all(got, jax.jit(rnn_loops.gru_forward_reference)(p, b_in, u, b_rec, h0, mask), ("hs", "gates", "rhs"))
    hs, gates, rhs = got
    h_prev = jnp.concatenate([h0[None], hs[:-1]], axis=0)
    for dhs in (rand(hs.shape, 7), None):
        args = (gates, rhs, h_prev, u.T, dhs, rand((b, h), 8), mask)
        _close_all(jax.jit(rnn_loops_native.gru_backward)(*args), jax.jit(rnn_loops.gru_backward_reference)(*args),
                   ("dp", "dq", "dh0"))


def test_one_thread_and_two_give_the_same_bits(monkeypatch):
    p, bias, u, h0, c0, mask = _lstm_inputs(7, 9, 48, seed=3)
    gp, b_in, gu, b_rec, _, _ = _gru_inputs(7, 9, 48, seed=4)
    results = []
    for threads in (1, 2):
        monkeypatch.setattr(rnn_loops_native, "_threads", lambda b, h, g, threads=threads: threads)
        hs, cs, gates, tcs = jax.jit(lambda *a: rnn_loops_native.lstm_forward(*a))(p, bias, u, h0, c0, mask)
        lstm_back = jax.jit(lambda *a: rnn_loops_native.lstm_backward(*a))(gates, tcs, cs, u.T, hs, h0, c0, mask)
        ghs, ggates, grhs = jax.jit(lambda *a: rnn_loops_native.gru_forward(*a))(gp, b_in, gu, b_rec, h0, mask)
        gru_back = jax.jit(lambda *a: rnn_loops_native.gru_backward(*a))(ggates, grhs, ghs, gu.T, ghs, h0, mask)
        results.append((hs, cs, gates, tcs, *lstm_back, ghs, ggates, grhs, *gru_back))  # fresh traces each time
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_supported_names_its_conditions(monkeypatch):
    monkeypatch.setattr(tuning, "RNN_LOOPS_NATIVE_NEEDS_AVX512", False)
    assert rnn_loops_native.supported("lstm", (100, 64, 512), 128, jnp.float32)
    assert rnn_loops_native.supported("gru", (100, 64, 384), 128, jnp.float32)
    assert not rnn_loops_native.supported("gru", (100, 64, 512), 128, jnp.float32)   # 4 gates' projections
    assert not rnn_loops_native.supported("lstm", (100, 64, 480), 120, jnp.float32)  # units % 16
    assert not rnn_loops_native.supported("lstm", (100, 64, 512), 128, jnp.bfloat16)
    assert not rnn_loops_native.supported("lstm", (100, None, 512), 128, jnp.float32)  # a symbolic batch
    monkeypatch.setattr(tuning, "LSTM_NATIVE", False)
    assert not rnn_loops_native.supported("lstm", (100, 64, 512), 128, jnp.float32)
    assert rnn_loops_native.supported("gru", (100, 64, 384), 128, jnp.float32)
    monkeypatch.setattr(tuning, "GRU_NATIVE", False)
    assert not rnn_loops_native.supported("gru", (100, 64, 384), 128, jnp.float32)


def test_bad_shapes_are_refused_with_the_shapes():
    p, bias, u, h0, c0, _ = _lstm_inputs(3, 2, 16, seed=5)
    with pytest.raises(Exception, match=r"lstm: expected p \(T, B, 4H\).*got p \(3, 2, 64\), kernel \(16, 48\)"):
        rnn_loops_native.lstm_forward(p, bias, u[:, :48], h0, c0, None)
    with pytest.raises(Exception, match=r"lstm: expected a bias \(4H\), states \(B, H\)"):
        rnn_loops_native.lstm_forward(p, bias, u, h0[:1], c0, None)
    hs, cs, gates, tcs = rnn_loops_native.lstm_forward(p, bias, u, h0, c0, None)
    with pytest.raises(Exception, match=r"lstm gradient: the saved values.*\(3, 2, 64\)"):
        rnn_loops_native.lstm_backward(gates, tcs[:2], cs, u.T, None, h0, c0, None)
    gp, b_in, gu, b_rec, h0, _ = _gru_inputs(3, 2, 16, seed=6)
    with pytest.raises(Exception, match=r"gru: expected p \(T, B, 3H\).*got p \(3, 2, 64\)"):
        rnn_loops_native.gru_forward(p, b_in, gu, b_rec, h0, None)
    with pytest.raises(Exception, match=r"gru: expected biases \(3H\)"):
        rnn_loops_native.gru_forward(gp, b_in[:16], gu, b_rec, h0, None)
