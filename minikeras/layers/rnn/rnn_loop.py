"""The loop over time of a recurrent layer, on jax arrays: one ``lax.scan`` (or, with
``unroll=True``, a Python loop traced step by step), with Keras 3's masking rules.

A masked step (``mask[b, t]`` False) keeps the states of the step before and repeats its
output (or outputs zeros with ``zero_output_for_mask``, as ``Bidirectional`` asks when it
returns sequences). Before the first unmasked step the repeated output is zeros, as Keras 3's
TensorFlow backend and every backend's unrolled loop do (its jax scan repeats the first
initial state instead). With ``go_backwards`` the steps run from the
last to the first and the outputs come in that order.
"""
import jax
import jax.numpy as jnp
from jax import lax


def run(step, inputs, states, mask, *, go_backwards, unroll, return_sequences, zero_output_for_mask,
        output_is_first_state=False):
    """Runs ``step(x_t, states) -> (output, new_states)`` over axis 1 of ``inputs``.

    Args:
      step: a pure function; ``states`` and ``new_states`` are tuples of (batch, n) arrays
        (any pytree, the same structure in and out).
      inputs: (batch, time, ...) array, or a tuple of such arrays (the step gets a tuple).
      states: the initial states.
      mask: None or a (batch, time) boolean array.
      output_is_first_state: the step's output is its first new state (the built-in cells): without
        a mask the last output is then read from the final states instead of carried.

    Returns:
      ``(output, states)``: the (batch, time, n) outputs if ``return_sequences`` (in the order
      the steps ran), else the last step's (batch, n) output; the final states.
    """
    xs = jax.tree_util.tree_map(lambda a: jnp.swapaxes(a, 0, 1), inputs)
    ms = None if mask is None else jnp.swapaxes(mask, 0, 1)[:, :, None]
    if go_backwards:
        xs = jax.tree_util.tree_map(lambda a: jnp.flip(a, 0), xs)
        ms = None if ms is None else jnp.flip(ms, 0)
    out_aval = jax.eval_shape(lambda x, s: step(x, s)[0], jax.tree_util.tree_map(lambda a: a[0], xs), states)
    last = jnp.zeros(out_aval.shape, out_aval.dtype)
    if output_is_first_state and ms is None:
        last = None  # the final states hold it

    def body(carry, inp):
        states, last = carry
        x_t, m_t = inp
        out, new = step(x_t, states)
        if m_t is not None:
            new = jax.tree_util.tree_map(lambda n, s: jnp.where(_against(m_t, n), n, s), new, states)
            out = jnp.where(_against(m_t, out), out, jnp.zeros_like(out) if zero_output_for_mask else last)
        return (new, None if last is None else out), (out if return_sequences else None)

    if unroll:
        carry, outs = (states, last), []
        for t in range(jax.tree_util.tree_leaves(xs)[0].shape[0]):
            carry, y = body(carry, (jax.tree_util.tree_map(lambda a: a[t], xs), None if ms is None else ms[t]))
            outs.append(y)
        (states, last) = carry
        ys = jnp.stack(outs, 0) if return_sequences else None
    else:
        (states, last), ys = lax.scan(body, (states, last), (xs, ms))
    if last is None:
        last = jax.tree_util.tree_leaves(states)[0]
    return (jnp.swapaxes(ys, 0, 1) if return_sequences else last), states


def _against(mask, a):
    """A step's (batch, 1) mask shaped to broadcast against ``a`` (batch, ...): a convolutional
    cell's states and outputs have several axes after the batch."""
    return mask.reshape(mask.shape[:1] + (1,) * (a.ndim - 1))
