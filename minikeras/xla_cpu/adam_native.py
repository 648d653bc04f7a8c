"""One Adam step for one float32 variable as a native CPU kernel (``adam_native.cc``).

    if supported(variable_shape, dtype) and available():
        new_variable, new_m, new_v = update(variable, m, v, gradient, alpha, beta_1, beta_2, epsilon)
        # AdamW (any weight_decay): the variable decayed first, in the same pass
        new_variable, new_m, new_v = update(variable, m, v, gradient, alpha, beta_1, beta_2, epsilon,
                                            weight_decay=0.004, learning_rate=lr)

The same bits as ``mk.optimizers.Adam``'s jax code (the kernel runs its operations in the same
order and rounding), computed in one pass, in place where XLA gives the outputs the inputs'
buffers. What it saves is compile time: XLA:CPU compiles each variable's update as three loop
kernels (24 for the MNIST CNN's eight variables, a noticeable share of its step's first call);
a custom call compiles nothing. ``available()`` builds it on first use
(``native_build``); elsewhere (another backend, no compiler, ``MINIKERAS_NATIVE=0``,
``tuning.NATIVE_KERNELS`` False) Adam keeps its jax code.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.xla_cpu import tuning
from minikeras.xla_cpu.native_build import register_targets, usable_cpus

_TARGET = "minikeras_adam_update"
_DECAY_TARGET = "minikeras_adamw_update"

# Whether AdamW's kernel writes the variable in its own buffer, as Adam's does (read when a step
# is traced; benchmarks/donation_ab.py --adamw-alias-ab times both)
DECAYED_VARIABLE_IN_PLACE = True


@functools.lru_cache(maxsize=None)
def available():
    """True when the kernel is built for this machine and registered with XLA:CPU."""
    return register_targets("adam_native.cc", {_TARGET: "MinikerasAdamUpdate", _DECAY_TARGET: "MinikerasAdamWUpdate"})


def supported(shape, dtype):
    """Whether the kernel updates a variable of this (concrete) shape and dtype on this backend."""
    return (tuning.NATIVE_KERNELS and jax.default_backend() == "cpu" and jnp.dtype(dtype) == jnp.float32
            and all(type(d) is int for d in shape))


def update(variable, m, v, gradient, alpha, beta_1, beta_2, epsilon, weight_decay=None, learning_rate=None):
    """``(variable', m', v')`` of one Adam step (arrays of one shape, float32; ``alpha`` the step's
    bias-corrected learning rate, a float32 scalar; ``beta_1``, ``beta_2``, ``epsilon`` Python
    floats): ``m' = m + (g - m)(1 - beta_1)``, ``v' = v + (g^2 - v)(1 - beta_2)``,
    ``variable' = variable - m' alpha / (sqrt(v') + epsilon)``.

    With ``weight_decay`` (a Python float) and ``learning_rate`` (a float32 scalar), the variable
    is first decayed as the optimizers' decoupled weight decay does it,
    ``variable - variable * weight_decay * learning_rate``, with its bits."""
    size = int(np.prod(variable.shape))
    threads = usable_cpus() if size >= tuning.ADAM_NATIVE_THREAD_ELEMENTS else 1
    out = jax.ShapeDtypeStruct(variable.shape, jnp.float32)
    hyper = dict(one_minus_beta_1=np.float32(1 - beta_1), one_minus_beta_2=np.float32(1 - beta_2),
                 epsilon=np.float32(epsilon), threads=np.int64(threads))
    scalar = jnp.asarray(alpha, jnp.float32).reshape(())
    if weight_decay is None:
        call = jax.ffi.ffi_call(_TARGET, (out, out, out), input_output_aliases={0: 0, 1: 1, 2: 2},
                                vmap_method="sequential")
        return call(variable, m, v, gradient, scalar, **hyper)
    # the variable in place too (DECAYED_VARIABLE_IN_PLACE): compiled steps donate their state
    # (programs.donation), so its buffer is free to overwrite; without the alias the new value
    # goes to a temporary that XLA then copies into the donated buffer or a scan's carry. Where
    # the variable is not donated (an eager apply), XLA copies it into the output first instead
    aliases = {0: 0, 1: 1, 2: 2} if DECAYED_VARIABLE_IN_PLACE else {1: 1, 2: 2}
    call = jax.ffi.ffi_call(_DECAY_TARGET, (out, out, out), input_output_aliases=aliases,
                            vmap_method="sequential")
    return call(variable, m, v, gradient, scalar, jnp.asarray(learning_rate, jnp.float32).reshape(()),
                weight_decay=np.float32(weight_decay), **hyper)
