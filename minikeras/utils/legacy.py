"""``keras.utils.legacy``: Keras 2's object serialization, the same functions as ``keras.legacy.saving``."""
from minikeras.saving.legacy_serialization import deserialize_keras_object, serialize_keras_object  # noqa: F401
