"""What the optimizer tests share: the variables and gradients of a few steps, runners for
minikeras, NumPy (float64 reference formulas) and optax, and Keras 3's update formulas in NumPy."""
import jax
import jax.numpy as jnp
import numpy as np
import optax
from conftest import assert_close

import minikeras as mk
from minikeras import _context
from minikeras.ops import primitive

SHAPES = [(3, 2), (2,)]
STEPS = 5
RNG = np.random.default_rng(0)
INIT = [RNG.normal(size=s).astype(np.float32) for s in SHAPES]
GRADS = [[RNG.normal(size=s).astype(np.float32) for s in SHAPES] for _ in range(STEPS)]


def run_mk(optimizer, steps=STEPS, grads=GRADS):
    variables = [mk.Variable(w, name=f"v{i}") for i, w in enumerate(INIT)]
    for t in range(steps):
        optimizer.apply_gradients(zip([mk.constant(g) for g in grads[t]], variables))
    return [v.numpy() for v in variables]


def run_numpy(update, slots, steps=STEPS, grads=GRADS):
    """``update(t, w, g, slot) -> (w, slot)`` for 1-based step t, per variable, in float64."""
    weights = [w.astype(np.float64) for w in INIT]
    states = [slots(w) for w in weights]
    for t in range(1, steps + 1):
        for i, g in enumerate(grads[t - 1]):
            weights[i], states[i] = update(t, weights[i], g.astype(np.float64), states[i])
    return weights


def run_optax(transform, steps=STEPS):
    params = [jnp.asarray(w) for w in INIT]
    state = transform.init(params)

    @jax.jit
    def step(params, state, grads):
        updates, state = transform.update(grads, state, params)
        return optax.apply_updates(params, updates), state

    for t in range(steps):
        params, state = step(params, state, [jnp.asarray(g) for g in GRADS[t]])
    return [np.asarray(p) for p in params]


def assert_same(actual, expected, rtol=1e-5, atol=1e-6):
    for a, e in zip(actual, expected):
        assert_close(a, e, rtol=rtol, atol=atol)


def numpy_adam(lr=0.01, b1=0.9, b2=0.999, eps=1e-7, amsgrad=False):
    def update(t, w, g, s):
        m, v, vhat = s
        alpha = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        m = m + (g - m) * (1 - b1)
        v = v + (g * g - v) * (1 - b2)
        vhat = np.maximum(vhat, v)
        return w - alpha * m / (np.sqrt(vhat if amsgrad else v) + eps), (m, v, vhat)
    return update, lambda w: (np.zeros_like(w),) * 3


def numpy_sgd(lr=0.01, momentum=0.0, nesterov=False):
    def update(t, w, g, m):
        if momentum == 0:
            return w - lr * g, m
        m = momentum * m - lr * g
        return (w + momentum * m - lr * g if nesterov else w + m), m
    return update, np.zeros_like


def numpy_rmsprop(lr=0.01, rho=0.9, momentum=0.0, eps=1e-7, centered=False):
    def update(t, w, g, s):
        vel, avg, mom = s
        vel = rho * vel + (1 - rho) * g * g
        if centered:
            avg = rho * avg + (1 - rho) * g
            denominator = vel - avg * avg + eps
        else:
            denominator = vel + eps
        increment = lr * g / np.sqrt(denominator)
        if momentum > 0:
            mom = momentum * mom + increment
            return w - mom, (vel, avg, mom)
        return w - increment, (vel, avg, mom)
    return update, lambda w: (np.zeros_like(w),) * 3


def numpy_nadam(lr, b1=0.9, b2=0.999, eps=1e-7):
    def u(t):
        return b1 * (1 - 0.5 * 0.96 ** t)

    def update(t, w, g, s):
        m, v = s
        u_product = np.prod([u(k) for k in range(1, t + 1)])
        m = m + (g - m) * (1 - b1)
        v = v + (g * g - v) * (1 - b2)
        m_hat = u(t + 1) * m / (1 - u_product * u(t + 1)) + (1 - u(t)) * g / (1 - u_product)
        v_hat = v / (1 - b2 ** t)
        return w - lr * m_hat / (np.sqrt(v_hat) + eps), (m, v)
    return update, lambda w: (np.zeros_like(w),) * 2


def count_eager_ops(monkeypatch):
    """A list that collects the name of every primitive run eagerly from now on (in this test)."""
    eager_ops = []
    original = primitive.Primitive.__call__

    def counting(self, *args, **kwargs):
        if not _context.call_state.traces:
            eager_ops.append(self.name)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(primitive.Primitive, "__call__", counting)
    return eager_ops
