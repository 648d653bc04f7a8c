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
    """Sets the default float dtype ('float16', 'bfloat16' or 'float32')."""
    global _FLOATX
    dtype = np.dtype(jnp.dtype(dtype))
    if not jnp.issubdtype(dtype, jnp.floating):
        raise ValueError(f"set_floatx expects a floating dtype, received {dtype}")
    _FLOATX = dtype


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
