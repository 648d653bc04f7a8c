"""``keras.layers.serialize`` / ``deserialize``: a layer as Keras 3's config dict and back."""
from minikeras.saving import keras_config
from minikeras.saving.registry import deserialize_keras_object, serialize_keras_object


def serialize(layer):
    """``{"module", "class_name", "config", "registered_name"}`` for ``layer``."""
    return serialize_keras_object(layer)


def deserialize(config, custom_objects=None):
    """The layer ``config`` describes: minikeras's dict, or Keras 3's (its ``keras.layers``
    module names and keys are read as a ``.keras`` file's are); a dict without a module is taken
    to name a ``keras.layers`` class, as Keras 3 reads it."""
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"keras.layers.deserialize expects a dict with 'class_name' and 'config', received {config!r}")
    spec = {"module": "keras.layers", "registered_name": None, **config}
    spec = keras_config.from_keras(spec, custom_objects)
    return deserialize_keras_object(spec, custom_objects, what="layer")
