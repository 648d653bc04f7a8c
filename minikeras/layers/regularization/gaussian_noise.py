"""GaussianNoise: zero-centred normal noise added while training."""
from minikeras.layers.base import Layer
from minikeras.ops.random import normal


class GaussianNoise(Layer):
    """``inputs + N(0, stddev)`` with ``training=True`` (a fresh draw per call, also compiled); the
    identity otherwise.

    Args:
      stddev: the noise's standard deviation, in [0, 1] (as Keras checks).
      seed: an int mixed into each draw's key.
    """

    supports_masking = True

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(stddev, bool) or not isinstance(stddev, (int, float)) or not 0 <= stddev <= 1:
            raise ValueError(f"Invalid value received for argument `stddev`. Expected a float value between 0 and 1. "
                             f"Received: stddev={stddev}")
        self.stddev = stddev
        self.seed = seed
        self._build_at_init()

    def call(self, inputs, training=None):
        if not training or self.stddev == 0:
            return inputs
        return inputs + normal(tuple(inputs.shape), stddev=float(self.stddev), dtype=inputs.dtype, seed=self.seed)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}
