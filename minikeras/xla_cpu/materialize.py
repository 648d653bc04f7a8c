"""``materialize(x)``: x, computed into a buffer of its own before its consumers run (XLA:CPU).

XLA:CPU fuses an elementwise producer into its consumers even when a consumer reads each
element several times, or when there are several consumers, and then computes the producer
again for every read. Usually that is the right trade; for a producer that is costly per
element, such as a dropout mask drawn by the unrolled threefry, it is not: the MNIST CNN's
max-pool gradient reads each window's cotangent four times, and its fused loop drew each mask
bit four times (slower than materializing the cotangent first); and the mask itself was drawn
twice, in the forward multiply and in its gradient. So ``xla_cpu.pool`` materializes the pool
gradient's cotangent, ``ops.nn`` the dropout mask and ``xla_cpu.depthwise`` the filter gradient's
``dy`` (MobileNetV2's BatchNormalization gradient, computed again inside the reduction
otherwise). ``lax.optimization_barrier`` does not help: XLA:CPU removes barriers before it fuses.

``materialize`` is an identity custom call (``materialize.cc``, built by ``native_build``) whose
output aliases its operand, so it costs a buffer, not a copy. Where it cannot run (another
backend, no C++ compiler, ``MINIKERAS_NATIVE=0``, ``tuning.NATIVE_KERNELS`` False) it is
plain ``x``. It is differentiable (its derivative is the identity) and batches under ``vmap``.
"""
import functools

import jax

from minikeras.xla_cpu import tuning
from minikeras.xla_cpu.native_build import register_targets

_TARGET = "minikeras_materialize"


@functools.lru_cache(maxsize=None)
def available():
    """True when the identity is built and registered with XLA:CPU."""
    return register_targets("materialize.cc", {_TARGET: "MinikerasMaterialize"})


@jax.custom_jvp
def materialize(x):
    """``x``, computed into a buffer of its own before any consumer reads it (see the module doc)."""
    if not tuning.NATIVE_KERNELS or jax.default_backend() != "cpu" or not available():
        return x
    return jax.ffi.ffi_call(_TARGET, jax.ShapeDtypeStruct(x.shape, x.dtype), input_output_aliases={0: 0},
                            vmap_method="expand_dims")(x)


@materialize.defjvp
def _materialize_jvp(primals, tangents):
    return materialize(primals[0]), tangents[0]
