"""Wrapper: the base of layers that take another layer and augment it (Keras 3's)."""
from minikeras.layers.base import Layer
from minikeras.saving.registry import deserialize_keras_object, register_builtin, serialize_keras_object


@register_builtin("minikeras.layers")
class Wrapper(Layer):
    """Base class of layers that wrap another ``layer`` (``self.layer``), as Keras 3's
    ``layers.Wrapper``: ``build`` builds the wrapped layer, and the config holds it, serialized.
    Subclasses write ``call``; ``TimeDistributed`` is one.

    >>> class Twice(mk.layers.Wrapper):
    ...     def call(self, inputs):
    ...         return self.layer(self.layer(inputs))
    >>> Twice(mk.layers.Dense(3))(mk.ones((2, 3))).shape
    (2, 3)
    """

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Layer {layer} supplied to Wrapper isn't a supported layer type. Please ensure wrapped "
                             "layer is a valid Keras layer.")
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape=None):
        if not self.layer.built:
            self.layer.build(input_shape)
            self.layer.built = True
        self.built = True

    def get_config(self):
        return {**super().get_config(), "layer": serialize_keras_object(self.layer)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        layer = deserialize_keras_object(config.pop("layer"), custom_objects=custom_objects)
        return cls(layer, **config)
