"""``standardized``: the normalized value and its scale that the gradients of the normalization
ops (``batch_norm.py``, ``layer_norm.py``) are written over."""
from minikeras.ops.elementwise import rsqrt
from minikeras.ops.reduce import reduce_mean


def centered_and_rstd(x, axes, epsilon):
    """``(x - mean, rstd)`` with ``rstd = rsqrt(variance + epsilon)``, the statistics taken over
    ``axes`` (kept as size-1 axes), written with minikeras ops so that the gradients built on them
    differentiate again."""
    centered = x - reduce_mean(x, axis=axes, keepdims=True)
    return centered, rsqrt(reduce_mean(centered * centered, axis=axes, keepdims=True) + epsilon)


def standardized(x, axes, epsilon):
    """``(xhat, rstd)``: ``xhat = (x - mean) * rstd``, as ``centered_and_rstd``."""
    centered, rstd = centered_and_rstd(x, axes, epsilon)
    return centered * rstd, rstd
