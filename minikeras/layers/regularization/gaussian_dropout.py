"""GaussianDropout: multiplicative normal noise of mean 1 while training."""
import math

from minikeras.layers.base import Layer
from minikeras.layers.regularization.spatial_dropout import checked_rate
from minikeras.ops.random import normal


class GaussianDropout(Layer):
    """``inputs * N(1, sqrt(rate / (1 - rate)))`` with ``training=True``; the identity otherwise.

    Args:
      rate: the equivalent dropout rate, in [0, 1].
      seed: an int mixed into each draw's key.
    """

    supports_masking = True

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = checked_rate(rate)
        self.seed = seed
        self._build_at_init()

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        stddev = math.sqrt(self.rate / (1.0 - self.rate))
        return inputs * normal(tuple(inputs.shape), mean=1.0, stddev=stddev, dtype=inputs.dtype, seed=self.seed)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}
