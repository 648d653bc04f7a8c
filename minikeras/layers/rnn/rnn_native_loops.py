"""``rnn_fused``'s loop for an LSTM or a GRU (``reset_after=True``) cell on native kernels
(``xla_cpu.rnn_loops_native``): the input projection of every step as one product before the
loop (as there), then the whole forward loop as one native call, the whole reverse loop as
another, and the weight gradients as one product each after it.

``applies`` says where: ``rnn_gates.LSTMGates`` or ``GRUGates(reset_after=True)`` with Keras's
default activations (tanh, sigmoid), no recurrent dropout, float32, and the kernels' own
conditions (``ops.fused.rnn_loops_apply``). Input dropout and masks are taken as ``rnn_fused``
takes them.

The loops are ``ops.fused``'s ``lstm_forward_loop`` and ``lstm_backward_loop`` (the GRU's
likewise; ``ops.rnn_loops``, whose derivatives make a derivative of the gradient, second order
through the tape, exact).
"""
import jax
import jax.numpy as jnp

from minikeras.layers.rnn.rnn_gates import GRUGates, LSTMGates, product, product_input_grad, product_weight_grad
from minikeras.ops.fused import (
    gru_backward_loop,
    gru_forward_loop,
    lstm_backward_loop,
    lstm_forward_loop,
    rnn_loops_apply,
    weight_gradient,
    weight_gradient_and_column_sums,
)


def _kind(gates):
    if isinstance(gates, LSTMGates):
        return "lstm"
    if isinstance(gates, GRUGates) and gates.reset_after:
        return "gru"
    return None


def applies(gates, x, kernel, recurrent_kernel, rdp):
    """Whether ``native_loop`` runs this cell's loop (time-major ``x``)."""
    kind = _kind(gates)
    return (kind is not None and gates.act.name == "tanh" and gates.rec.name == "sigmoid"
            and rdp is None and x.ndim == 3
            and all(a.dtype == jnp.float32 for a in (x, kernel, recurrent_kernel))
            and rnn_loops_apply(kind, (x.shape[0], x.shape[1], recurrent_kernel.shape[1]), recurrent_kernel.shape[0],
                                x.dtype))


def _product_gradients(a, g, mask, with_sums):
    """``(product_weight_grad(a, g, mask), g summed over every step and row or None)``: one product
    over all steps, the sums from the same pass over ``g`` where the mask is one for all gates."""
    g_rows = g.reshape((-1, g.shape[-1]))
    if mask is not None and mask.ndim == 3:  # a mask per gate: a product per gate's block of g
        return product_weight_grad(a, g, mask), (jnp.sum(g_rows, axis=0) if with_sums else None)
    a_rows = (a if mask is None else a * mask).reshape((-1, a.shape[-1]))
    if with_sums:
        return weight_gradient_and_column_sums(a_rows, g_rows)
    return weight_gradient(a_rows, g_rows), None


def _previous(first, sequence):
    return jnp.concatenate([first[None], sequence[:-1]], axis=0)


def native_loop(gates, x, kernel, recurrent_kernel, bias, mask, states, dp, *, sequence):
    """``rnn_fused.fused_loop``'s result where ``applies``: ``x`` (time, batch, features) in the
    order the steps run, ``mask`` None or (time, batch, 1), ``states`` the initial states, ``dp``
    None or the input dropout mask."""
    steps_mask = None if mask is None else mask[..., 0]
    if _kind(gates) == "lstm":
        return _lstm_loop(x, kernel, recurrent_kernel, bias, steps_mask, *states, dp, sequence)
    b_in, b_rec = gates.split_bias(bias)
    return _gru_loop(x, kernel, recurrent_kernel, b_in, b_rec, steps_mask, *states, dp, sequence)


def _or_zeros(bias, size, dtype):
    return jnp.zeros((size,), dtype) if bias is None else bias


def _lstm_loop(x, kernel, recurrent_kernel, bias, steps_mask, h0, c0, dp, sequence):
    size = recurrent_kernel.shape[1]

    def outputs(hs, cs):
        return ((hs,) if sequence else ()) + (hs[-1], cs[-1])

    @jax.custom_vjp
    def loop(x, kernel, recurrent_kernel, bias, h0, c0, steps_mask, dp):
        p = product(x, kernel, dp)
        hs, cs, _, _ = lstm_forward_loop(p, _or_zeros(bias, size, x.dtype), recurrent_kernel, h0, c0, steps_mask)
        return outputs(hs, cs)

    def loop_fwd(x, kernel, recurrent_kernel, bias, h0, c0, steps_mask, dp):
        p = product(x, kernel, dp)
        hs, cs, gates, tcs = lstm_forward_loop(p, _or_zeros(bias, size, x.dtype), recurrent_kernel, h0, c0,
                                               steps_mask)
        return outputs(hs, cs), (x, kernel, recurrent_kernel, bias, h0, c0, steps_mask, dp, hs, cs, gates, tcs)

    def loop_bwd(residuals, cotangents):
        x, kernel, recurrent_kernel, bias, h0, c0, steps_mask, dp, hs, cs, gates, tcs = residuals
        d_seq = cotangents[0] if sequence else None
        d_h, d_c = cotangents[-2:]
        dz, d_h0, d_c0 = lstm_backward_loop(gates, tcs, _previous(c0, cs), recurrent_kernel.T, d_seq, d_h, d_c,
                                            steps_mask)
        d_kernel, d_bias = _product_gradients(x, dz, dp, bias is not None)
        d_u, _ = _product_gradients(_previous(h0, hs), dz, None, False)
        return (product_input_grad(dz, kernel.T, dp), d_kernel, d_u, d_bias, d_h0, d_c0, None,
                None if dp is None else jnp.zeros_like(dp))

    loop.defvjp(loop_fwd, loop_bwd)
    return loop(x, kernel, recurrent_kernel, bias, h0, c0, steps_mask, dp)


def _gru_loop(x, kernel, recurrent_kernel, b_in, b_rec, steps_mask, h0, dp, sequence):
    size = recurrent_kernel.shape[1]

    def outputs(hs):
        return ((hs,) if sequence else ()) + (hs[-1],)

    def forward(x, kernel, recurrent_kernel, b_in, b_rec, h0, steps_mask, dp):
        return gru_forward_loop(product(x, kernel, dp), _or_zeros(b_in, size, x.dtype), recurrent_kernel,
                                _or_zeros(b_rec, size, x.dtype), h0, steps_mask)

    @jax.custom_vjp
    def loop(*args):
        return outputs(forward(*args)[0])

    def loop_fwd(*args):
        hs, gates, rhs = forward(*args)
        return outputs(hs), args + (hs, gates, rhs)

    def loop_bwd(residuals, cotangents):
        x, kernel, recurrent_kernel, b_in, b_rec, h0, steps_mask, dp, hs, gates, rhs = residuals
        d_seq = cotangents[0] if sequence else None
        h_prev = _previous(h0, hs)
        d_p, d_q, d_h0 = gru_backward_loop(gates, rhs, h_prev, recurrent_kernel.T, d_seq, cotangents[-1], steps_mask)
        d_kernel, d_b_in = _product_gradients(x, d_p, dp, b_in is not None)
        d_u, d_b_rec = _product_gradients(h_prev, d_q, None, b_rec is not None)
        return (product_input_grad(d_p, kernel.T, dp), d_kernel, d_u, d_b_in, d_b_rec, d_h0, None,
                None if dp is None else jnp.zeros_like(dp))

    loop.defvjp(loop_fwd, loop_bwd)
    return loop(x, kernel, recurrent_kernel, b_in, b_rec, h0, steps_mask, dp)
