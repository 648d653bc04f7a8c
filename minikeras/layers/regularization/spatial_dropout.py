"""SpatialDropout2D: dropout of whole feature maps."""
from minikeras.layers.base import Layer
from minikeras.ops.nn import dropout


class SpatialDropout2D(Layer):
    """Dropout of whole feature maps: with ``training=True`` each (example, channel) map of a
    (batch, h, w, channels) input is zeroed with probability ``rate`` and the rest scaled by
    ``1 / (1 - rate)``; the identity otherwise."""

    input_ndim = 4

    def __init__(self, rate, data_format=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                             f"Received: rate={rate}")
        if data_format not in (None, "channels_last"):
            raise ValueError(f"SpatialDropout2D supports data_format='channels_last' only, received {data_format!r}")
        self.rate = float(rate)
        self.seed = seed

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            return inputs * 0.0
        return dropout(inputs, self.rate, noise_shape=(inputs.shape[0], 1, 1, inputs.shape[3]), seed=self.seed)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed, "data_format": "channels_last"}
