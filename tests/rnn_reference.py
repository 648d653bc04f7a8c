"""A straightforward reference for the recurrent layers: Keras 3's cell formulas, one step at a
time in a plain ``lax.scan`` that carries the last output, written independently of
minikeras's loop (the fused loop's gradients are checked against ``jax.grad`` of this)."""
import jax
import jax.numpy as jnp
from jax import lax

GATES = {"simple": 1, "lstm": 4, "gru": 3, "gru_before": 3}


def _blocks(a, n):
    return jnp.split(a, n, axis=-1)


def cell_step(kind, weights, x, states, dp, rdp, act, rec):
    """One step of a cell; ``dp`` (gates, batch, features) and ``rdp`` (gates, batch, units) are
    the per-gate dropout masks (ones where there is no dropout)."""
    g = GATES[kind]
    kernel, recurrent = weights[0], weights[1]
    bias = weights[2] if len(weights) > 2 else None
    xs = [(x * dp[k]) @ w for k, w in enumerate(_blocks(kernel, g))]
    us = _blocks(recurrent, g)
    h = states[0]

    def rec_part(k, a):
        return (a * rdp[k]) @ us[k]

    if kind == "gru":
        bi, br = (_blocks(bias[0], 3), _blocks(bias[1], 3)) if bias is not None else ([0.0] * 3, [0.0] * 3)
        xz, xr, xh = [xs[k] + bi[k] for k in range(3)]
        rz, rr, rh = [rec_part(k, h) + br[k] for k in range(3)]
        z, r = rec(xz + rz), rec(xr + rr)
        h = z * h + (1 - z) * act(xh + r * rh)
        return h, (h,)
    b = _blocks(bias, g) if bias is not None else [0.0] * g
    pre = [xs[k] + b[k] for k in range(g)]
    if kind == "simple":
        h = act(pre[0] + rec_part(0, h))
        return h, (h,)
    if kind == "gru_before":
        z, r = rec(pre[0] + rec_part(0, h)), rec(pre[1] + rec_part(1, h))
        h = z * h + (1 - z) * act(pre[2] + (r * (h * rdp[2])) @ us[2])
        return h, (h,)
    c = states[1]
    zi, zf, zc, zo = [pre[k] + rec_part(k, h) for k in range(4)]
    c = rec(zf) * c + rec(zi) * act(zc)
    h = rec(zo) * act(c)
    return h, (h, c)


def layer(kinds, weights, x, states, mask=None, dps=None, rdps=None, go_backwards=False, sequence=False,
          zero_output=False, act=jnp.tanh, rec=jax.nn.sigmoid):
    """A layer of stacked cells ``kinds`` (one cell: a list of one) over (batch, time, features)
    ``x`` with Keras 3's rules: a masked step keeps the states and repeats the last output (zeros
    before the first unmasked step, or always with ``zero_output``). ``weights``, ``states``,
    ``dps`` and ``rdps`` have one entry per cell. Returns ``(output, final_states)``."""
    batch = x.shape[0]
    xs = jnp.swapaxes(x, 0, 1)
    ms = jnp.ones(xs.shape[:2], bool) if mask is None else jnp.swapaxes(mask, 0, 1)
    if go_backwards:
        xs, ms = xs[::-1], ms[::-1]
    dims = [x.shape[-1]] + [w[1].shape[0] for w in weights]
    dps = [jnp.ones((GATES[k], batch, d), x.dtype) for k, d in zip(kinds, dims)] if dps is None else dps
    rdps = [jnp.ones((GATES[k], batch, d), x.dtype) for k, d in zip(kinds, dims[1:])] if rdps is None else rdps
    units = dims[-1]

    def body(carry, inp):
        states, last = carry
        x_t, m_t = inp
        new_states = []
        for kind, w, s, dp, rdp in zip(kinds, weights, states, dps, rdps):
            x_t, new = cell_step(kind, w, x_t, s, dp, rdp, act, rec)
            new_states.append(new)
        m = m_t[:, None]
        new_states = [tuple(jnp.where(m, n, o) for n, o in zip(ns, os)) for ns, os in zip(new_states, states)]
        out = jnp.where(m, x_t, jnp.zeros_like(x_t) if zero_output else last)
        return (new_states, out), out

    init = ([tuple(s) for s in states], jnp.zeros((batch, units), x.dtype))
    (final, last), outs = lax.scan(body, init, (xs, ms))
    return (jnp.swapaxes(outs, 0, 1) if sequence else last), final
