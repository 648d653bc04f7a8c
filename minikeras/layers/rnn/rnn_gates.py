"""The built-in cells' steps as the fused recurrence (``rnn_fused``) runs them, on jax arrays.

A cell's step is a product by the recurrent kernel and elementwise gate math. Each class here
gives, for one cell type:

- ``step(U, b_rec, rdp, p, states) -> (new_states, saved)``: one step forward from the input
  projection ``p`` of that step; ``saved`` holds what the gradient needs (the gates' values);
- ``step_grad(U_t, rdp, saved, prev, d_new) -> (dp, dq, d_prev)``: the gradients of that step's
  projection ``p``, of its recurrent product ``q`` (None where it is ``dp``: the product is
  added to the projection) and of the states before the step, given those of the new states
  (``U_t`` is ``U.T``, made once before the reverse loop);
- ``weight_grads(U, rdp, h_prev, saved, dq) -> (dU, db_rec)``: the recurrent kernel's (and
  recurrent bias's) gradients over all steps at once, from the stacked (time, batch, n) arrays.

``product`` and its two gradients are the products by a kernel, with Keras 3's dropout masks
(none, one (batch, n) mask, or one per gate: (gates, batch, n)); inside the reverse loop the input
gradient takes the kernel transposed (made once, before the reverse loop), and its product runs
on ``ops.fused.step_matmul``.
"""
import jax
import jax.numpy as jnp

from minikeras import _context
from minikeras.ops.fused import step_matmul, weight_gradient
from minikeras.tensor import Tensor, to_array


def on_arrays(activation):
    """A minikeras activation as a function of jax arrays (used inside the scan)."""
    def apply(a):
        with _context.recording_with([]):
            return to_array(activation(Tensor(a)))
    return apply


# The activations whose derivative is a function of their output (so the loop saves only that).
_FROM_OUTPUT = {
    "tanh": lambda y: 1.0 - y * y,
    "sigmoid": lambda y: y * (1.0 - y),
    "linear": lambda y: jnp.ones_like(y),
}


def _known_name(activation):
    # mk.activations' functions are named, not imported: activations sit above ops and layers
    # may use them, but this only needs to recognise them.
    if getattr(activation, "__module__", None) == "minikeras.activations":
        return getattr(activation, "__qualname__", None)
    return None


class Activation:
    """An activation on arrays and its derivative: from its output for tanh, sigmoid and
    linear, else from its input (saved as well) through ``jax.vjp``."""

    def __init__(self, activation):
        self.apply = on_arrays(activation)
        self.name = _known_name(activation)  # "tanh", "sigmoid", ... for mk.activations' own, else None
        self.derivative = _FROM_OUTPUT.get(self.name)

    def __call__(self, x):
        """``(y, saved)``: the activation's value and what ``grad`` needs."""
        y = self.apply(x)
        return y, ((y,) if self.derivative is not None else (y, x))

    def grad(self, saved, g):
        """The cotangent of the input given ``g``, that of the output."""
        if self.derivative is not None:
            return g * self.derivative(saved[0])
        return jax.vjp(self.apply, saved[1])[1](g)[0]


# -- products by a kernel, with dropout masks -------------------------------------------------------
def product(a, kernel, mask):
    """``(a * mask) @ kernel``, per column block of ``kernel`` when ``mask`` has one mask per gate.
    ``a`` is (..., batch, n); a (batch, n) mask broadcasts over the leading (time) axis."""
    if mask is None:
        return a @ kernel
    if mask.ndim == 3:
        blocks = jnp.split(kernel, mask.shape[0], axis=1)
        return jnp.concatenate([(a * m) @ k for m, k in zip(mask, blocks)], axis=-1)
    return (a * mask) @ kernel


