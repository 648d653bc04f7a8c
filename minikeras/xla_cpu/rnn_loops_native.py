"""The whole loops over time of an LSTM and of a GRU (``reset_after=True``), forward and backward,
as native CPU kernels (``rnn_loops_native.cc``) on the calling thread and one helper thread.

    hs, cs, gates, tcs = lstm_forward(p, bias, u, h0, c0, mask)        # the loop, the values it saves
    dz, dh0, dc0 = lstm_backward(gates, tcs, c_prev, u_t, dhs, dh, dc, mask)   # the reverse loop
    hs, gates, rhs = gru_forward(p, b_in, u, b_rec, h0, mask)
    dp, dq, dh0 = gru_backward(gates, rhs, h_prev, u_t, dhs, dh, mask)

``p`` is every step's input projection (time, batch, 4 or 3 units), ``mask`` None or (time,
batch) booleans, ``u_t`` the recurrent kernel transposed; the formulas are ``rnn_gates``' cells'
step and step gradient (the kernel file's header writes them out). ``ops.rnn_loops`` gives them
derivatives, and ``layers.rnn.rnn_native_loops`` runs them in place of ``rnn_fused``'s two
``lax.scan`` loops where ``supported``: Keras's default activations (tanh, sigmoid), no recurrent
dropout, float32, units a multiple of 16, on the CPU backend of a CPU with AVX-512, with
``tuning.LSTM_NATIVE`` / ``tuning.GRU_NATIVE`` on. The input projection before the loop and the
weight gradients after it stay products over all steps.

XLA runs a step of the ``lax.scan`` as a dozen operations one after another; here a step is one
task per thread (each computes the recurrent product for its units' gate columns, then their gate
math), on two threads where ``rnn_step_native.supported`` takes the step's product on two. The
sigmoid and tanh are the formulas XLA:CPU evaluates (XLA's exp; Eigen's rational tanh), so the
values are within a float32 rounding or two of the ``lax.scan`` loop's (the sums of the products
run in order of k in both); they do not depend on the number of threads.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.xla_cpu import rnn_step_native, tuning
from minikeras.xla_cpu.low_precision import cpu_flags
from minikeras.xla_cpu.native_build import register_targets

_TARGETS = {"minikeras_lstm_forward": "MinikerasLstmForward", "minikeras_lstm_backward": "MinikerasLstmBackward",
            "minikeras_gru_forward": "MinikerasGruForward", "minikeras_gru_backward": "MinikerasGruBackward"}
_GATES = {"lstm": 4, "gru": 3}


@functools.lru_cache(maxsize=None)
def available():
    """True when the kernels are built for this machine and registered with XLA:CPU."""
    return register_targets("rnn_loops_native.cc", _TARGETS)


def supported(kind, p_shape, units, dtype):
    """Whether the kernels of ``kind`` ('lstm' or 'gru') take a loop over ``p_shape`` (time, batch,
    gates x units) projections."""
    switch = tuning.LSTM_NATIVE if kind == "lstm" else tuning.GRU_NATIVE
    return (tuning.NATIVE_KERNELS and switch and jax.default_backend() == "cpu"
            and jnp.dtype(dtype) == jnp.float32 and len(p_shape) == 3 and all(type(d) is int for d in p_shape)
            and p_shape[0] >= 1 and p_shape[1] >= 1 and units % 16 == 0 and p_shape[2] == _GATES[kind] * units
            and (not tuning.RNN_LOOPS_NATIVE_NEEDS_AVX512 or "avx512f" in cpu_flags()))


def _threads(batch, units, gates):
    return 2 if rnn_step_native.supported((batch, units), (units, gates * units), jnp.float32) else 1


def _mask(mask, shape):
    return jnp.zeros((0,), jnp.float32) if mask is None else mask.reshape(shape).astype(jnp.float32)


def _none_as_empty(x, dtype):
    return jnp.zeros((0,), dtype) if x is None else x


def _call(target, outs, *args, threads):
    return jax.ffi.ffi_call(target, outs, vmap_method="sequential")(*args, threads=np.int64(threads))


def lstm_forward(p, bias, u, h0, c0, mask):
    """``(hs, cs, gates, tcs)``: the states after each step (held where ``mask`` is False), the
    activated gates (i, f, g, o) and tanh of each step's new cell state."""
    t, b, g = p.shape
    units = g // 4
    state = jax.ShapeDtypeStruct((t, b, units), p.dtype)
    return _call("minikeras_lstm_forward", (state, state, jax.ShapeDtypeStruct((t, b, g), p.dtype), state),
                 p, bias, u, h0, c0, _mask(mask, (t, b)), threads=_threads(b, units, 4))


def lstm_backward(gates, tcs, c_prev, u_t, dhs, dh, dc, mask):
    """``(dz, dh0, dc0)``: the cotangent of every step's gate pre-activations (that of its input
    projection) and of the initial states, given ``dhs`` (that of ``hs``, or None) and ``dh``,
    ``dc`` (those of the final states)."""
    t, b, g = gates.shape
    units = g // 4
    state = jax.ShapeDtypeStruct((b, units), gates.dtype)
    return _call("minikeras_lstm_backward", (jax.ShapeDtypeStruct((t, b, g), gates.dtype), state, state),
                 gates, tcs, c_prev, u_t, _none_as_empty(dhs, gates.dtype), dh, dc, _mask(mask, (t, b)),
                 threads=_threads(b, units, 4))


def gru_forward(p, b_in, u, b_rec, h0, mask):
    """``(hs, gates, rhs)``: the states after each step (held where ``mask`` is False), the gates
    (z, r, the candidate) and each step's recurrent product of the candidate's block with its bias."""
    t, b, g = p.shape
    units = g // 3
    state = jax.ShapeDtypeStruct((t, b, units), p.dtype)
    return _call("minikeras_gru_forward", (state, jax.ShapeDtypeStruct((t, b, g), p.dtype), state),
                 p, b_in, u, b_rec, h0, _mask(mask, (t, b)), threads=_threads(b, units, 3))


def gru_backward(gates, rhs, h_prev, u_t, dhs, dh, mask):
    """``(dp, dq, dh0)``: the cotangents of every step's input projection and recurrent product and
    of the initial state, given ``dhs`` (that of ``hs``, or None) and ``dh`` (the final state's)."""
    t, b, g = gates.shape
    units = g // 3
    steps = jax.ShapeDtypeStruct((t, b, g), gates.dtype)
    return _call("minikeras_gru_backward", (steps, steps, jax.ShapeDtypeStruct((b, units), gates.dtype)),
                 gates, rhs, h_prev, u_t, _none_as_empty(dhs, gates.dtype), dh, _mask(mask, (t, b)),
                 threads=_threads(b, units, 3))
