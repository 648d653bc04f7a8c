"""A built-in cell run over time as cuDNN and oneDNN run it, with a gradient of its own.

``fused_loop`` takes the time-major sequence (in the order the steps run) and the cell's
weights, and computes:

- forward: the input projection of every step as ONE product (``x @ kernel``, before the
  loop); then one ``lax.scan`` whose body adds the bias to its step's projection (XLA fuses
  that add into the gate math, where a separate pass over all steps' projections would read and
  write them once more), then the recurrent product and the elementwise gate math
  (``rnn_gates``), keeping the states of the step before where the mask is False. Without a
  gradient to save for, the step's projection is first given a buffer of its own
  (``ops.fused.step_slice``): the gate math read through the loop's slice of the stacked
  projection ran 1.5-2x slower;
- backward (``jax.custom_vjp``): one reverse ``lax.scan`` whose body is the gate gradients
  and the recurrent product's transpose (the only sequential work), giving every step's
  gradient of the projection (the product by ``recurrent_kernel.T``, transposed once before the loop,
  on ``ops.fused.step_matmul``); then the kernels' gradients as one large product each over all
  steps at once (``x.T @ dp`` and ``h_prev.T @ dq``), and the input's as ``dp @ kernel.T``.

An LSTM or GRU (``reset_after=True``) cell with Keras's default activations and no recurrent
dropout runs both loops on native kernels instead where ``rnn_native_loops.applies`` (float32,
units a multiple of 16, a CPU with AVX-512): the same projection before and weight gradients
after, the values within a float32 rounding or two of these loops'.

The forward saves the gates' values (those the derivatives need) and the states; nothing is
recomputed. The backward pass is plain jax, so an outer derivative (second order through the
tape, ``call_jax``'s recorded path) differentiates it as any jax code. ``unroll`` unrolls both
loops (``lax.scan(unroll=True)``): the same numbers.
"""
import jax
import jax.numpy as jnp
from jax import lax

from minikeras.layers.rnn import rnn_native_loops
from minikeras.layers.rnn.rnn_gates import product, product_input_grad, product_weight_grad
from minikeras.ops.fused import step_slice


def _previous(first, sequence):
    """The value before each step: ``first`` then ``sequence`` without its last step."""
    return jnp.concatenate([first[None], sequence[:-1]], axis=0)


def fused_loop(gates, x, kernel, recurrent_kernel, bias, mask, states, dp, rdp, *, unroll, sequence):
    """Runs a built-in cell over the time axis (axis 0) of ``x``.

    Args:
      gates: the cell's step (an ``rnn_gates`` object).
      x: (time, batch, features), in the order the steps run.
      kernel, recurrent_kernel, bias: the cell's weights (``bias`` None without one).
      mask: None or (time, batch, 1) booleans: where False the step keeps the states before it.
      states: the initial states, a tuple of (batch, n) arrays (h first).
      dp, rdp: None or the input and recurrent dropout masks.
      unroll: unroll both loops.
      sequence: also return the first state (h) of every step.

    Returns:
      ``(h_sequence, *final_states)`` with ``sequence``, else ``final_states``; ``h_sequence`` is
      (time, batch, units), the states held over masked steps.
    """
    if rnn_native_loops.applies(gates, x, kernel, recurrent_kernel, rdp):
        return rnn_native_loops.native_loop(gates, x, kernel, recurrent_kernel, bias, mask, tuple(states), dp,
                                            sequence=sequence)
    b_in, b_rec = gates.split_bias(bias)
    n_states = len(states)

    def scan(p, recurrent_kernel, b_in, b_rec, states, mask, rdp, keep):
        def body(s, inp):
            p_t, m_t = inp
            if not keep:  # the loop that saves its gates already writes them to buffers of their own
                p_t = step_slice(p_t)
            if b_in is not None:
                p_t = p_t + b_in
            new, saved = gates.step(recurrent_kernel, b_rec, rdp, p_t, s)
            if m_t is not None:
                new = tuple(jnp.where(m_t, n, o) for n, o in zip(new, s))
            return new, ((new, saved) if keep else (new[0] if sequence else None))
        return lax.scan(body, tuple(states), (p, mask), unroll=unroll)

    def outputs(final, ys_h):
        return ((ys_h,) if sequence else ()) + tuple(final)

    # The masks are arguments, not closed over: an outer derivative may trace them.
    @jax.custom_vjp
    def loop(x, kernel, recurrent_kernel, b_in, b_rec, states, mask, dp, rdp):
        final, ys = scan(product(x, kernel, dp), recurrent_kernel, b_in, b_rec, states, mask, rdp, keep=False)
        return outputs(final, ys)

    def loop_fwd(x, kernel, recurrent_kernel, b_in, b_rec, states, mask, dp, rdp):
        final, (seqs, saved) = scan(product(x, kernel, dp), recurrent_kernel, b_in, b_rec, states, mask, rdp,
                                    keep=True)
        residuals = (x, kernel, recurrent_kernel, b_in, b_rec, tuple(states), mask, dp, rdp, seqs, saved)
        return outputs(final, seqs[0]), residuals

    def loop_bwd(residuals, cotangents):
        x, kernel, recurrent_kernel, b_in, b_rec, states0, mask, dp, rdp, seqs, saved = residuals
        d_seq = cotangents[0] if sequence else None
        d_final = tuple(cotangents[1:] if sequence else cotangents)
        prev = tuple(_previous(s0, s) for s0, s in zip(states0, seqs))
        recurrent_kernel_t = recurrent_kernel.T  # once, not in every step of the loop

        def body(d, inp):
            d_out_t, m_t, saved_t, prev_t = inp
            if d_out_t is not None:
                d = (d[0] + d_out_t,) + d[1:]
            d_new = d if m_t is None else tuple(jnp.where(m_t, g, 0) for g in d)
            dp_t, dq_t, d_prev = gates.step_grad(recurrent_kernel_t, rdp, saved_t, prev_t, d_new)
            if m_t is not None:  # a masked step passes its states' cotangents on unchanged
                d_prev = tuple(a + jnp.where(m_t, 0, g) for a, g in zip(d_prev, d))
            return tuple(d_prev), (dp_t, dq_t)

        d_states, (d_p, d_q) = lax.scan(body, d_final, (d_seq, mask, saved, prev), reverse=True, unroll=unroll)
        if d_q is None:
            d_q = d_p
        d_u, d_b_rec = gates.weight_grads(recurrent_kernel, rdp, prev[0], saved, d_q)
        d_x = product_input_grad(d_p, kernel.T, dp)
        d_kernel = product_weight_grad(x, d_p, dp)
        d_b_in = None if b_in is None else jnp.sum(d_p.reshape((-1, d_p.shape[-1])), axis=0)
        no_masks = (None, None if dp is None else jnp.zeros_like(dp), None if rdp is None else jnp.zeros_like(rdp))
        return (d_x, d_kernel, d_u, d_b_in, None if b_rec is None else d_b_rec, tuple(d_states)) + no_masks

    loop.defvjp(loop_fwd, loop_bwd)
    outs = loop(x, kernel, recurrent_kernel, b_in, b_rec, tuple(states), mask, dp, rdp)
    assert len(outs) == n_states + sequence
    return outs