def step_product(h, kernel, mask):
    """``product`` for one step of the loop, ``h`` (batch, n): on ``ops.fused.step_matmul``'s forward path."""
    if mask is None:
        return step_matmul(h, kernel, forward=True)
    if mask.ndim == 3:
        blocks = jnp.split(kernel, mask.shape[0], axis=1)
        return jnp.concatenate([step_matmul(h * m, k, forward=True) for m, k in zip(mask, blocks)], axis=-1)
    return step_matmul(h * mask, kernel, forward=True)


def product_input_grad(dq, kernel_t, mask):
    """The cotangent of ``a`` in ``product(a, kernel, mask)`` given ``dq``, that of the product;
    ``kernel_t`` is ``kernel.T``."""
    if mask is None:
        return step_matmul(dq, kernel_t)
    if mask.ndim == 3:
        n = mask.shape[0]
        parts = [step_matmul(d, k) * m for d, k, m in zip(jnp.split(dq, n, axis=-1), jnp.split(kernel_t, n, axis=0),
                                                             mask)]
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        return total
    return step_matmul(dq, kernel_t) * mask


def _rows(a):
    return a.reshape((-1, a.shape[-1]))


def product_weight_grad(a, dq, mask):
    """The cotangent of ``kernel`` in ``product(a, kernel, mask)``, summed over every leading axis
    of ``a`` and ``dq`` (all steps and the batch): one large ``a.T @ dq`` per kernel block."""
    if mask is None:
        return weight_gradient(_rows(a), _rows(dq))
    if mask.ndim == 3:
        n = mask.shape[0]
        return jnp.concatenate([weight_gradient(_rows(a * m), _rows(d))
                                for m, d in zip(mask, jnp.split(dq, n, axis=-1))], axis=1)
    return weight_gradient(_rows(a * mask), _rows(dq))


def _sum_rows(dq):
    return jnp.sum(_rows(dq), axis=0)


def _split3(mask):
    """A per-gate (3, batch, n) mask as (the z and r gates' masks, the candidate's mask)."""
    return (None, None) if mask is None else (mask[:2], mask[2])


# -- the cells ----------------------------------------------------------------------------------------
class SimpleRNNGates:
    """``h' = activation(p + (h * rdp) @ U)``."""

    additive = True

    def __init__(self, activation):
        self.act = Activation(activation)

    def split_bias(self, bias):
        return bias, None

    def step(self, U, b_rec, rdp, p, states):
        h, saved = self.act(p + step_product(states[0], U, rdp))
        return (h,), saved

    def step_grad(self, U_t, rdp, saved, prev, d_new):
        dz = self.act.grad(saved, d_new[0])
        return dz, None, (product_input_grad(dz, U_t, rdp),)

    def weight_grads(self, U, rdp, h_prev, saved, dq):
        return product_weight_grad(h_prev, dq, rdp), None


class LSTMGates:
    """Gates i, f, c, o of ``z = p + (h * rdp) @ U``; ``c' = f c + i act(z_c)``, ``h' = o act(c')``."""

    additive = True

    def __init__(self, activation, recurrent_activation):
        self.act, self.rec = Activation(activation), Activation(recurrent_activation)

    def split_bias(self, bias):
        return bias, None

    def step(self, U, b_rec, rdp, p, states):
        h, c = states
        zi, zf, zc, zo = jnp.split(p + step_product(h, U, rdp), 4, axis=-1)
        (i, si), (f, sf), (g, sg), (o, so) = self.rec(zi), self.rec(zf), self.act(zc), self.rec(zo)
        c = f * c + i * g
        tc, stc = self.act(c)
        return (o * tc, c), (si, sf, sg, so, stc)

    def step_grad(self, U_t, rdp, saved, prev, d_new):
        si, sf, sg, so, stc = saved
        i, f, g, o, tc = si[0], sf[0], sg[0], so[0], stc[0]
        dh, dc = d_new
        dzo = self.rec.grad(so, dh * tc)
        dc = dc + self.act.grad(stc, dh * o)
        dz = jnp.concatenate([self.rec.grad(si, dc * g), self.rec.grad(sf, dc * prev[1]),
                              self.act.grad(sg, dc * i), dzo], axis=-1)
        return dz, None, (product_input_grad(dz, U_t, rdp), dc * f)

    def weight_grads(self, U, rdp, h_prev, saved, dq):
        return product_weight_grad(h_prev, dq, rdp), None


