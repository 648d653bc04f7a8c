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

Not here: ``set_epsilon`` (minikeras's losses and metrics use the constant 1e-7),
``set_backend`` (there is one backend), the traceback filtering switch on
(minikeras never filters tracebacks: ``disable_traceback_filtering`` has nothing to undo),
the flash-attention switches.
"""
from minikeras.backend import (  # noqa: F401
    epsilon,
    floatx,
    image_data_format,
    max_epochs,
    max_steps_per_epoch,
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


def is_nnx_enabled():
    """False: minikeras layers are not Flax NNX modules."""
    return False
