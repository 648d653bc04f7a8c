"""minikeras.xla_cpu.rnn_step_native: a recurrent step's a @ b on two threads, against the one-thread
kernel (bit for bit) and XLA."""
import ctypes
import os
import signal
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from xla_cpu_reference import close, rand

from minikeras.xla_cpu import matmul_native, native_build, rnn_step_native, tuning

needs_build = pytest.mark.skipif(not rnn_step_native.available(), reason="rnn_step_native.cc could not be built here")


@pytest.fixture
def every_size(monkeypatch):  # and every CPU count and CPU: the AVX2 code is checked on such CPUs
    monkeypatch.setattr(tuning, "RNN_STEP_TWO_THREADS", True)
    monkeypatch.setattr(tuning, "RNN_STEP_TWO_THREADS_FLOPS", 0)
    monkeypatch.setattr(tuning, "MATMUL_NN_NATIVE_NEEDS_AVX512", False)
    monkeypatch.setattr(native_build, "usable_cpus", lambda: 2)


two_threads = jax.jit(rnn_step_native.step_matmul)
one_thread = jax.jit(rnn_step_native.one_thread)


# 16-64 columns: C's rows split in two (odd row counts, fewer rows than a tile); wider: column chunks
# of 64 with a narrower last one; LSTM(128)'s and GRU(128)'s forward and backward steps.
@needs_build
@pytest.mark.parametrize("m,k,n", [(64, 512, 128), (64, 128, 512), (64, 128, 384), (13, 7, 16), (1, 1, 48),
                                   (25, 33, 112), (7, 300, 528), (37, 20, 64), (2, 5, 32)])
def test_two_threads_give_the_one_thread_bits(every_size, m, k, n):
    a, b = rand((m, k), k), rand((k, n), m)
    assert rnn_step_native.supported(a.shape, b.shape, a.dtype)
    got = np.asarray(two_threads(a, b))
    np.testing.assert_array_equal(got, np.asarray(one_thread(a, b)))
    close(got, a @ b, "a @ b", tol=1e-5)
    if matmul_native.available():
        np.testing.assert_array_equal(got, np.asarray(jax.jit(matmul_native._native_nn)(a, b)))


@needs_build
def test_a_loop_of_steps(every_size):
    """100 dependent steps (the helper thread spins, sleeps and wakes between them): the same bits
    as the one-thread kernel's loop."""
    u, h = rand((128, 512), 1) * 0.1, rand((64, 128), 2)

    def loop(product):
        return jax.jit(lambda h, u: jax.lax.fori_loop(0, 100, lambda i, h: jnp.tanh(product(h, u)[:, :128]), h))

    np.testing.assert_array_equal(np.asarray(loop(rnn_step_native.step_matmul)(h, u)),
                                  np.asarray(loop(rnn_step_native.one_thread)(h, u)))


@needs_build
def test_callers_on_several_threads(every_size):
    """Calls from four threads at once: one has the helper, the others run alone; all right."""
    a, b = rand((64, 256), 3), rand((256, 256), 4)
    want = np.asarray(one_thread(a, b))
    loop = jax.jit(lambda a, b: jax.lax.fori_loop(0, 20, lambda i, c: rnn_step_native.step_matmul(a + c[:, :1], b),
                                                  jnp.zeros((64, 256))))
    want_loop = np.asarray(jax.jit(lambda a, b: jax.lax.fori_loop(
        0, 20, lambda i, c: rnn_step_native.one_thread(a + c[:, :1], b), jnp.zeros((64, 256))))(a, b))
    results, errors = [], []

    def work():
        try:
            results.append((np.asarray(two_threads(a, b)), np.asarray(loop(a, b))))
        except Exception as error:  # noqa: BLE001 (reported below)
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 4
    for got, got_loop in results:
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got_loop, want_loop)


