"""An LSTM's whole forward and reverse loops over time, as ops on jax arrays: on
``xla_cpu.lstm_native``'s kernels, with derivatives.

    hs, cs, gates, tcs = lstm_forward_loop(p, bias, u, h0, c0, mask)
    dz, dh0, dc0 = lstm_backward_loop(gates, tcs, c_prev, u_t, dhs, dh, dc, mask)

The formulas are ``lstm_native``'s (its kernel file writes them out): Keras's LSTM step with its
default activations (tanh, sigmoid) and no recurrent dropout, from every step's input projection
``p`` (time, batch, 4 units); ``mask`` None or (time, batch) booleans. ``applies`` says where the
kernels take a loop. The kernels have no derivatives of their own: each op is a
``jax.custom_vjp`` whose rule is jax's derivative of the same loop as a ``lax.scan``
(``forward_reference``, ``backward_reference``, which the tests also compare the kernels with), so
that a derivative of a gradient (second order through the tape) is exact too.
"""
import jax
import jax.numpy as jnp
from jax import lax

from minikeras.xla_cpu import lstm_native


def applies(p_shape, units, dtype):
    """Whether ``lstm_forward_loop`` and ``lstm_backward_loop`` run on the kernels for every step's
    input projections of ``p_shape`` (time, batch, 4 units)."""
    return lstm_native.supported(p_shape, units, dtype) and lstm_native.available()


# -- the loops as lax.scan: the kernels' derivatives, and the tests' references ----------------------------
def _split4(z):
    return jnp.split(z, 4, axis=-1)


def forward_reference(p, bias, u, h0, c0, mask):
    """``lstm_native.forward``'s outputs ``(hs, cs, gates, tcs)`` from a ``lax.scan`` (``mask``: None
    or (time, batch) booleans)."""
    def body(states, inp):
        h, c = states
        p_t, m = inp
        zi, zf, zg, zo = _split4((p_t + bias) + h @ u)
        i, f, g, o = jax.nn.sigmoid(zi), jax.nn.sigmoid(zf), jnp.tanh(zg), jax.nn.sigmoid(zo)
        c_new = f * c + i * g
        tc = jnp.tanh(c_new)
        h_new = o * tc
        if m is not None:
            h_new, c_new = jnp.where(m[:, None], h_new, h), jnp.where(m[:, None], c_new, c)
        return (h_new, c_new), (h_new, c_new, jnp.concatenate([i, f, g, o], axis=-1), tc)
    return lax.scan(body, (h0, c0), (p, mask))[1]


def backward_reference(gates, tcs, c_prev, u_t, dhs, dh, dc, mask):
    """``lstm_native.backward``'s outputs ``(dz, dh0, dc0)`` from a reverse ``lax.scan``."""
    def body(carry, inp):
        dh, dc = carry
        gates_t, tc, c_p, dhs_t, m = inp
        if dhs_t is not None:
            dh = dh + dhs_t
        dh_n, dc_n = (dh, dc) if m is None else (jnp.where(m[:, None], dh, 0), jnp.where(m[:, None], dc, 0))
        i, f, g, o = _split4(gates_t)
        dz_o = (dh_n * tc) * (o * (1 - o))
        dc_n = dc_n + (dh_n * o) * (1 - tc * tc)
        dz = jnp.concatenate([(dc_n * g) * (i * (1 - i)), (dc_n * c_p) * (f * (1 - f)), (dc_n * i) * (1 - g * g),
                              dz_o], axis=-1)
        dh_p, dc_p = dz @ u_t, dc_n * f
        if m is not None:
            dh_p, dc_p = dh_p + jnp.where(m[:, None], 0, dh), dc_p + jnp.where(m[:, None], 0, dc)
        return (dh_p, dc_p), dz
    (dh0, dc0), dz = lax.scan(body, (dh, dc), (gates, tcs, c_prev, dhs, mask), reverse=True)
    return dz, dh0, dc0


# -- the kernels, with derivatives ---------------------------------------------------------------------
@jax.custom_vjp
def lstm_forward_loop(p, bias, u, h0, c0, mask):
    return lstm_native.forward(p, bias, u, h0, c0, mask)


def _forward_fwd(p, bias, u, h0, c0, mask):
    return lstm_forward_loop(p, bias, u, h0, c0, mask), (p, bias, u, h0, c0, mask)


def _forward_bwd(inputs, cotangents):
    *diff, mask = inputs
    return jax.vjp(lambda *a: forward_reference(*a, mask), *diff)[1](cotangents) + (None,)


lstm_forward_loop.defvjp(_forward_fwd, _forward_bwd)


@jax.custom_vjp
def lstm_backward_loop(gates, tcs, c_prev, u_t, dhs, dh, dc, mask):
    return lstm_native.backward(gates, tcs, c_prev, u_t, dhs, dh, dc, mask)


def _backward_fwd(*args):
    return lstm_backward_loop(*args), args


def _backward_bwd(inputs, cotangents):
    *diff, mask = inputs
    return jax.vjp(lambda *a: backward_reference(*a, mask), *diff)[1](cotangents) + (None,)


lstm_backward_loop.defvjp(_backward_fwd, _backward_bwd)
