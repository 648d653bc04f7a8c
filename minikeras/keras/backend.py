"""``tf.keras.backend``: the session and float settings Keras programs call."""
from minikeras.backend import floatx, set_floatx  # noqa: F401
from minikeras.module import clear_session  # noqa: F401

_EPSILON = 1e-7


def epsilon():
    """The fuzz factor Keras adds to avoid dividing by zero (1e-7)."""
    return _EPSILON


def image_data_format():
    """'channels_last': the only layout minikeras's image layers use by default."""
    return "channels_last"
