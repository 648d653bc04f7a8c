"""The CTC loss (Graves et al. 2006) as a pure jax function, and as one recorded op.

``ctc_loss_forward`` is the forward algorithm in log space that Keras 3's JAX backend runs
(``keras.ops.nn.ctc_loss`` and ``keras.losses.ctc`` record it); its gradient is ``jax.vjp``'s.
"""
import jax.numpy as jnp
from jax import lax, nn as jnn

from minikeras.ops.jax_call import call_jax


def _log_add(phi, added):
    """``phi[:, 1:]`` with ``added`` added in log space."""
    return jnp.concatenate([phi[:, :1], jnp.logaddexp(phi[:, 1:], added)], axis=-1)


def ctc_loss_forward(target, output, target_length, output_length, *, mask_index):
    """The CTC forward algorithm in log space over blank (phi) and label (emit) states."""
    target = target.astype(jnp.int32)
    output = output.astype(jnp.result_type(output.dtype, jnp.float32))
    batch, max_time, classes = output.shape
    max_label = target.shape[1]
    very_unlikely = -1e5
    out_pad = (jnp.arange(max_time)[None, :] >= output_length.astype(jnp.int32)[:, None]).astype(output.dtype)
    label_lengths = jnp.minimum(target_length.astype(jnp.int32), max_label)
    logp = jnn.log_softmax(output)
    repeat = jnp.pad((target[:, :-1] == target[:, 1:]).astype(output.dtype), ((0, 0), (0, 1)))
    logp_blank = jnp.transpose(logp[:, :, mask_index:mask_index + 1], (1, 0, 2))
    logp_emit = jnp.transpose(jnp.einsum("btk,bnk->btn", logp, jnn.one_hot(target, classes, dtype=logp.dtype)),
                              (1, 0, 2))
    phi0 = jnp.full((batch, max_label + 1), very_unlikely, output.dtype).at[:, 0].set(0.0)
    emit0 = jnp.full((batch, max_label), very_unlikely, output.dtype)

    def step(carry, xs):
        phi, emit = carry
        lp_emit, lp_blank, pad = xs
        phi_moved = _log_add(phi, emit + very_unlikely * repeat)
        next_emit = jnp.logaddexp(phi_moved[:, :-1] + lp_emit, emit + lp_emit)
        next_phi = _log_add(phi_moved + lp_blank, emit + lp_blank + very_unlikely * (1.0 - repeat))
        pad = pad[:, None]
        next_emit = pad * emit + (1.0 - pad) * next_emit
        next_phi = pad * phi + (1.0 - pad) * next_phi
        return (next_phi, next_emit), None

    (phi, emit), _ = lax.scan(step, (phi0, emit0), (logp_emit, logp_blank, out_pad.T))
    last = _log_add(phi, emit)
    return -jnp.einsum("bn,bn->b", last, jnn.one_hot(label_lengths, max_label + 1, dtype=last.dtype))


def ctc_loss(target, output, target_length, output_length, mask_index=0):
    """The CTC loss per sequence, recorded as one op: ``target`` (batch, max_label) integer labels,
    ``output`` (batch, time, classes) logits, and each sequence's label and output lengths."""
    def forward(t, o, tl, ol):
        return (ctc_loss_forward(t, o, tl, ol, mask_index=mask_index),)

    return call_jax(forward, [target, output, target_length, output_length], name="ctc_loss", constant=(0, 2, 3),
                    key=("ctc_loss", mask_index))[0]
