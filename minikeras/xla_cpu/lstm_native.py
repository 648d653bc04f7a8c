"""An LSTM layer's whole loop over time, forward and backward, as native CPU kernels
(``lstm_native.cc``) on the calling thread and one helper thread.

    hs, cs, gates, tcs = forward(p, bias, u, h0, c0, mask)       # the loop, the values it saves
    dz, dh0, dc0 = backward(gates, tcs, c_prev, u_t, dhs, dh, dc, mask)   # the reverse loop

``p`` is every step's input projection (time, batch, 4 units), ``mask`` None or (time, batch)
booleans; the formulas are ``rnn_gates.LSTMGates``' step and step gradient (the kernel file's
header writes them out). ``layers.rnn.rnn_fused`` runs them in place of its two ``lax.scan`` loops
where ``applies``: Keras's default activations (tanh, sigmoid), no recurrent dropout, float32,
units a multiple of 16, on the CPU backend of a CPU with AVX-512, with ``tuning.LSTM_NATIVE`` on.
The input projection before the loop and the weight gradients after it stay XLA's products.

XLA runs a step of the ``lax.scan`` as a dozen operations one after another; here a step is one
task per thread (each computes the recurrent product for its units' four gate columns, then their
gate math), on two threads where ``rnn_step_native.supported`` takes the step's product on two.
The sigmoid and tanh are XLA:CPU's formulas, so the values are within a float32 rounding or two of
the ``lax.scan`` loop's (the sums of the products run in order of k in both); they do not depend
on the number of threads.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.xla_cpu import rnn_step_native, tuning
from minikeras.xla_cpu.low_precision import cpu_flags
from minikeras.xla_cpu.native_build import register_targets

_FORWARD = "minikeras_lstm_forward"
_BACKWARD = "minikeras_lstm_backward"


@functools.lru_cache(maxsize=None)
def available():
    """True when the kernels are built for this machine and registered with XLA:CPU."""
    return register_targets("lstm_native.cc", {_FORWARD: "MinikerasLstmForward", _BACKWARD: "MinikerasLstmBackward"})


def supported(p_shape, units, dtype):
    """Whether the kernels take a loop over ``p_shape`` (time, batch, 4 units) projections."""
    return (tuning.NATIVE_KERNELS and tuning.LSTM_NATIVE and jax.default_backend() == "cpu"
            and jnp.dtype(dtype) == jnp.float32 and len(p_shape) == 3 and all(type(d) is int for d in p_shape)
            and p_shape[0] >= 1 and p_shape[1] >= 1 and units % 16 == 0 and p_shape[2] == 4 * units
            and (not tuning.LSTM_NATIVE_NEEDS_AVX512 or "avx512f" in cpu_flags()))


def _threads(batch, units):
    return 2 if rnn_step_native.supported((batch, units), (units, 4 * units), jnp.float32) else 1


def _mask(mask, shape):
    return jnp.zeros((0,), jnp.float32) if mask is None else mask.reshape(shape).astype(jnp.float32)


def forward(p, bias, u, h0, c0, mask):
    """``(hs, cs, gates, tcs)``: the states after each step (held where ``mask`` is False), the
    activated gates (i, f, g, o) and tanh of each step's new cell state."""
    t, b, g = p.shape
    units = g // 4
    outs = (jax.ShapeDtypeStruct((t, b, units), p.dtype), jax.ShapeDtypeStruct((t, b, units), p.dtype),
            jax.ShapeDtypeStruct((t, b, g), p.dtype), jax.ShapeDtypeStruct((t, b, units), p.dtype))
    call = jax.ffi.ffi_call(_FORWARD, outs, vmap_method="sequential")
    return call(p, bias, u, h0, c0, _mask(mask, (t, b)), threads=np.int64(_threads(b, units)))


def backward(gates, tcs, c_prev, u_t, dhs, dh, dc, mask):
    """``(dz, dh0, dc0)``: the cotangent of every step's gate pre-activations (that of its input
    projection) and of the initial states, given ``dhs`` (that of ``hs``, or None) and ``dh``,
    ``dc`` (those of the final states). ``u_t`` is the recurrent kernel transposed, (4 units, units)."""
    t, b, g = gates.shape
    units = g // 4
    outs = (jax.ShapeDtypeStruct((t, b, g), gates.dtype), jax.ShapeDtypeStruct((b, units), gates.dtype),
            jax.ShapeDtypeStruct((b, units), gates.dtype))
    call = jax.ffi.ffi_call(_BACKWARD, outs, vmap_method="sequential")
    dhs = jnp.zeros((0,), gates.dtype) if dhs is None else dhs
    return call(gates, tcs, c_prev, u_t, dhs, dh, dc, _mask(mask, (t, b)), threads=np.int64(_threads(b, units)))
