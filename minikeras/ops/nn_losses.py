"""Softmax, log-softmax and the cross-entropy losses built on them (``tf.nn`` names).

The losses are fused primitives: their forwards are the stable log-sum-exp forms (finite for
logits of any finite size) and their gradient rules are the closed forms (``softmax - labels``),
so the backward pass neither overflows nor rebuilds the forward op by op.
"""
import jax
import jax.numpy as jnp
import numpy as np

from minikeras import _context
from minikeras.ops.array import expand_dims, one_hot
from minikeras.ops.convert import normalize_axis
from minikeras.ops.elementwise import greater_equal, less, logical_and
from minikeras.ops.math import cast, exp, maximum, minimum, sigmoid, where
from minikeras.ops.primitive import Primitive
from minikeras.ops.reduce import reduce_sum
from minikeras.symbolic import KerasTensor
from minikeras.tensor import Tensor, Variable, to_array
from minikeras.xla_cpu import head_native, logits_crossentropy_native


def _t(x):
    return x if isinstance(x, (Tensor, Variable, KerasTensor)) else Tensor(to_array(x))


def _floating(x, op, what="features"):
    """``x`` as a Tensor; a TypeError naming ``op`` unless its dtype is floating."""
    x = _t(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise TypeError(f"{op} expects a floating-point {what} tensor (e.g. mk.float32), received dtype "
                        f"{x.dtype.name}. Cast it with mk.cast(x, mk.float32).")
    return x


_CLIP = 1e-7  # Keras's default epsilon, the one the native kernels clip with


# -- softmax ------------------------------------------------------------------------------------
# on the CPU a classifier's softmax and its gradient are native kernels (xla_cpu.head_native:
# nothing to compile), elsewhere the jax formulas
_softmax = Primitive("softmax", lambda x, *, axis: head_native.softmax(x, axis))
_softmax_gradient = Primitive("softmax_gradient", lambda y, g, *, axis: head_native.softmax_gradient(y, g, axis))
_log_softmax = Primitive("log_softmax", lambda x, *, axis: jax.nn.log_softmax(x, axis=axis))


@_softmax.defgrad
def _(g, out, x, *, axis):
    return _softmax_gradient(out, g, axis=axis)  # out * (g - sum(g * out))


@_softmax_gradient.defgrad
def _(h, out, y, g, *, axis):
    # f(y, g) = y * (g - sum(g * y)) is linear in g, with the same form: d/dg = f(y, h);
    # d/dy = h * (g - sum(g * y)) - g * sum(h * y)
    sum_h = reduce_sum(h * y, axis=axis, keepdims=True)
    return h * (g - reduce_sum(g * y, axis=axis, keepdims=True)) - g * sum_h, _softmax_gradient(y, h, axis=axis)


@_log_softmax.defgrad
def _(g, out, x, *, axis):
    return g - exp(out) * reduce_sum(g, axis=axis, keepdims=True)


def _one_axis(axis, ndim, op):
    if ndim == 0:
        raise ValueError(f"{op} expects a tensor of rank >= 1, received a scalar")
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{op}: axis must be an int, received {axis!r}")
    return normalize_axis(int(axis), ndim, op)[0]


def softmax(logits, axis=None, name=None):
    """exp(logits) / sum(exp(logits)) along ``axis`` (default -1), computed stably."""
    x = _floating(logits, "softmax", "logits")
    return _softmax(x, axis=_one_axis(-1 if axis is None else axis, x.ndim, "softmax"))


def log_softmax(logits, axis=None, name=None):
    """logits - log(sum(exp(logits))) along ``axis`` (default -1), computed stably."""
    x = _floating(logits, "log_softmax", "logits")
    return _log_softmax(x, axis=_one_axis(-1 if axis is None else axis, x.ndim, "log_softmax"))


# -- cross-entropies ----------------------------------------------------------------------------
def _softmax_ce_forward(labels, logits, *, axis):
    return -jnp.sum(labels * jax.nn.log_softmax(logits, axis=axis), axis=axis)


_softmax_ce = Primitive("softmax_cross_entropy_with_logits", _softmax_ce_forward)


@_softmax_ce.defgrad
def _(g, out, labels, logits, *, axis):
    g = expand_dims(g, axis)
    # sum(labels) * softmax - labels: exact also for labels that do not sum to 1
    grad_logits = g * (reduce_sum(labels, axis=axis, keepdims=True) * _softmax(logits, axis=axis) - labels)
    return -g * _log_softmax(logits, axis=axis), grad_logits


# Keras' sparse categorical cross-entropy of probabilities, one loss per row (last axis):
# -log(clip(p / sum(p), 1e-7, 1 - 1e-7))[label]. On the CPU a classifier's head runs on native
# kernels (xla_cpu.head_native: nothing to compile), and so does the gradient when
# nothing records the backward pass; a recorded backward pass (higher derivatives) takes the
# same formula in differentiable ops. The clip is Keras's default epsilon, fixed as the native
# kernels': the losses call this op only while epsilon() is the default (losses.crossentropy).
_sparse_ce_probabilities = Primitive(
    "sparse_categorical_crossentropy", lambda labels, p: head_native.sparse_crossentropy(p, labels))
_sparse_ce_probabilities_gradient = Primitive(
    "sparse_categorical_crossentropy_gradient",
    lambda labels, p, g: head_native.sparse_crossentropy_gradient(p, labels, g), differentiable=False)


@_sparse_ce_probabilities.defgrad
def _(g, out, labels, p):
    if _context.call_state.tapes:
        return None, _sparse_ce_probabilities_gradient_ops(labels, p, g)
    return None, _sparse_ce_probabilities_gradient(labels, p, g)


def _sparse_ce_probabilities_gradient_ops(labels, p, g):
    """``head_native.sparse_crossentropy_gradient`` in differentiable ops."""
    r = 1.0 / reduce_sum(p, axis=-1, keepdims=True)
    q = p * r
    clipped = minimum(maximum(q, _CLIP), 1.0 - _CLIP)
    dq = one_hot(labels, p.shape[-1], dtype=p.dtype) * -expand_dims(g, -1) / clipped
    t = where(q >= _CLIP, where(maximum(q, _CLIP) <= 1.0 - _CLIP, dq, 0.0), 0.0) * r
    return t + reduce_sum(-t * q, axis=-1, keepdims=True)


def sparse_categorical_crossentropy_of_probabilities(labels, p):
    """Keras' sparse categorical cross-entropy of probabilities ``p`` (..., n) for integer
    ``labels`` (...), one loss per row: ``-log(clip(p / sum(p), 1e-7, 1 - 1e-7))[label]`` (a label
    outside [0, n) gives 0). Differentiable in ``p``, to any order."""
    return _sparse_ce_probabilities(labels, p)


def _matching_pair(op, labels, logits):
    logits = _floating(logits, op, "logits")
    if isinstance(labels, (Tensor, Variable)):
        if labels.dtype != logits.dtype:
            raise TypeError(f"{op}: labels have dtype {labels.dtype.name} but logits have dtype "
                            f"{logits.dtype.name}; they must match (use mk.cast)")
    else:
        labels = Tensor(to_array(labels, logits.dtype))  # Python lists and NumPy arrays take the logits' dtype
    if labels.shape != logits.shape:
        raise ValueError(f"{op}: logits and labels must have the same shape, received logits shape "
                         f"{logits.shape} and labels shape {labels.shape}")
    return labels, logits


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """-sum(labels * log_softmax(logits)) along ``axis``; one value per example.

    Differentiable in ``logits`` (gradient ``softmax(logits) * sum(labels) - labels``) and in
    ``labels``. Stable for large logits (no overflow at +-1e4).
    """
    labels, logits = _matching_pair("softmax_cross_entropy_with_logits", labels, logits)
    return _softmax_ce(labels, logits, axis=_one_axis(axis, logits.ndim, "softmax_cross_entropy_with_logits"))


def _sparse_ce_forward(labels, logits):
    n = logits.shape[-1]
    log_p = jax.nn.log_softmax(logits, axis=-1)
    picked = jnp.take_along_axis(log_p, jnp.clip(labels, 0, n - 1)[..., None], axis=-1)[..., 0]
    # out-of-range labels give NaN (as TensorFlow on GPU); eagerly they are an error before we get here
    return jnp.where((labels >= 0) & (labels < n), -picked, jnp.nan)


_sparse_softmax_ce = Primitive("sparse_softmax_cross_entropy_with_logits", _sparse_ce_forward)


@_sparse_softmax_ce.defgrad
def _(g, out, labels, logits):
    targets = one_hot(labels, logits.shape[-1], dtype=logits.dtype)
    return None, expand_dims(g, -1) * (_softmax(logits, axis=logits.ndim - 1) - targets)


def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None):
    """-log_softmax(logits)[label] per example; ``labels`` are class indices of shape logits.shape[:-1].

    Labels outside [0, num_classes) are a ValueError eagerly and give NaN inside ``mk.function``.
    """
    op = "sparse_softmax_cross_entropy_with_logits"
    logits = _floating(logits, op, "logits")
    labels = _t(labels)
    if labels.dtype.kind not in "iu":
        raise TypeError(f"{op}: labels must be integer class indices (int32 or int64), received dtype "
                        f"{labels.dtype.name}")
    if logits.ndim == 0 or labels.ndim != logits.ndim - 1:
        raise ValueError(f"{op}: Rank mismatch: rank of labels (received {labels.ndim}) should equal rank of "
                         f"logits minus 1 (received {logits.ndim})")
    if labels.shape != logits.shape[:-1]:
        raise ValueError(f"{op}: labels shape {labels.shape} must equal logits shape without its last axis "
                         f"{logits.shape[:-1]} (logits shape {logits.shape})")
    value = labels._value if isinstance(labels, Tensor) else None
    if value is not None and not isinstance(value, jax.core.Tracer) and value.size:
        n = logits.shape[-1]
        host = np.asarray(value)  # one transfer, no compiled reduction per label shape
        low, high = int(host.min()), int(host.max())
        if low < 0 or high >= n:
            bad = low if low < 0 else high
            raise ValueError(f"{op}: Received a label value of {bad} which is outside the valid range of "
                             f"[0, {n}).")
    return _sparse_softmax_ce(labels, logits)


