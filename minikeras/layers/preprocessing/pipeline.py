"""Keras 3's ``Pipeline``: layers applied one after the other, as a plain layer (not a
``Model``), so an augmentation pipeline maps over a Dataset or sits inside a model."""
from minikeras.layers.base import Layer
from minikeras.saving.registry import deserialize_keras_object, serialize_keras_object


class Pipeline(Layer):
    """Applies ``layers`` in order; a ``training`` flag given to the call goes to each.

    Args:
      layers: the layers, in order (Keras 3's image dicts ``{"images", "labels"}`` pass
        through layers that take them).
      name: the layer's name.

    >>> augment = mk.layers.Pipeline([mk.layers.RandomFlip(), mk.layers.RandomShear(0.2)])
    >>> augment(np.zeros((2, 8, 8, 3))).shape
    (2, 8, 8, 3)
    """

    def __init__(self, layers, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        layers = list(layers) if isinstance(layers, (list, tuple)) else layers
        if not isinstance(layers, list) or not all(isinstance(layer, Layer) for layer in layers):
            raise ValueError(f"Pipeline: `layers` should be a list of layers. Received: layers={layers!r}")
        self.layers = layers  # the attribute's name is their group in a weights file, as Keras 3 files them

    def call(self, inputs, training=None):
        for layer in self.layers:
            inputs = layer(inputs, training=training)
        return inputs

    def compute_output_shape(self, input_shape):
        for layer in self.layers:
            input_shape = layer.compute_output_shape(input_shape)
        return input_shape

    def get_config(self):
        """Keras 3's: the layers and the name only."""
        return {"layers": [serialize_keras_object(layer) for layer in self.layers], "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        layers = config.get("layers")
        if not isinstance(layers, (list, tuple)):
            raise ValueError("`Pipeline` config must contain a `layers` key mapping to a list of serialized layers. "
                             f"Received config with layers={layers}.")
        config = dict(config, layers=[deserialize_keras_object(layer, custom_objects=custom_objects)
                                      for layer in layers])
        return cls(**config)
