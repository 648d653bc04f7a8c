"""SpatialDropout1D, SpatialDropout2D, SpatialDropout3D: dropout of whole feature maps."""
from minikeras.layers.base import Layer
from minikeras.layers.convolutional import conv_args as ca
from minikeras.ops.nn import dropout


def checked_rate(rate):
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
        raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                         f"Received: rate={rate}")
    return float(rate)


class BaseSpatialDropout(Layer):
    """With ``training=True`` each (example, channel) feature map is zeroed with probability
    ``rate`` and the rest scaled by ``1 / (1 - rate)``; the identity otherwise.

    Args:
      rate: the drop probability, in [0, 1].
      data_format: 'channels_last' or 'channels_first' (SpatialDropout1D: channels last).
      seed: an int mixed into each draw's key.
    """

    rank = None

    def __init__(self, rate, data_format=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = checked_rate(rate)
        self.seed = seed
        self.data_format = ca.standardize_data_format(data_format) if self.rank > 1 else "channels_last"
        self.input_ndim = self.rank + 2
        self._build_at_init()

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            return inputs * 0.0
        shape = [1] * inputs.ndim
        shape[0] = inputs.shape[0]
        channel_axis = -1 if self.data_format == "channels_last" else 1
        shape[channel_axis] = inputs.shape[channel_axis]
        return dropout(inputs, self.rate, noise_shape=tuple(shape), seed=self.seed)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = {**super().get_config(), "rate": self.rate, "seed": self.seed}
        config.pop("trainable", None)  # Keras 3's spatial dropouts leave it out
        if self.rank > 1:
            config["data_format"] = self.data_format
        return config


class SpatialDropout1D(BaseSpatialDropout):
    """Drops whole channels of (batch, steps, channels) inputs while training (see ``BaseSpatialDropout``)."""

    rank = 1

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(rate, seed=seed, **kwargs)


class SpatialDropout2D(BaseSpatialDropout):
    """Drops whole feature maps of images while training (see ``BaseSpatialDropout``)."""

    rank = 2


class SpatialDropout3D(BaseSpatialDropout):
    """Drops whole feature maps of volumes while training (see ``BaseSpatialDropout``)."""

    rank = 3
