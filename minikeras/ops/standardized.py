"""``standardized``: the normalized value and its scale that the gradients of the normalization
ops (``batch_norm.py``, ``layer_norm.py``) are written over."""
from minikeras.ops.elementwise import rsqrt
from minikeras.ops.reduce import reduce_mean


def standardized(x, axes, epsilon):
    """``(xhat, rstd)``: ``rstd = rsqrt(variance + epsilon)`` and ``xhat = (x - mean) * rstd``, the
    statistics taken over ``axes`` (kept as size-1 axes), written with minikeras ops so that the
    gradients built on them differentiate again."""
    centered = x - reduce_mean(x, axis=axes, keepdims=True)
    rstd = rsqrt(reduce_mean(centered * centered, axis=axes, keepdims=True) + epsilon)
    return centered * rstd, rstd