class GRUGates:
    """Gates z, r and the candidate; ``h' = z h + (1 - z) candidate``.

    ``reset_after=True``: ``inner = (h * rdp) @ U + b_rec``, candidate ``act(p_h + r inner_h)``
    (the product is not simply added to ``p``: ``step_grad`` returns its own ``dq``);
    ``reset_after=False``: candidate ``act(p_h + (r (h * rdp_h)) @ U_h)``, after the z and r
    gates' product.
    """

    def __init__(self, activation, recurrent_activation, reset_after):
        self.act, self.rec = Activation(activation), Activation(recurrent_activation)
        self.reset_after = reset_after
        self.additive = not reset_after

    def split_bias(self, bias):
        if bias is None or not self.reset_after:
            return bias, None
        return bias[0], bias[1]

    def step(self, U, b_rec, rdp, p, states):
        h = states[0]
        xz, xr, xh = jnp.split(p, 3, axis=-1)
        if self.reset_after:
            inner = step_product(h, U, rdp)
            if b_rec is not None:
                inner = inner + b_rec
            rz, rr, rh = jnp.split(inner, 3, axis=-1)
            (z, sz), (r, sr) = self.rec(xz + rz), self.rec(xr + rr)
            hh, sh = self.act(xh + r * rh)
            saved = (sz, sr, sh, rh)
        else:
            u = h.shape[-1]
            m_zr, m_h = _split3(rdp)
            rz, rr = jnp.split(step_product(h, U[:, :2 * u], m_zr), 2, axis=-1)
            (z, sz), (r, sr) = self.rec(xz + rz), self.rec(xr + rr)
            hh, sh = self.act(xh + step_product(r * (h if m_h is None else h * m_h), U[:, 2 * u:], None))
            saved = (sz, sr, sh)
        return (z * h + (1 - z) * hh,), saved

    def step_grad(self, U_t, rdp, saved, prev, d_new):
        sz, sr, sh = saved[:3]
        z, r, hh = sz[0], sr[0], sh[0]
        h, dh = prev[0], d_new[0]
        dz = self.rec.grad(sz, dh * (h - hh))
        dhh = self.act.grad(sh, dh * (1 - z))
        if self.reset_after:
            rh = saved[3]
            dr = self.rec.grad(sr, dhh * rh)
            dq = jnp.concatenate([dz, dr, dhh * r], axis=-1)
            return jnp.concatenate([dz, dr, dhh], axis=-1), dq, (dh * z + product_input_grad(dq, U_t, rdp),)
        u = h.shape[-1]
        m_zr, m_h = _split3(rdp)
        da = step_matmul(dhh, U_t[2 * u:])  # the cotangent of r * (h * rdp_h)
        h_in = h if m_h is None else h * m_h
        dr = self.rec.grad(sr, da * h_in)
        d_h_in = da * r
        dzr = jnp.concatenate([dz, dr], axis=-1)
        dh_prev = dh * z + (d_h_in if m_h is None else d_h_in * m_h) + product_input_grad(dzr, U_t[:2 * u], m_zr)
        return jnp.concatenate([dzr, dhh], axis=-1), None, (dh_prev,)

    def weight_grads(self, U, rdp, h_prev, saved, dq):
        if self.reset_after:
            return product_weight_grad(h_prev, dq, rdp), _sum_rows(dq)
        u = h_prev.shape[-1]
        m_zr, m_h = _split3(rdp)
        r = saved[1][0]
        a = r * (h_prev if m_h is None else h_prev * m_h)
        return jnp.concatenate([product_weight_grad(h_prev, dq[..., :2 * u], m_zr),
                                product_weight_grad(a, dq[..., 2 * u:], None)], axis=1), None