# Keras's sparse categorical cross-entropy of logits, one loss per row (last axis):
# -log_softmax(logits)[label], and 0 for a label outside [0, n) (Keras's one-hot of it is a row of
# zeros). Written as Keras's formula, -sum(one_hot(labels) * log_softmax(logits)), it materializes
# the one-hot rows and the log-probabilities, and its gradient (log_softmax's, of a one-hot
# cotangent) takes as many more passes over them: over a 20,000-word vocabulary (keras.io's
# miniature GPT) each pass is hundreds of MB. Here it is one op with the same value, on rows
# shifted by their maximum m: loss = log(sum(exp(x - m))) - (x[label] - m). Its output keeps m and
# L = log(sum(exp(x - m))) beside the loss (columns 1 and 2, which sparse_categorical_crossentropy_
# from_logits drops), so that the gradient, g * (exp(x - m - L) - one_hot(label)), is one pass
# over x: softmax times g, then -g added at each row's label (a scatter, no one-hot rows).
# Over wide rows (a vocabulary) both run on native CPU kernels where they apply
# (xla_cpu.logits_crossentropy_native: one pass over the logits fewer each way).
def _sparse_ce_logits_forward(labels, logits):
    if logits_crossentropy_native.applies(logits, labels):
        return logits_crossentropy_native.crossentropy(logits, labels)
    n = logits.shape[-1]
    m = jnp.max(logits, axis=-1, keepdims=True)
    shifted = logits - m
    log_sum = jnp.log(jnp.sum(jnp.exp(shifted), axis=-1))
    picked = jnp.take_along_axis(shifted, jnp.clip(labels, 0, n - 1)[..., None], axis=-1)[..., 0]
    loss = jnp.where((labels >= 0) & (labels < n), -(picked - log_sum), jnp.zeros((), logits.dtype))
    return jnp.stack([loss, m[..., 0], log_sum], axis=-1)


