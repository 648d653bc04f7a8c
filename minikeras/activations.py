"""Activation functions under Keras 3's names, defaults and formulas (``mk.activations``).

    mk.activations.get("relu")(mk.constant([-1.0, 2.0]))   # mk.Tensor([0. 2.], ...)

Every function is an ``mk.nn`` primitive or built from minikeras ops, so it differentiates on
the tape, compiles under ``mk.function`` and takes Tensors, Variables, NumPy arrays and Python
numbers.
"""
import jax.nn as jnn

from minikeras import _context
from minikeras.ops import activation_forwards as _fw, math as _m, nn as _nn
from minikeras.ops.jax_call import call_jax
from minikeras.tensor import Tensor, Variable, to_array


def _t(x):
    return x if isinstance(x, (Tensor, Variable)) else Tensor(to_array(x))


def _relu(x):
    return _nn.relu(x)  # the gradient at 0 is 0, as TensorFlow's and JAX's relu


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """Rectified linear unit: ``max(x, 0)``; with the options, Keras's general form.

    Args:
      negative_slope: slope below ``threshold`` (0 = plain relu).
      max_value: upper saturation value (None = no cap).
      threshold: values below it are zeroed (or scaled by ``negative_slope``).
    """
    x = _t(x)
    if negative_slope != 0.0:
        if max_value is None and threshold == 0:
            return leaky_relu(x, negative_slope=negative_slope)
        negative_part = _relu(-x + threshold) if threshold != 0 else _relu(-x)
    if threshold != 0:
        x = x * _m.cast(x > threshold, x.dtype)
    else:
        x = _relu(x)
    if max_value is not None:
        x = _m.minimum(_m.maximum(x, 0), max_value)
    if negative_slope != 0.0:
        x = x - negative_slope * negative_part
    return x


def relu6(x):
    """``min(max(x, 0), 6)``."""
    return _nn.relu6(_t(x))


def leaky_relu(x, negative_slope=0.2):
    """``x`` where positive, ``negative_slope * x`` elsewhere (Keras 3's default slope 0.2)."""
    return _nn.leaky_relu(_t(x), alpha=negative_slope)


def elu(x, alpha=1.0):
    """Exponential linear unit: ``x`` if ``x > 0`` else ``alpha * (exp(x) - 1)``."""
    x = _t(x)
    if alpha == 1.0:
        return _nn.elu(x)
    positive = x > 0
    return _m.where(positive, x, alpha * _m.expm1(_m.where(positive, 0, x)))


def selu(x):
    """Scaled ELU: ``scale * elu(x, alpha)`` with alpha ~ 1.6733 and scale ~ 1.0507."""
    return _nn.selu(_t(x))


def sigmoid(x):
    """``1 / (1 + exp(-x))``."""
    return _m.sigmoid(_t(x))


def tanh(x):
    """Hyperbolic tangent."""
    return _m.tanh(_t(x))


def softplus(x):
    """``log(exp(x) + 1)``, computed stably."""
    return _m.softplus(_t(x))


def softsign(x):
    """``x / (abs(x) + 1)``."""
    return _nn.softsign(_t(x))


def silu(x):
    """Swish / SiLU: ``x * sigmoid(x)``."""
    return _nn.silu(_t(x))


swish = silu


def gelu(x, approximate=False):
    """Gaussian error linear unit: ``x * P(X <= x)`` for X ~ N(0, 1).

    ``approximate=True`` uses the tanh form
    ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))``.
    """
    return _nn.gelu(_t(x), approximate=approximate)


def hard_sigmoid(x):
    """Piecewise-linear sigmoid: ``relu6(x + 3) / 6``."""
    return relu6(_t(x) + 3) / 6


