"""Neural-network ops (``tf.nn``): activations, dropout, moments and normalisation, bias_add.

Softmax and the cross-entropies live in ``nn_losses.py``, convolution and pooling in
``nn_conv.py``; both are re-exported here, so ``minikeras.ops.nn`` holds every ``tf.nn`` name.
"""
import math

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.ops.array import gather, reshape
from minikeras.ops.convert import binary_args, normalize_axis
from minikeras.ops.math import (  # noqa: F401 - sigmoid, tanh, softplus are tf.nn names too
    abs as abs_,
    erf,
    exp,
    log_sigmoid,
    maximum,
    rsqrt,
    sigmoid,
    softplus,
    square,
    squared_difference,
    tanh,
    where,
    zero_of_,
)
from minikeras.ops.nn_losses import (  # noqa: F401 - tf.nn names
    _floating,
    _t,
    log_softmax,
    sigmoid_cross_entropy_with_logits,
    softmax,
    softmax_cross_entropy_with_logits,
    sparse_softmax_cross_entropy_with_logits,
)
from minikeras.ops.primitive import Primitive
from minikeras.ops.random import next_key
from minikeras.ops.reduce import reduce_mean, reduce_sum
from minikeras.tensor import Tensor, Variable
from minikeras.xla_cpu.dropout import scaled_mask


def _numeric(x, op):
    x = _t(x)
    if x.dtype == np.bool_:
        raise TypeError(f"{op} expects a numeric tensor, received dtype bool")
    return x


def _activation(name, forward, rule, doc, check=_floating):
    prim = Primitive(name, forward)
    prim.defgrad(rule)
    op_name = name

    def op(features, name=None):
        return prim(check(features, op_name))

    op.__name__ = name
    op.__doc__ = doc
    op.primitive = prim
    return op


# -- activations ------------------------------------------------------------------------------
relu = _activation(
    "relu", lambda x: jnp.maximum(x, 0), lambda g, out, x: where(x > 0, g, zero_of_(g)),
    "max(features, 0); the gradient at 0 is 0, as in TensorFlow.", check=_numeric)
relu6 = _activation(
    "relu6", lambda x: jnp.clip(x, 0, 6), lambda g, out, x: where((x > 0) & (x < 6), g, zero_of_(g)),
    "min(max(features, 0), 6).", check=_numeric)
elu = _activation(
    "elu", lambda x: jnp.where(x > 0, x, jnp.expm1(x)),
    lambda g, out, x: where(x > 0, g, g * (out + 1.0)),
    "features if features > 0 else exp(features) - 1.")

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
selu = _activation(
    "selu", lambda x: _SELU_SCALE * jnp.where(x > 0, x, _SELU_ALPHA * jnp.expm1(x)),
    lambda g, out, x: where(x > 0, g * _SELU_SCALE, g * (out + _SELU_SCALE * _SELU_ALPHA)),
    "Scaled ELU: scale * (features if features > 0 else alpha * (exp(features) - 1)).")


def _silu_forward(x, *, beta):
    return x * jax.nn.sigmoid(beta * x)


_silu = Primitive("silu", _silu_forward)


@_silu.defgrad
def _(g, out, x, *, beta):
    s = sigmoid(x * beta)
    return g * s * (1.0 + (x * beta) * (1.0 - s))


def silu(features, beta=1.0, name=None):
    """features * sigmoid(beta * features) (``tf.nn.silu``, also called swish)."""
    return _silu(_floating(features, "silu"), beta=float(beta))


swish = silu


def _leaky_relu_forward(x, *, alpha):
    return jnp.where(x > 0, x, x * alpha)


_leaky_relu = Primitive("leaky_relu", _leaky_relu_forward)


@_leaky_relu.defgrad
def _(g, out, x, *, alpha):
    return where(x > 0, g, g * alpha)


def leaky_relu(features, alpha=0.2, name=None):
    """features if features > 0 else alpha * features."""
    return _leaky_relu(_floating(features, "leaky_relu"), alpha=float(alpha))


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_CUBIC = 0.044715


def _gelu_forward(x, *, approximate):
    return jax.nn.gelu(x, approximate=approximate)


_gelu = Primitive("gelu", _gelu_forward)


@_gelu.defgrad
def _(g, out, x, *, approximate):
    if approximate:
        t = tanh((x + _GELU_CUBIC * x * x * x) * _SQRT_2_OVER_PI)
        slope = (1.0 + 3.0 * _GELU_CUBIC * x * x) * _SQRT_2_OVER_PI
        return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * slope)
    cdf = 0.5 * (1.0 + erf(x * (1.0 / math.sqrt(2.0))))
    pdf = exp(x * x * -0.5) * (1.0 / math.sqrt(2.0 * math.pi))
    return g * (cdf + x * pdf)


def gelu(features, approximate=False, name=None):
    """Gaussian error linear unit: x * Phi(x); with ``approximate=True`` the tanh formula."""
    return _gelu(_floating(features, "gelu"), approximate=bool(approximate))


def softsign(features, name=None):
    """features / (1 + |features|)."""
    x = _floating(features, "softsign")
    return x / (abs_(x) + 1.0)


# -- dropout ------------------------------------------------------------------------------------
def _scaled_mask(key, *, shape, rate, dtype):
    # jax.random.bernoulli's bits, drawn once (a native kernel, or an unrolled threefry ~10x
    # faster than jax's on the CPU), not again inside the forward and the gradient; a bfloat16
    # layer's may come as float32 holding the bfloat16 values (see scaled_mask)
    return scaled_mask(key, shape, rate, dtype, widened=True)


