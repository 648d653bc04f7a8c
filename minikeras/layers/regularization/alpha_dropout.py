"""AlphaDropout: dropout that keeps SELU's self-normalising mean and variance."""
from minikeras.layers.base import Layer
from minikeras.layers.regularization.spatial_dropout import checked_rate
from minikeras.ops.math import cast
from minikeras.ops.random import uniform

ALPHA = 1.6732632423543772848170429916717
SCALE = 1.0507009873554804934193349852946


class AlphaDropout(Layer):
    """With ``training=True``, each element (or each slice of ``noise_shape``) is kept with
    probability ``1 - rate`` and otherwise set to SELU's saturation value ``-ALPHA * SCALE``,
    then the result is ``a * x + b`` with ``a``, ``b`` keeping zero mean and unit variance
    (Klambauer et al., 2017); the identity otherwise.

    Args:
      rate: the drop probability, in [0, 1].
      noise_shape: the mask's shape (None entries: the input's), default the input's.
      seed: an int mixed into each draw's key.
    """

    supports_masking = True

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = checked_rate(rate)
        self.noise_shape = noise_shape
        self.seed = seed
        self._build_at_init()

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        shape = tuple(inputs.shape) if self.noise_shape is None else tuple(
            n if m is None else int(m) for n, m in zip(inputs.shape, self.noise_shape))
        kept = cast(uniform(shape, dtype=inputs.dtype, seed=self.seed) >= self.rate, inputs.dtype)
        alpha_p = -ALPHA * SCALE
        a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        return (inputs * kept + alpha_p * (1.0 - kept)) * a + b

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed, "noise_shape": self.noise_shape}
