"""``rnn_fused``'s loop for an LSTM cell on ``xla_cpu.lstm_native``'s kernels: the input projection
of every step as one product before the loop (as there), then the whole forward loop as one
native call, the whole reverse loop as another, and the weight gradients as one product each
after it.

``applies`` says where: ``rnn_gates.LSTMGates`` with Keras's default activations (tanh, sigmoid),
no recurrent dropout, float32, and the kernels' own conditions (``lstm_native.supported``).
Input dropout and masks are taken as ``rnn_fused`` takes them.

The native calls have no derivatives of their own; each is a ``jax.custom_vjp`` whose rule is
jax's derivative of the same loop written as a ``lax.scan`` (``forward_reference``,
``backward_reference``), so that a derivative of the gradient (second order through the tape)
is exact too.
"""
import jax
import jax.numpy as jnp
from jax import lax

from minikeras.layers.rnn.rnn_gates import LSTMGates, product, product_input_grad, product_weight_grad
from minikeras.ops.fused import weight_gradient
from minikeras.xla_cpu import lstm_native
from minikeras.xla_cpu.matmul_native import matmul_tn_and_column_sums


def applies(gates, x, kernel, recurrent_kernel, rdp):
    """Whether ``native_loop`` runs this LSTM (time-major ``x``)."""
    return (isinstance(gates, LSTMGates) and gates.act.name == "tanh" and gates.rec.name == "sigmoid"
            and rdp is None and x.ndim == 3
            and all(a.dtype == jnp.float32 for a in (x, kernel, recurrent_kernel))
            and lstm_native.supported((x.shape[0], x.shape[1], recurrent_kernel.shape[1]), recurrent_kernel.shape[0],
                                      x.dtype)
            and lstm_native.available())


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
def _forward(p, bias, u, h0, c0, mask):
    return lstm_native.forward(p, bias, u, h0, c0, mask)


def _forward_fwd(p, bias, u, h0, c0, mask):
    return _forward(p, bias, u, h0, c0, mask), (p, bias, u, h0, c0, mask)


def _forward_bwd(inputs, cotangents):
    *diff, mask = inputs
    return jax.vjp(lambda *a: forward_reference(*a, mask), *diff)[1](cotangents) + (None,)


_forward.defvjp(_forward_fwd, _forward_bwd)


@jax.custom_vjp
def _backward(gates, tcs, c_prev, u_t, dhs, dh, dc, mask):
    return lstm_native.backward(gates, tcs, c_prev, u_t, dhs, dh, dc, mask)


def _backward_fwd(*args):
    return _backward(*args), args


def _backward_bwd(inputs, cotangents):
    *diff, mask = inputs
    return jax.vjp(lambda *a: backward_reference(*a, mask), *diff)[1](cotangents) + (None,)


_backward.defvjp(_backward_fwd, _backward_bwd)


def _weight_gradients(x, h_prev, dz, dp, with_bias):
    """The kernel's, recurrent kernel's and bias's gradients over every step, each one product over
    all steps; the bias's sums from the kernel's product's pass over ``dz``
    (``matmul_tn_and_column_sums``)."""
    dz_rows = dz.reshape((-1, dz.shape[-1]))
    d_u = weight_gradient(h_prev.reshape((-1, h_prev.shape[-1])), dz_rows)
    if dp is not None and dp.ndim == 3:  # a mask per gate: a product per gate's block of dz
        d_b = jnp.sum(dz_rows, axis=0) if with_bias else None
        return product_weight_grad(x, dz, dp), d_u, d_b
    x_rows = (x if dp is None else x * dp).reshape((-1, x.shape[-1]))
    if with_bias:
        d_kernel, d_b = matmul_tn_and_column_sums(x_rows, dz_rows)
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
        hs, cs, _, _ = _forward(product(x, kernel, dp), with_bias(b_in), recurrent_kernel, h0, c0, steps_mask)
        return outputs(hs, cs)

    def loop_fwd(x, kernel, recurrent_kernel, b_in, h0, c0, steps_mask, dp):
        hs, cs, gates, tcs = _forward(product(x, kernel, dp), with_bias(b_in), recurrent_kernel, h0, c0, steps_mask)
        return outputs(hs, cs), (x, kernel, recurrent_kernel, b_in, h0, c0, steps_mask, dp, hs, cs, gates, tcs)

    def loop_bwd(residuals, cotangents):
        x, kernel, recurrent_kernel, b_in, h0, c0, steps_mask, dp, hs, cs, gates, tcs = residuals
        d_seq = cotangents[0] if sequence else None
        d_h, d_c = cotangents[-2:]
        c_prev = jnp.concatenate([c0[None], cs[:-1]], axis=0)
        h_prev = jnp.concatenate([h0[None], hs[:-1]], axis=0)
        dz, d_h0, d_c0 = _backward(gates, tcs, c_prev, recurrent_kernel.T, d_seq, d_h, d_c, steps_mask)
        d_kernel, d_u, d_b = _weight_gradients(x, h_prev, dz, dp, b_in is not None)
        return (product_input_grad(dz, kernel.T, dp), d_kernel, d_u, d_b, d_h0, d_c0, None,
                None if dp is None else jnp.zeros_like(dp))

    loop.defvjp(loop_fwd, loop_bwd)
    h0, c0 = states
    b_in = bias
    return loop(x, kernel, recurrent_kernel, b_in, h0, c0, steps_mask, dp)
