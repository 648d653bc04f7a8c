"""``step_matmul(a, b)`` = ``a @ b`` for 2-D float32 arrays on two threads: a recurrent layer's
per-step product inside its loop over time, as a native CPU kernel (``rnn_step_native.cc``).

The loop is sequential, so the step's product (tens of microseconds at LSTM(128)'s sizes) is the
only work that two cores can share. The kernel splits C by columns (or rows) between the calling
thread and one helper thread of its own, which stays alive between steps: it waits for the next
call a moment (yielding the core to any other thread that wants it), then sleeps. Each element
is one sum in order of k on either thread, so the bits do not depend on the number of threads
(those of ``matmul_native.matmul_nn``).

``supported`` says where it applies: at least two usable CPUs, and ``tuning.RNN_STEP_TWO_THREADS``
True, or ``"measure"``: then the first time a shape is asked for, a loop of its products is timed
on one thread and on two, alternating, inside the library (``two_threads_faster``), and two
threads are taken where they were faster by ``tuning.RNN_STEP_TWO_THREADS_MIN_GAIN`` in wall
time; a helper thread on a machine whose other core is busy with other processes does not pay.
Either way the bits are the same.
``available()`` builds the kernel on first use (``native_build``). It is differentiable in reverse
mode (``jax.custom_vjp``); under ``vmap`` it runs per element.
"""
import ctypes
import functools
import time

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.xla_cpu import native_build, tuning
from minikeras.xla_cpu.low_precision import cpu_flags

_TARGET = "minikeras_rnn_step_matmul"


@functools.lru_cache(maxsize=None)
def available():
    """True when the kernel is built for this machine and registered with XLA:CPU."""
    return native_build.register_targets("rnn_step_native.cc", {_TARGET: "MinikerasRnnStepMatmul"})


def supported(a_shape, b_shape, dtype):
    """Whether the two-thread kernel takes ``a @ b`` (a: (M, K), b: (K, N)) for these (concrete) shapes and
    dtype on this backend: N a multiple of 16, at least ``tuning.RNN_STEP_TWO_THREADS_FLOPS``, two usable
    CPUs, AVX-512 (``tuning.MATMUL_NN_NATIVE_NEEDS_AVX512``) and ``tuning.RNN_STEP_TWO_THREADS`` on."""
    setting = tuning.RNN_STEP_TWO_THREADS
    if setting not in (True, False, "measure"):
        raise ValueError(f"tuning.RNN_STEP_TWO_THREADS: expected True, False or 'measure', got {setting!r}")
    applies = (tuning.NATIVE_KERNELS and bool(setting) and jax.default_backend() == "cpu"
               and jnp.dtype(dtype) == jnp.float32 and native_build.usable_cpus() >= 2
               and (not tuning.MATMUL_NN_NATIVE_NEEDS_AVX512 or "avx512f" in cpu_flags())
               and len(a_shape) == 2 and len(b_shape) == 2 and all(type(d) is int for d in (*a_shape, *b_shape))
               and a_shape[1] == b_shape[0] and b_shape[1] % 16 == 0
               and 2 * a_shape[0] * a_shape[1] * b_shape[1] >= tuning.RNN_STEP_TWO_THREADS_FLOPS)
    if applies and setting == "measure":
        return available() and two_threads_faster(a_shape[0], a_shape[1], b_shape[1])
    return applies


def _call(a, b, threads):
    out = jax.ShapeDtypeStruct((a.shape[0], b.shape[1]), a.dtype)
    return jax.ffi.ffi_call(_TARGET, out, vmap_method="sequential")(a, b, threads=np.int64(threads))


@jax.custom_vjp
def _native(a, b):
    return _call(a, b, 2)


def _native_fwd(a, b):
    return _native(a, b), (a, b)


def _native_bwd(residuals, g):
    a, b = residuals
    return g @ b.T, a.T @ g  # d(a b)/da = g b^T, d(a b)/db = a^T g


_native.defvjp(_native_fwd, _native_bwd)


def step_matmul(a, b):
    """``a @ b`` (a: (M, K), b: (K, N)) on two threads where ``supported`` and ``available``, else None."""
    if supported(a.shape, b.shape, a.dtype) and available():
        return _native(a, b)
    return None


def one_thread(a, b):
    """The same kernel on the calling thread alone (for tests and benchmarks)."""
    return _call(a, b, 1)


_MEASURED_STEPS = 25
_MEASURED_ROUNDS = 5
# A measurement is taken again, after a pause, where it found two threads no faster: a moment's
# interference from another process (on a 2-vCPU machine, about one measurement in ten, each
# time for under a second) must not keep the whole process on one thread.
_MEASURE_ATTEMPTS = 4
_MEASURE_PAUSE_S = 0.05


@functools.lru_cache(maxsize=None)
def two_threads_faster(m, k, n):
    """Whether a loop of ``(m, k) @ (k, n)`` products (each step's input taken from the step
    before's product, as in a recurrent loop) runs faster in wall time on two threads than on one,
    by ``tuning.RNN_STEP_TWO_THREADS_MIN_GAIN``: medians of alternating rounds, timed inside the
    library (a few milliseconds), once per shape and process; up to ``_MEASURE_ATTEMPTS`` times,
    ``_MEASURE_PAUSE_S`` apart, until one finds two threads faster."""
    if not available():
        return False
    measure = native_build.load_library("rnn_step_native.cc").MinikerasRnnStepTwoThreadSpeedup
    measure.restype = ctypes.c_double
    measure.argtypes = [ctypes.c_int64] * 5
    for attempt in range(_MEASURE_ATTEMPTS):
        if attempt:
            time.sleep(_MEASURE_PAUSE_S)
        if measure(m, k, n, _MEASURED_STEPS, _MEASURED_ROUNDS) >= tuning.RNN_STEP_TWO_THREADS_MIN_GAIN:
            return True
    return False
