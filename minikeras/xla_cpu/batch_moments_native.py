"""``moments(x)``: the per-channel mean and biased variance of ``x`` over every axis but the last,
BatchNormalization's training statistics, and ``gradient_sums(g, x, mean)``, the two sums of its
gradient, on native kernels where they apply.

    mean, variance = moments(x)   # = jnp.mean(x, axes), jnp.var(x, axes), axes = all but the last
    sum_g, sum_gc = gradient_sums(g, x, mean)   # = jnp.sum(g, axes), jnp.sum(g * (x - mean), axes)

XLA:CPU takes these as three passes over memory (the mean, the centered array written out, the
sum of its squares); ``batch_moments_native.cc`` reads the array once, in parts that stay in
cache for their two passes, and combines the parts' statistics in a fixed order in double, so the
variance is as stable as the two-pass formula and the result does not depend on the threads.
Where the kernel does not apply (not float32 on the CPU, a last axis that is not a multiple of
16, symbolic sizes), cannot be built or is turned off (``tuning.NATIVE_KERNELS``,
``tuning.BATCH_MOMENTS_NATIVE``) the two jnp passes run instead, with the same values up to float32
rounding. The gradient sums take one pass over g and x with the subtraction inside: XLA's
reductions fuse a product of two arrays, not a difference, so XLA wrote ``x - mean`` out for them.
Both are differentiable (``jax.custom_jvp``: the derivatives of the jnp formulas); they batch
under ``vmap`` by running once per element.
"""
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.xla_cpu import tuning
from minikeras.xla_cpu.native_build import register_targets, usable_cpus, why_unavailable

_SOURCE = "batch_moments_native.cc"
_TARGET = "minikeras_batch_moments"
_GRADIENT_SUMS = "minikeras_batch_norm_gradient_sums"


@functools.lru_cache(maxsize=None)
def available():
    """True when the kernel is built for this machine and registered with XLA:CPU."""
    return register_targets(_SOURCE, {_TARGET: "MinikerasBatchMoments",
                                      _GRADIENT_SUMS: "MinikerasBatchNormGradientSums"})


def unavailable_reason():
    """Why ``available()`` is False ('' when it is True or was not asked)."""
    return why_unavailable(_SOURCE)


def supported(shape, dtype):
    """Whether the native kernel takes the statistics of an array of ``shape`` and ``dtype``."""
    return (tuning.NATIVE_KERNELS and tuning.BATCH_MOMENTS_NATIVE and jax.default_backend() == "cpu"
            and jnp.dtype(dtype) == jnp.float32 and len(shape) >= 2 and all(type(d) is int for d in shape)
            and shape[-1] % 16 == 0 and math.prod(shape[:-1]) >= 1)


def _xla_moments(x):
    axes = tuple(range(x.ndim - 1))
    mean = jnp.mean(x, axis=axes)
    centered = x - mean
    return mean, jnp.mean(centered * centered, axis=axes)


@jax.custom_jvp
def moments(x):
    """``(mean, variance)`` of ``x`` (rank >= 2) over all axes but the last, each of shape
    ``x.shape[-1:]``; the variance is the biased one (divided by the number of rows)."""
    if not supported(x.shape, x.dtype) or not available():
        return _xla_moments(x)
    return _call(_TARGET, x, x.reshape(-1, x.shape[-1]))


def _call(target, x, *operands):
    """``target``'s two per-channel results on ``operands`` (x's rows first)."""
    channels = x.shape[-1]
    rows = math.prod(x.shape[:-1])
    part_rows = max(1, tuning.BATCH_MOMENTS_PART_FLOATS // channels)
    threads = 1 if rows * channels < tuning.BATCH_MOMENTS_THREAD_FLOATS else usable_cpus()
    out = jax.ShapeDtypeStruct((channels,), x.dtype)
    call = jax.ffi.ffi_call(target, (out, out), vmap_method="sequential")
    return tuple(call(*operands, part_rows=np.int64(part_rows), threads=np.int64(threads)))


@moments.defjvp
def _moments_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    mean, variance = moments(x)
    axes = tuple(range(x.ndim - 1))
    dmean = jnp.mean(dx, axis=axes)
    # d mean((x - mean)^2) = mean(2 (x - mean) (dx - dmean)) = 2 mean((x - mean) dx)
    dvariance = 2.0 * jnp.mean((x - mean) * dx, axis=axes)
    return (mean, variance), (dmean, dvariance)


def _xla_gradient_sums(g, x, mean):
    axes = tuple(range(x.ndim - 1))
    return jnp.sum(g, axis=axes), jnp.sum(g * (x - mean), axis=axes)


@jax.custom_jvp
def gradient_sums(g, x, mean):
    """``(sum(g), sum(g * (x - mean)))`` over all axes but the last (g and x of one shape, mean of
    ``x.shape[-1:]``), each of shape ``x.shape[-1:]``: BatchNormalization's beta gradient and its
    gamma gradient before the scale."""
    if g.shape != x.shape or g.dtype != x.dtype or not supported(x.shape, x.dtype) or not available():
        return _xla_gradient_sums(g, x, mean)
    channels = x.shape[-1]
    return _call(_GRADIENT_SUMS, x, g.reshape(-1, channels), x.reshape(-1, channels), mean.reshape(channels))


@gradient_sums.defjvp
def _gradient_sums_jvp(primals, tangents):
    (g, x, mean), (dg, dx, dmean) = primals, tangents
    sums = gradient_sums(g, x, mean)
    axes = tuple(range(x.ndim - 1))
    d_sum_g = jnp.sum(dg, axis=axes)
    d_sum_gc = jnp.sum(dg * (x - mean) + g * (dx - dmean), axis=axes)
    return sums, (d_sum_g, d_sum_gc)
