"""``keras.legacy.saving``: Keras 2's object serialization (``minikeras.saving.legacy_serialization``)."""
from minikeras.saving.legacy_serialization import deserialize_keras_object, serialize_keras_object  # noqa: F401
