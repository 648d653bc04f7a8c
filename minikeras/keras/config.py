"""``keras.config``: Keras 3's global settings.

    from minikeras import keras
    keras.config.set_image_data_format("channels_first")
    keras.config.set_max_epochs(1)          # a quick debugging run of a whole script

``backend()`` is ``"tensorflow"``: minikeras computes on JAX, but what it offers a program is
TensorFlow 2's programming model (``GradientTape``, ``tf.function``-style ``mk.function``,
``tf.data``-style ``mk.data``, ``import minikeras as tf``), not JAX's stateless one (no
``stateless_call``, its Tensors are not ``jax.Array``s). Keras 3 code that branches on the
backend takes the TensorFlow branch, whose calls minikeras implements.

``dtype_policy``/``set_dtype_policy`` are ``mk.mixed_precision``'s global policy.

``set_backend`` accepts only "tensorflow" (there is one backend). minikeras never filters
tracebacks, so ``enable_traceback_filtering`` says so once and changes nothing. There is no flash
attention kernel: ``disable_flash_attention`` is what minikeras does anyway, and
``enable_flash_attention`` refuses.

``epsilon``/``set_epsilon``: the fuzz factor (1e-7 by default) that the losses, metrics, ops
(``keras.ops.normalize``, the cross-entropies...), constraints and layers that use Keras's
epsilon read when called, as Keras 3 does (not the optimizers' or layers' own ``epsilon``
arguments). A compiled program (an ``mk.function`` trace, ``fit``'s train step made before the
change) keeps the epsilon it was traced with, as Keras's jitted functions do: ``compile`` again
to use a new one.
"""
import warnings

from minikeras.backend import (  # noqa: F401
    epsilon,
    floatx,
    image_data_format,
    max_epochs,
    max_steps_per_epoch,
    set_epsilon,
    set_floatx,
    set_image_data_format,
    set_max_epochs,
    set_max_steps_per_epoch,
)
from minikeras.callbacks.interactive_logging import (  # noqa: F401
    disable_interactive_logging,
    enable_interactive_logging,
    is_interactive_logging_enabled,
)
from minikeras.dtype_policies import (
    global_policy as dtype_policy,  # noqa: F401
    set_global_policy as set_dtype_policy,  # noqa: F401
)
from minikeras.saving.safe_mode import enable_unsafe_deserialization  # noqa: F401

BACKEND = "tensorflow"


def backend():
    """``"tensorflow"``: the Keras backend whose programming model minikeras offers (see above)."""
    return BACKEND


def disable_traceback_filtering():
    """Keras trims its own frames from tracebacks unless this is called; minikeras never trims
    them, so there is nothing to turn off."""


def is_traceback_filtering_enabled():
    """False: minikeras shows every frame of a traceback."""
    return False


def enable_traceback_filtering():
    """Keras's switch to trim its frames from tracebacks: minikeras shows every frame (warns once)."""
    warnings.warn("keras.config.enable_traceback_filtering: minikeras does not filter tracebacks; every frame is "
                  "shown", stacklevel=2)


def set_backend(backend):
    """Keras's backend switch: minikeras has one backend, 'tensorflow' (see above); another name
    is refused."""
    if backend != BACKEND:
        raise ValueError(f"keras.config.set_backend: minikeras has one backend, {BACKEND!r} (its programming model "
                         f"on JAX arrays); received backend={backend!r}")


_flash_attention = None


def enable_flash_attention():
    """Refused: minikeras has no flash attention kernel (its attention is XLA's fused softmax)."""
    raise NotImplementedError("keras.config.enable_flash_attention: minikeras has no flash attention kernel; its "
                              "attention layers compute the same values with XLA's fused softmax")


def disable_flash_attention():
    """Flash attention off, which is how minikeras computes attention anyway."""
    global _flash_attention
    _flash_attention = False


def is_flash_attention_enabled():
    """None until ``disable_flash_attention`` (then False), as Keras 3's."""
    return _flash_attention


def is_nnx_enabled():
    """False: minikeras layers are not Flax NNX modules."""
    return False
