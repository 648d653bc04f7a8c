"""The one place that imports JAX and decides dtype policy.

minikeras keeps JAX's default of 32-bit values (``jax_enable_x64`` off): NumPy float64 input
becomes float32, the way Keras casts inputs to its float policy.
"""
import jax
import jax.numpy as jnp
import numpy as np

_FLOATX = np.dtype("float32")


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
