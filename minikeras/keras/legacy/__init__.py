"""``keras.legacy``: what Keras 3 keeps of Keras 2 under this name, ``keras.legacy.saving``'s
``serialize_keras_object``/``deserialize_keras_object`` (Keras 2's ``{"class_name", "config"}`` form)."""
from minikeras.keras.legacy import saving  # noqa: F401