def _sparse_ce_logits_gradient_forward(labels, logits, out, g):
    """g_loss * (softmax - one_hot) + g_L * softmax, the label's term as a scatter."""
    if logits_crossentropy_native.applies(logits, labels) and out.dtype == g.dtype == logits.dtype:
        return logits_crossentropy_native.crossentropy_gradient(logits, labels, out, g)
    n = logits.shape[-1]
    valid = (labels >= 0) & (labels < n)
    g_loss = jnp.where(valid, g[..., 0], 0)
    softmax = jnp.exp(logits - out[..., 1:2] - out[..., 2:3])
    grad = (g_loss + g[..., 2])[..., None] * softmax
    # each row's label position, in the gradient's own shape (flattened to rows, XLA:CPU's sum
    # over them for a Dense bias was several times slower)
    rows = tuple(jax.lax.broadcasted_iota(jnp.int32, labels.shape, axis) for axis in range(labels.ndim))
    return grad.at[rows + (jnp.clip(labels, 0, n - 1),)].add(-g_loss)


_sparse_ce_logits = Primitive("sparse_categorical_crossentropy_from_logits", _sparse_ce_logits_forward)
_sparse_ce_logits_gradient = Primitive("sparse_categorical_crossentropy_from_logits_gradient",
                                       _sparse_ce_logits_gradient_forward, differentiable=False)