def hard_silu(x):
    """``x * hard_sigmoid(x)``."""
    x = _t(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def mish(x):
    """``x * tanh(softplus(x))``."""
    x = _t(x)
    return x * _m.tanh(_m.softplus(x))


def exponential(x):
    """``exp(x)``."""
    return _m.exp(_t(x))


def linear(x):
    """Identity: returns ``x`` unchanged."""
    return x


def log_sigmoid(x):
    """``log(sigmoid(x))``, computed stably."""
    return _m.log_sigmoid(_t(x))


def log_softmax(x, axis=-1):
    """``x - logsumexp(x, axis)``: log-probabilities along ``axis``."""
    return _nn.log_softmax(_t(x), axis=axis)


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x), axis)``, computed stably; the values along ``axis`` sum to 1."""
    return _nn.softmax(_t(x), axis=axis)


def _jax_activation(name, fn, x, **params):
    """``fn(x, **params)`` (a jax function) recorded as one op, differentiated by ``jax.vjp``."""
    return call_jax(lambda a: (fn(a, **params),), [_t(x)], name=name, key=(name, tuple(sorted(params.items()))))[0]


def celu(x, alpha=1.0):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    return _jax_activation("celu", jnn.celu, x, alpha=alpha)


def glu(x, axis=-1):
    """The gated linear unit: ``a * sigmoid(b)`` with ``a, b`` the halves of ``x`` along ``axis``."""
    return _jax_activation("glu", jnn.glu, x, axis=axis)


def hard_tanh(x):
    """``x`` clipped to [-1, 1]."""
    return _jax_activation("hard_tanh", jnn.hard_tanh, x)


def hard_shrink(x, threshold=0.5):
    """``x`` where ``|x| > threshold``, else 0."""
    return _jax_activation("hard_shrink", _fw.hard_shrink, x, threshold=threshold)


def soft_shrink(x, threshold=0.5):
    """``x`` moved ``threshold`` towards 0, and 0 within ``[-threshold, threshold]``."""
    return _jax_activation("soft_shrink", _fw.soft_shrink, x, threshold=threshold)


def tanh_shrink(x):
    """``x - tanh(x)``."""
    return _jax_activation("tanh_shrink", _fw.tanh_shrink, x)


def threshold(x, threshold, default_value):
    """``x`` where ``x > threshold``, else ``default_value``."""
    return _jax_activation("threshold", _fw.threshold, x, threshold=threshold, default_value=default_value)


def sparse_plus(x):
    """0 below -1, ``(x + 1)^2 / 4`` within [-1, 1], ``x`` above 1."""
    return _jax_activation("sparse_plus", jnn.sparse_plus, x)


def sparse_sigmoid(x):
    """0 below -1, ``(x + 1) / 2`` within [-1, 1], 1 above 1."""
    return _jax_activation("sparse_sigmoid", jnn.sparse_sigmoid, x)


def squareplus(x, b=4):
    """``(x + sqrt(x^2 + b)) / 2``."""
    return _jax_activation("squareplus", jnn.squareplus, x, b=b)


def sparsemax(x, axis=-1):
    """Sparsemax along ``axis`` (Martins & Astudillo 2016): like softmax, but exactly 0 for low
    scores. As Keras 3.15 computes it (both its backends): its threshold sums the cumulative sums
    over the support, so where more than one score is in the support the outputs do not sum to 1
    as the paper's projection onto the simplex would."""
    return _jax_activation("sparsemax", _fw.sparsemax, x, axis=axis)


_BUILTINS = {fn.__name__: fn for fn in (
    relu, relu6, leaky_relu, elu, selu, sigmoid, tanh, softplus, softsign, silu, gelu, hard_sigmoid,
    hard_silu, mish, exponential, linear, log_sigmoid, log_softmax, softmax, celu, glu, hard_tanh, hard_shrink,
    soft_shrink, tanh_shrink, threshold, sparse_plus, sparse_sigmoid, squareplus, sparsemax)}
_ALIASES = {"swish": silu, "hard_swish": hard_silu}


def serialize(activation):
    """The name of a built-in activation (``'relu'``); for any other callable, Keras 3's dict
    ``{'module', 'class_name': 'function', 'config': <its name>, 'registered_name'}``.

    >>> mk.activations.serialize(mk.activations.relu)
    'relu'
    """
    if activation is None:
        return "linear"
    if isinstance(activation, str):
        return serialize(get(activation))
    if not callable(activation):
        raise ValueError(f"Cannot serialize activation {activation!r}: it is not callable")
    name = getattr(activation, "__name__", None)
    if name is not None and _BUILTINS.get(name) is activation:
        return name
    name = name or type(activation).__name__
    return {"module": getattr(activation, "__module__", None), "class_name": "function", "config": name,
            "registered_name": name}


def deserialize(config, custom_objects=None):
    """Returns the activation named by ``config`` (a name or a dict made by ``serialize``): a
    user's function from the ``mk.saving.custom_object_scope`` blocks, ``custom_objects`` or the
    registered functions (``"package>name"``), else a built-in one, as Keras 3.

    >>> with mk.saving.custom_object_scope({"my_act": my_act}):
    ...     mk.activations.deserialize("my_act") is my_act
    True
    """
    name = config.get("config") if isinstance(config, dict) else config
    fn = _context.find_custom_object(name, custom_objects) if isinstance(name, str) else None
    return fn if fn is not None else _builtin(name)


def _builtin(name):
    fn = _BUILTINS.get(name) or _ALIASES.get(name)
    if fn is None:
        known = sorted(list(_BUILTINS) + list(_ALIASES))
        raise ValueError(f"Unknown activation function: {name!r}. Known activations: {', '.join(known)}")
    return fn


def get(identifier):
    """Returns an activation function from a name (a built-in's), a dict (``serialize``'s, found
    as ``deserialize`` finds it), a callable, or None (-> ``linear``).

    >>> mk.activations.get("softmax") is mk.activations.softmax
    True

    Raises:
      ValueError: for an unknown name (the message lists the known ones) or a non-callable.
    """
    if identifier is None:
        return linear
    if isinstance(identifier, str):  # a name is a built-in's only, as Keras 3's get
        return _builtin(identifier)
    if isinstance(identifier, dict):  # a serialized function: custom objects and registered ones too
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret activation function identifier: {identifier!r} "
                     "(expected a name such as 'relu', a callable, or None)")
