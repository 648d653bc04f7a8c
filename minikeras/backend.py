"""The one place that imports JAX and decides dtype policy.

By default minikeras keeps JAX's 32-bit values (``jax_enable_x64`` off): NumPy float64 input
becomes float32 and int64 int32, as Keras 3 on JAX does. ``enable_x64()`` (or the environment
variable ``MINIKERAS_ENABLE_X64=1``, read at import) turns on TF's dtypes: float64 and int64
values stay 64-bit and argmax returns int64, while ``floatx()`` stays float32, so models, their
weights and their speed do not change.
"""
import contextlib
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.export import is_symbolic_dim

_FLOATX = np.dtype("float32")
DEFAULT_EPSILON = 1e-7  # Keras's
_SETTINGS = {"image_data_format": "channels_last", "epsilon": DEFAULT_EPSILON,
             # Keras's debugging caps on fit's epochs and every epoch's steps (KERAS_MAX_EPOCHS, ...)
             "max_epochs": int(os.environ["KERAS_MAX_EPOCHS"]) if os.environ.get("KERAS_MAX_EPOCHS") else None,
             "max_steps_per_epoch": (int(os.environ["KERAS_MAX_STEPS_PER_EPOCH"])
                                     if os.environ.get("KERAS_MAX_STEPS_PER_EPOCH") else None)}

if os.environ.get("MINIKERAS_ENABLE_X64", "").strip().lower() in ("1", "true", "yes", "on"):
    jax.config.update("jax_enable_x64", True)


def enable_x64(enabled=True):
    """Turns TF's 64-bit dtypes on (or off): float64 and int64 values stay 64-bit, Python ints make
    int32 and Python floats ``floatx()`` as in TF, argmax/argmin return int64. Call it before
    making any value (values made before keep their dtypes); ``MINIKERAS_ENABLE_X64=1`` in the
    environment does the same at import."""
    jax.config.update("jax_enable_x64", bool(enabled))


def x64_enabled():
    """Whether 64-bit dtypes are on (``enable_x64``)."""
    return bool(jax.config.jax_enable_x64)


def floatx():
    """The default float dtype of new Tensors, Variables and weights (float32)."""
    return _FLOATX


def set_floatx(dtype):
    """Sets the default float dtype ('float16', 'bfloat16', 'float32' or 'float64')."""
    global _FLOATX
    try:
        parsed = np.dtype(jnp.dtype(dtype))
    except TypeError:
        parsed = None
    if parsed is None or not jnp.issubdtype(parsed, jnp.floating):
        raise ValueError(f"Unknown `floatx` value: {dtype}. Expected one of "
                         "{'float16', 'bfloat16', 'float32', 'float64'}")
    _FLOATX = parsed


def epsilon():
    """The fuzz factor Keras adds to avoid dividing by zero and clips probabilities with
    (``keras.config.epsilon()``): 1e-7 unless ``set_epsilon`` changed it.

    The losses, metrics, ops (``keras.ops.normalize``...), constraints and layers that use
    Keras's epsilon read it when they are called, as Keras 3 does. A program compiled before a
    change (an ``mk.function`` trace, ``fit``'s train step) keeps the epsilon it was traced
    with, as Keras's jitted functions do: trace again (a new ``compile``) to use the new one."""
    return _SETTINGS["epsilon"]


def set_epsilon(value):
    """Sets the fuzz factor ``epsilon()`` returns (``keras.config.set_epsilon``), e.g. 1e-3.

    Raises:
      TypeError: ``value`` is not a real number (a bool, a string, None...).
    """
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise TypeError(f"set_epsilon expects a real number such as 1e-7, received {value!r} of type "
                        f"{type(value).__name__}")
    try:
        _SETTINGS["epsilon"] = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"set_epsilon expects a real number such as 1e-7, received {value!r} of type "
                        f"{type(value).__name__}") from None


def image_data_format():
    """The default layout of image layers and ops: 'channels_last' (``(batch, height, width,
    channels)``, the default) or 'channels_first' (``(batch, channels, height, width)``)."""
    return _SETTINGS["image_data_format"]


def set_image_data_format(data_format):
    """Sets the layout ``image_data_format()`` returns (any capitalisation of 'channels_last' or
    'channels_first')."""
    _SETTINGS["image_data_format"] = standardize_data_format(data_format)


def max_epochs():
    """The cap on ``fit``'s epochs set by ``set_max_epochs`` (or ``KERAS_MAX_EPOCHS``), or None."""
    return _SETTINGS["max_epochs"]


def set_max_epochs(max_epochs):
    """Caps the epochs of every ``fit`` (a debugging aid, as Keras's); None removes the cap."""
    _SETTINGS["max_epochs"] = None if max_epochs is None else int(max_epochs)


def max_steps_per_epoch():
    """The cap on the steps of an epoch of ``fit``/``evaluate``/``predict`` set by
    ``set_max_steps_per_epoch`` (or ``KERAS_MAX_STEPS_PER_EPOCH``), or None."""
    return _SETTINGS["max_steps_per_epoch"]


def set_max_steps_per_epoch(max_steps_per_epoch):
    """Caps the steps of every epoch of ``fit``, ``evaluate`` and ``predict``; None removes the cap."""
    _SETTINGS["max_steps_per_epoch"] = None if max_steps_per_epoch is None else int(max_steps_per_epoch)


def standardize_data_format(data_format):
    """A layer's or op's ``data_format`` argument, checked and lower-cased; None is
    ``image_data_format()``: the one function layers call for their default layout."""
    if data_format is None:
        return _SETTINGS["image_data_format"]
    normalized = str(data_format).lower()
    if normalized not in ("channels_last", "channels_first"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
                         f"Received: data_format={data_format!r}")
    return normalized


def is_tracer(value):
    """True when ``value`` is an abstract value inside a JAX trace (jit, vmap, grad)."""
    return isinstance(value, jax.core.Tracer)


def default_backend():
    """'cpu', 'gpu' or 'tpu': the platform JAX runs on."""
    return jax.default_backend()


def static_shape(shape):
    """``shape`` as TensorFlow shows it: a size that is symbolic (a ``None`` dimension of an
    ``mk.function`` input signature, traced once for every size) becomes None."""
    return tuple(d if type(d) is int else None for d in shape)


def folding_constants(*values):
    """A context for computing from ``values`` (arrays, shapes, op parameters) inside a trace:
    ``jax.ensure_compile_time_eval()``, so that the result is a concrete constant, unless a
    value is traced or holds a symbolic size (then the computation is staged).

    ``mk.function`` traces with constants computed eagerly (a Variable may be created from
    ``mk.ones(...) * 2``); a trace with symbolic sizes cannot do that everywhere (a mean
    divides by a size known only at run time), so it computes constants here, op by op.
    """
    if any(_traced_or_symbolic(v) for v in values):
        return contextlib.nullcontext()
    return jax.ensure_compile_time_eval()


def _traced_or_symbolic(value):
    if isinstance(value, (tuple, list)):
        return any(_traced_or_symbolic(v) for v in value)
    if isinstance(value, dict):
        return any(_traced_or_symbolic(v) for v in value.values())
    return is_tracer(value) or is_symbolic_dim(value)