_scaled_mask_jit = jax.jit(_scaled_mask, static_argnames=("shape", "rate", "dtype"))

# x * mask in x's dtype: with a float32 mask of bfloat16 values the product rounded once, as the
# bfloat16 product is
_apply_mask = Primitive("dropout", lambda x, mask: (x * mask).astype(x.dtype))


@_apply_mask.defgrad
def _(g, out, x, mask):
    return _apply_mask(g, mask), None


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Zeros each element with probability ``rate`` and scales the rest by 1 / (1 - rate).

    Args:
      x: a floating tensor.
      rate: the drop probability, in [0, 1).
      noise_shape: the shape of the random keep/drop mask, broadcast against ``x`` (e.g.
        ``[batch, 1, 1, channels]`` drops whole channels); default ``x.shape``.
      seed: an int mixed into the key drawn from the global generator.

    Returns:
      A tensor of ``x``'s shape, differentiable in ``x``.
    """
    x = _floating(x, "dropout", "x")
    if isinstance(rate, (Tensor, Variable)):
        rate = float(rate)
    try:
        rate = float(rate)
    except (TypeError, ValueError):
        raise TypeError(f"dropout: rate must be a float in [0, 1), received {rate!r}") from None
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"dropout: rate must be a scalar tensor or a float in the range [0, 1), received {rate}")
    if noise_shape is None:
        shape = x.shape
    else:
        shape = tuple(x.shape[i] if n is None else int(n) for i, n in enumerate(np.asarray(noise_shape, object)
                                                                                .reshape(-1).tolist()))
        if len(shape) != x.ndim or any(n not in (1, m) for n, m in zip(shape, x.shape)):
            raise ValueError(f"dropout: noise_shape {list(shape)} must have rank {x.ndim} and each entry equal to "
                             f"x's dimension or 1 (x shape {x.shape})")
    if rate == 0.0:
        return x
    key = next_key(seed)
    make = _scaled_mask if isinstance(key, jax.core.Tracer) else _scaled_mask_jit
    mask = make(key, shape=shape, rate=rate, dtype=x.dtype)
    return _apply_mask(x, Tensor(mask))


# -- statistics and simple losses -------------------------------------------------------------
def l2_loss(t, name=None):
    """sum(t ** 2) / 2, a scalar."""
    t = _floating(t, "l2_loss", "t")
    return reduce_sum(square(t)) * 0.5


def moments(x, axes, shift=None, keepdims=False, name=None):
    """Mean and (population) variance of ``x`` over ``axes``: ``(mean, variance)``.

    Unlike TensorFlow, the mean is not a stop-gradient inside the variance, so second
    derivatives are exact (first derivatives are the same).
    """
    x = _floating(x, "moments", "x")
    axes = normalize_axis(axes, x.ndim, "moments")
    mean = reduce_mean(x, axis=axes, keepdims=True)
    variance = reduce_mean(squared_difference(x, mean), axis=axes, keepdims=True)
    if not keepdims:
        kept = tuple(n for i, n in enumerate(x.shape) if i not in axes)
        mean, variance = reshape(mean, kept), reshape(variance, kept)
    return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) * scale / sqrt(variance + variance_epsilon) + offset (``offset``/``scale`` may be None)."""
    x = _floating(x, "batch_normalization", "x")
    inv = rsqrt(_t(variance) + variance_epsilon)
    if scale is not None:
        inv = inv * scale
    shift = (offset - mean * inv) if offset is not None else -(mean * inv)
    return x * inv + shift


def l2_normalize(x, axis=None, epsilon=1e-12, name=None):
    """x / sqrt(max(sum(x ** 2, axis), epsilon))."""
    x = _floating(x, "l2_normalize", "x")
    squared = reduce_sum(square(x), axis=axis, keepdims=True)
    return x * rsqrt(maximum(squared, epsilon))


def bias_add(value, bias, data_format=None, name=None):
    """Adds the 1-D ``bias`` along the channel axis of ``value`` (last, or axis 1 for 'NC...')."""
    value, bias = binary_args("BiasAdd", value, bias)
    if bias.ndim != 1:
        raise ValueError(f"bias_add: bias must be 1-D, received shape {bias.shape}")
    if value.ndim < 2:
        raise ValueError(f"bias_add: value must have rank >= 2, received shape {value.shape}")
    if data_format is None or str(data_format).upper() in ("NHWC", "NWC", "NDHWC", "N...C"):
        channel = value.ndim - 1
    elif str(data_format).upper() in ("NCHW", "NCW", "NCDHW", "NC..."):
        channel = 1
    else:
        raise ValueError(f"bias_add: data_format must be 'N...C' (e.g. 'NHWC') or 'NC...' (e.g. 'NCHW'), received "
                         f"{data_format!r}")
    if value.shape[channel] != bias.shape[0]:
        raise ValueError(f"bias_add: Must provide as many biases as the channel dimension of the input tensor: "
                         f"bias shape {bias.shape} vs. channel dimension {value.shape[channel]} of value shape "
                         f"{value.shape}")
    if channel != value.ndim - 1:
        bias = reshape(bias, (bias.shape[0],) + (1,) * (value.ndim - 2))
    return value + bias


def embedding_lookup(params, ids, max_norm=None, name=None):
    """Rows of ``params`` at ``ids`` (``tf.nn.embedding_lookup`` for one params tensor)."""
    if max_norm is not None:
        raise NotImplementedError("embedding_lookup with max_norm is not supported")
    return gather(params, ids)


from minikeras.ops.nn_conv import avg_pool2d, conv2d, conv2d_transpose, max_pool2d  # noqa: E402,F401 - tf.nn names
