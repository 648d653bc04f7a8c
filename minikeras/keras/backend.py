"""``keras.backend`` (and ``tf.keras.backend``): the backend name, float and layout settings,
and the session.

``backend()`` is ``"tensorflow"``, why: ``minikeras.keras.config``.
"""
import jax
import jax.numpy as jnp
import numpy as np

from minikeras.backend import (  # noqa: F401
    epsilon,
    floatx,
    image_data_format,
    set_epsilon,
    set_floatx,
    set_image_data_format,
)
from minikeras.dtypes import standardize_dtype
from minikeras.keras.config import backend  # noqa: F401
from minikeras.module import clear_session, unique_name
from minikeras.symbolic import is_keras_tensor  # noqa: F401


def is_float_dtype(dtype):
    """Whether ``dtype`` is a floating dtype (bfloat16 included)."""
    return standardize_dtype(dtype) in ("float16", "bfloat16", "float32", "float64")


def is_int_dtype(dtype):
    """Whether ``dtype`` is a signed or unsigned integer dtype."""
    return standardize_dtype(dtype).startswith(("int", "uint"))


def result_type(*dtypes):
    """The dtype Keras 3 (on JAX) gives an op on values of ``dtypes``: NumPy-style promotion with
    Python's ``int``/``float``/``bool`` as weak types, 64-bit results narrowed unless
    ``mk.config.enable_x64``; ``floatx()`` for no argument.

    >>> result_type("int8", "uint8")   # 'int16'
    >>> result_type(float, "int32")    # 'float32'
    """
    if not dtypes:
        return floatx().name
    given = [d if d in (int, float, bool) else standardize_dtype(d) for d in dtypes]
    return np.dtype(jax.dtypes.canonicalize_dtype(jnp.result_type(*given))).name


def get_uid(prefix=""):
    """1, 2, 3, ... for each call with the same ``prefix`` in this session (reset by ``clear_session``)."""
    name = unique_name(f"__uid__{prefix}")
    return int(name.rsplit("_", 1)[1]) + 1 if name != f"__uid__{prefix}" else 1


__all__ = ["backend", "clear_session", "epsilon", "floatx", "get_uid", "image_data_format", "is_float_dtype",
           "is_int_dtype", "is_keras_tensor", "result_type", "set_epsilon", "set_floatx", "set_image_data_format",
           "standardize_dtype"]
