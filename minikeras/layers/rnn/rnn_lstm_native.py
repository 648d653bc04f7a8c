"""``rnn_fused``'s loop for an LSTM cell on native kernels (``xla_cpu.lstm_native``): the input projection
of every step as one product before the loop (as there), then the whole forward loop as one
native call, the whole reverse loop as another, and the weight gradients as one product each
after it.

``applies`` says where: ``rnn_gates.LSTMGates`` with Keras's default activations (tanh, sigmoid),
no recurrent dropout, float32, and the kernels' own conditions (``ops.fused.lstm_loops_apply``).
Input dropout and masks are taken as ``rnn_fused`` takes them.

The loops are ``ops.fused``'s ``lstm_forward_loop`` and ``lstm_backward_loop`` (``ops.lstm_loops``,
whose derivatives make a derivative of the gradient, second order through the tape, exact).
"""
import jax
import jax.numpy as jnp

from minikeras.layers.rnn.rnn_gates import LSTMGates, product, product_input_grad, product_weight_grad
from minikeras.ops.fused import (
    lstm_backward_loop,
    lstm_forward_loop,
    lstm_loops_apply,
    weight_gradient,
    weight_gradient_and_column_sums,
)


def applies(gates, x, kernel, recurrent_kernel, rdp):
    """Whether ``native_loop`` runs this LSTM (time-major ``x``)."""
    return (isinstance(gates, LSTMGates) and gates.act.name == "tanh" and gates.rec.name == "sigmoid"
            and rdp is None and x.ndim == 3
            and all(a.dtype == jnp.float32 for a in (x, kernel, recurrent_kernel))
            and lstm_loops_apply((x.shape[0], x.shape[1], recurrent_kernel.shape[1]), recurrent_kernel.shape[0],
                                 x.dtype))


def _weight_gradients(x, h_prev, dz, dp, with_bias):
    """The kernel's, recurrent kernel's and bias's gradients over every step, each one product over
    all steps; the bias's sums from the kernel's product's pass over ``dz``
    (``weight_gradient_and_column_sums``)."""
    dz_rows = dz.reshape((-1, dz.shape[-1]))
    d_u = weight_gradient(h_prev.reshape((-1, h_prev.shape[-1])), dz_rows)
    if dp is not None and dp.ndim == 3:  # a mask per gate: a product per gate's block of dz
        d_b = jnp.sum(dz_rows, axis=0) if with_bias else None
        return product_weight_grad(x, dz, dp), d_u, d_b
    x_rows = (x if dp is None else x * dp).reshape((-1, x.shape[-1]))
    if with_bias:
        d_kernel, d_b = weight_gradient_and_column_sums(x_rows, dz_rows)
        return d_kernel, d_u, d_b
    return weight_gradient(x_rows, dz_rows), d_u, None


# -- the layer's loop ------------------------------------------------------------------------------------
def native_loop(x, kernel, recurrent_kernel, bias, mask, states, dp, *, sequence):
    """``rnn_fused.fused_loop``'s result for an LSTM where ``applies``: ``x`` (time, batch, features)
    in the order the steps run, ``mask`` None or (time, batch, 1), ``states`` (h0, c0), ``dp`` None
    or the input dropout mask."""
    units = recurrent_kernel.shape[0]
    steps_mask = None if mask is None else mask[..., 0]

    def with_bias(b_in):
        return jnp.zeros((4 * units,), x.dtype) if b_in is None else b_in

    def outputs(hs, cs):
        return ((hs,) if sequence else ()) + (hs[-1], cs[-1])

    @jax.custom_vjp
    def loop(x, kernel, recurrent_kernel, b_in, h0, c0, steps_mask, dp):
        hs, cs, _, _ = lstm_forward_loop(product(x, kernel, dp), with_bias(b_in), recurrent_kernel, h0, c0, steps_mask)
        return outputs(hs, cs)

    def loop_fwd(x, kernel, recurrent_kernel, b_in, h0, c0, steps_mask, dp):
        p = product(x, kernel, dp)
        hs, cs, gates, tcs = lstm_forward_loop(p, with_bias(b_in), recurrent_kernel, h0, c0, steps_mask)
        return outputs(hs, cs), (x, kernel, recurrent_kernel, b_in, h0, c0, steps_mask, dp, hs, cs, gates, tcs)

    def loop_bwd(residuals, cotangents):
        x, kernel, recurrent_kernel, b_in, h0, c0, steps_mask, dp, hs, cs, gates, tcs = residuals
        d_seq = cotangents[0] if sequence else None
        d_h, d_c = cotangents[-2:]
        c_prev = jnp.concatenate([c0[None], cs[:-1]], axis=0)
        h_prev = jnp.concatenate([h0[None], hs[:-1]], axis=0)
        dz, d_h0, d_c0 = lstm_backward_loop(gates, tcs, c_prev, recurrent_kernel.T, d_seq, d_h, d_c, steps_mask)
        d_kernel, d_u, d_b = _weight_gradients(x, h_prev, dz, dp, b_in is not None)
        return (product_input_grad(dz, kernel.T, dp), d_kernel, d_u, d_b, d_h0, d_c0, None,
                None if dp is None else jnp.zeros_like(dp))

    loop.defvjp(loop_fwd, loop_bwd)
    h0, c0 = states
    b_in = bias
    return loop(x, kernel, recurrent_kernel, b_in, h0, c0, steps_mask, dp)
