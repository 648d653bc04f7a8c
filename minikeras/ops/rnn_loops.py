"""The whole forward and reverse loops over time of an LSTM and of a GRU (``reset_after=True``), as
ops on jax arrays: on ``xla_cpu.rnn_loops_native``'s kernels, with derivatives.

    hs, cs, gates, tcs = lstm_forward_loop(p, bias, u, h0, c0, mask)
    dz, dh0, dc0 = lstm_backward_loop(gates, tcs, c_prev, u_t, dhs, dh, dc, mask)
    hs, gates, rhs = gru_forward_loop(p, b_in, u, b_rec, h0, mask)
    dp, dq, dh0 = gru_backward_loop(gates, rhs, h_prev, u_t, dhs, dh, mask)

The formulas are the kernels' (their file writes them out): Keras's cells with their default
activations (tanh, sigmoid) and no recurrent dropout, from every step's input projection ``p``;
``mask`` None or (time, batch) booleans. ``applies`` says where the kernels take a loop. The
kernels have no derivatives of their own: each op is a ``jax.custom_vjp`` whose rule is jax's
derivative of the same loop as a ``lax.scan`` (the ``*_reference`` functions, which the tests also
compare the kernels with), so that a derivative of a gradient (second order through the tape) is
exact too.
"""
import jax
import jax.numpy as jnp
from jax import lax

from minikeras.xla_cpu import rnn_loops_native


def applies(kind, p_shape, units, dtype):
    """Whether the loops of ``kind`` ('lstm' or 'gru') run on the kernels for every step's input
    projections of ``p_shape`` (time, batch, gates x units)."""
    return rnn_loops_native.supported(kind, p_shape, units, dtype) and rnn_loops_native.available()


# -- the loops as lax.scan: the kernels' derivatives, and the tests' references ----------------------------
def _where(m, a, b):
    return a if m is None else jnp.where(m[:, None], a, b)


def lstm_forward_reference(p, bias, u, h0, c0, mask):
    """``lstm_forward_loop``'s outputs ``(hs, cs, gates, tcs)`` from a ``lax.scan``."""
    def body(states, inp):
        h, c = states
        p_t, m = inp
        zi, zf, zg, zo = jnp.split((p_t + bias) + h @ u, 4, axis=-1)
        i, f, g, o = jax.nn.sigmoid(zi), jax.nn.sigmoid(zf), jnp.tanh(zg), jax.nn.sigmoid(zo)
        c_new = f * c + i * g
        tc = jnp.tanh(c_new)
        h_new, c_new = _where(m, o * tc, h), _where(m, c_new, c)
        return (h_new, c_new), (h_new, c_new, jnp.concatenate([i, f, g, o], axis=-1), tc)
    return lax.scan(body, (h0, c0), (p, mask))[1]


def lstm_backward_reference(gates, tcs, c_prev, u_t, dhs, dh, dc, mask):
    """``lstm_backward_loop``'s outputs ``(dz, dh0, dc0)`` from a reverse ``lax.scan``."""
    def body(carry, inp):
        dh, dc = carry
        gates_t, tc, c_p, dhs_t, m = inp
        if dhs_t is not None:
            dh = dh + dhs_t
        dh_n, dc_n = _where(m, dh, 0), _where(m, dc, 0)
        i, f, g, o = jnp.split(gates_t, 4, axis=-1)
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


def gru_forward_reference(p, b_in, u, b_rec, h0, mask):
    """``gru_forward_loop``'s outputs ``(hs, gates, rhs)`` from a ``lax.scan``."""
    def body(h, inp):
        p_t, m = inp
        xz, xr, xh = jnp.split(p_t + b_in, 3, axis=-1)
        qz, qr, qh = jnp.split(h @ u + b_rec, 3, axis=-1)
        z, r = jax.nn.sigmoid(xz + qz), jax.nn.sigmoid(xr + qr)
        hh = jnp.tanh(xh + r * qh)
        h_new = _where(m, z * h + (1 - z) * hh, h)
        return h_new, (h_new, jnp.concatenate([z, r, hh], axis=-1), qh)
    return lax.scan(body, h0, (p, mask))[1]


def gru_backward_reference(gates, rhs, h_prev, u_t, dhs, dh, mask):
    """``gru_backward_loop``'s outputs ``(dp, dq, dh0)`` from a reverse ``lax.scan``."""
    def body(dh, inp):
        gates_t, qh, h_p, dhs_t, m = inp
        if dhs_t is not None:
            dh = dh + dhs_t
        dh_n = _where(m, dh, 0)
        z, r, hh = jnp.split(gates_t, 3, axis=-1)
        dz = (dh_n * (h_p - hh)) * (z * (1 - z))
        dhh = (dh_n * (1 - z)) * (1 - hh * hh)
        dr = (dhh * qh) * (r * (1 - r))
        dq = jnp.concatenate([dz, dr, dhh * r], axis=-1)
        dh_p = dh_n * z + dq @ u_t
        if m is not None:
            dh_p = dh_p + jnp.where(m[:, None], 0, dh)
        return dh_p, (jnp.concatenate([dz, dr, dhh], axis=-1), dq)
    dh0, (dp, dq) = lax.scan(body, dh, (gates, rhs, h_prev, dhs, mask), reverse=True)
    return dp, dq, dh0


# -- the kernels, with derivatives ---------------------------------------------------------------------
def _with_reference_derivative(kernel, reference):
    """``kernel(*args, mask)`` as a ``jax.custom_vjp`` whose rule is ``jax.vjp`` of ``reference``
    (the mask, last, has no cotangent)."""
    op = jax.custom_vjp(kernel)

    def fwd(*args):
        return op(*args), args

    def bwd(args, cotangents):
        *diff, mask = args
        return jax.vjp(lambda *a: reference(*a, mask), *diff)[1](cotangents) + (None,)

    op.defvjp(fwd, bwd)
    return op


def _kernel(name):
    return lambda *args: getattr(rnn_loops_native, name)(*args)  # looked up per call: tests spy on it


lstm_forward_loop = _with_reference_derivative(_kernel("lstm_forward"), lstm_forward_reference)
lstm_backward_loop = _with_reference_derivative(_kernel("lstm_backward"), lstm_backward_reference)
gru_forward_loop = _with_reference_derivative(_kernel("gru_forward"), gru_forward_reference)
gru_backward_loop = _with_reference_derivative(_kernel("gru_backward"), gru_backward_reference)