@_sparse_ce_logits.defgrad
def _(g, out, labels, logits):
    # m (column 1) is a constant to the gradient: it cancels out of the loss and of L's gradient
    if not _context.call_state.tapes:
        return None, _sparse_ce_logits_gradient(labels, logits, out, g)
    n = logits.shape[-1]
    valid = logical_and(greater_equal(labels, 0), less(labels, n))
    g_loss = where(valid, g[..., 0], 0.0)
    softmax = exp(logits - out[..., 1:2] - out[..., 2:3])
    targets = one_hot(labels, n, dtype=logits.dtype)
    return None, expand_dims(g_loss + g[..., 2], -1) * softmax - expand_dims(g_loss, -1) * targets


def sparse_categorical_crossentropy_from_logits(labels, logits):
    """Keras's sparse categorical cross-entropy of ``logits`` (..., n) for integer ``labels``
    (...), one loss per row: ``-log_softmax(logits)[label]``, and 0 where a label is outside
    [0, n) (as Keras's ``-sum(one_hot(labels) * log_softmax(logits))``, without the one-hot
    rows). Differentiable in ``logits``, to any order."""
    if labels.dtype.itemsize < 4:  # int8/uint8/int16 labels: compared with n, which they may not hold
        labels = cast(labels, "int32")
    return _sparse_ce_logits(labels, logits)[..., 0]


def _sigmoid_ce_forward(labels, logits):
    return jnp.maximum(logits, 0) - logits * labels + jnp.log1p(jnp.exp(-jnp.abs(logits)))


_sigmoid_ce = Primitive("sigmoid_cross_entropy_with_logits", _sigmoid_ce_forward)


@_sigmoid_ce.defgrad
def _(g, out, labels, logits):
    return -g * logits, g * (sigmoid(logits) - labels)


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Elementwise logistic loss max(x, 0) - x * z + log(1 + exp(-|x|)) for logits x, labels z."""
    op = "sigmoid_cross_entropy_with_logits"
    if labels is None or logits is None:
        raise ValueError(f"{op} needs both labels and logits")
    labels, logits = _matching_pair(op, labels, logits)
    return _sigmoid_ce(labels, logits)