def test_where_it_does_not_apply(every_size, monkeypatch):
    assert not rnn_step_native.supported((5, 9), (9, 10), jnp.float32)  # 10 columns: not a multiple of 16
    assert not rnn_step_native.supported((5, 9), (9, 16), jnp.bfloat16)
    assert not rnn_step_native.supported((5, 9, 2), (2, 16), jnp.float32)
    assert rnn_step_native.step_matmul(rand((5, 9), 1), rand((9, 10), 2)) is None
    monkeypatch.setattr(native_build, "usable_cpus", lambda: 1)
    assert not rnn_step_native.supported((5, 9), (9, 16), jnp.float32)
    monkeypatch.setattr(native_build, "usable_cpus", lambda: 2)
    monkeypatch.setattr(tuning, "RNN_STEP_TWO_THREADS", False)
    assert not rnn_step_native.supported((5, 9), (9, 16), jnp.float32)
    monkeypatch.setattr(tuning, "RNN_STEP_TWO_THREADS", True)
    monkeypatch.setattr(tuning, "RNN_STEP_TWO_THREADS_FLOPS", 2 * 5 * 9 * 16 + 1)
    assert not rnn_step_native.supported((5, 9), (9, 16), jnp.float32)


@needs_build
def test_derivatives_first_and_second_order(every_size):
    a, b = rand((7, 20), 3), rand((20, 32), 4)
    ta, tb = rand(a.shape, 5), rand(b.shape, 6)

    def loss(f):
        return lambda a, b: jnp.sum(jnp.tanh(f(a, b)) ** 2)

    def hvp(f):
        g = jax.grad(loss(f), argnums=(0, 1))
        return jax.grad(lambda a, b: jnp.vdot(g(a, b)[0], ta) + jnp.vdot(g(a, b)[1], tb), argnums=(0, 1))(a, b)

    ref = lambda a, b: a @ b  # noqa: E731
    ours_f = rnn_step_native.step_matmul
    for ours, theirs in zip(jax.grad(loss(ours_f), argnums=(0, 1))(a, b), jax.grad(loss(ref), argnums=(0, 1))(a, b)):
        close(ours, theirs, "gradient")
    for ours, theirs in zip(hvp(ours_f), hvp(ref)):
        close(ours, theirs, "Hessian-vector product", tol=1e-4)


@needs_build
def test_under_vmap(every_size):
    a, b = rand((3, 4, 10), 7), rand((3, 10, 16), 8)
    close(jax.vmap(rnn_step_native.step_matmul)(a, b), jnp.einsum("bmk,bkn->bmn", a, b), "vmap")


def test_measured_at_first_use(every_size, monkeypatch):
    """``"measure"``: the choice is the timing's, asked once per shape; a bad setting is an error."""
    asked = []

    def faster(m, k, n):
        asked.append((m, k, n))
        return n == 32
    monkeypatch.setattr(tuning, "RNN_STEP_TWO_THREADS", "measure")
    monkeypatch.setattr(rnn_step_native, "two_threads_faster", faster)
    if rnn_step_native.available():
        assert rnn_step_native.supported((4, 8), (8, 32), jnp.float32)
        assert not rnn_step_native.supported((4, 8), (8, 16), jnp.float32)
        assert asked == [(4, 8, 32), (4, 8, 16)]
    monkeypatch.setattr(tuning, "RNN_STEP_TWO_THREADS", "yes")
    with pytest.raises(ValueError, match="RNN_STEP_TWO_THREADS: expected True, False or 'measure', got 'yes'"):
        rnn_step_native.supported((4, 8), (8, 32), jnp.float32)


@needs_build
def test_the_timing_runs():
    """The library's timing of one thread against two gives a positive ratio (its value is the machine's)."""
    rnn_step_native.two_threads_faster.cache_clear()
    assert rnn_step_native.two_threads_faster(8, 16, 32) in (True, False)
    measure = native_build.load_library("rnn_step_native.cc").MinikerasRnnStepTwoThreadSpeedup
    measure.restype = ctypes.c_double
    measure.argtypes = [ctypes.c_int64] * 5
    assert measure(8, 16, 32, 3, 3) > 0
    assert measure(8, 16, 30, 3, 3) == 0  # bad arguments: no timing


@needs_build
@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")  # the child calls the library only, not jax
def test_a_forked_child_runs_alone():
    """After the helper thread started, a forked child (which has no helper) still gets its products done."""
    measure = native_build.load_library("rnn_step_native.cc").MinikerasRnnStepTwoThreadSpeedup
    measure.restype = ctypes.c_double
    measure.argtypes = [ctypes.c_int64] * 5
    assert measure(8, 16, 128, 3, 1) > 0  # the helper runs in this process now
    pid = os.fork()
    if pid == 0:  # the child: the same timing, which runs the pair's code path
        os._exit(0 if measure(8, 16, 128, 3, 1) > 0 else 1)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail("the forked child did not finish its products within 60 s")
