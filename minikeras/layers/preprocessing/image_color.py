"""Keras 3's random colour augmentations: ``RandomContrast`` and ``RandomBrightness`` (one
factor per image, from ``mk.random``'s generator, only when training)."""
from minikeras.layers.preprocessing.image_base import RandomImageLayer, symmetric_factor, uniform
from minikeras.ops.math import maximum, minimum
from minikeras.ops.reduce import reduce_mean
from minikeras.tensor import Tensor

_FACTOR_MESSAGE = "The `factor` argument should be a number (or a list of two numbers) in the range [{}, {}]. "


def _value_range(value_range, layer):
    if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
        raise ValueError(f"{layer}: the `value_range` argument should be a list of two numbers. "
                         f"Received: value_range={value_range}")
    return sorted(value_range)


def _clip(images, value_range):
    return minimum(maximum(images, float(value_range[0])), float(value_range[1]))


class RandomContrast(RandomImageLayer):
    """Scales each image's deviation from its per-channel mean by a random factor, then clips
    to ``value_range``.

    Args:
      factor: a number f in [0, 1] or a pair (lower, upper); the contrast factor is drawn in
        [1 - lower, 1 + upper]. As in Keras 3.15, a number f gives (lower, upper) = (0, f).
      value_range: the images' range, (0, 255) by default.
      seed: folded into the draws from ``mk.random``'s generator.
    """

    keeps_boxes = True  # moves no pixel: bounding boxes pass unchanged, as in Keras 3

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(**kwargs)
        self.factor = symmetric_factor(factor, (0, 1), _FACTOR_MESSAGE.format(0, 1))
        self.value_range = tuple(_value_range(value_range, "RandomContrast"))
        self.seed = seed

    def transform(self, images, training):
        if not training:
            return images
        factor = Tensor(uniform(self.seed, (images.shape[0], 1, 1, 1), 1.0 - self.factor[0], 1.0 + self.factor[1])
                        .astype(images.dtype.name))
        mean = reduce_mean(images, axis=(1, 2), keepdims=True)
        return _clip((images - mean) * factor + mean, self.value_range)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range, "seed": self.seed}


class RandomBrightness(RandomImageLayer):
    """Adds a random delta to each image, then clips to ``value_range``.

    Args:
      factor: a number f in [-1, 1] (deltas in [-f, f]) or a pair (lower, upper), as fractions
        of the value range: the delta is ``draw * (value_range[1] - value_range[0])``.
      value_range: the images' range, (0, 255) by default.
      seed: folded into the draws from ``mk.random``'s generator.
    """

    keeps_boxes = True  # moves no pixel: bounding boxes pass unchanged, as in Keras 3

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(**kwargs)
        self.factor = symmetric_factor(factor, (-1, 1), _FACTOR_MESSAGE.format(-1, 1))
        self.value_range = _value_range(value_range, "RandomBrightness")
        self.seed = seed

    def transform(self, images, training):
        if not training:
            return images
        span = float(self.value_range[1] - self.value_range[0])
        delta = Tensor((uniform(self.seed, (images.shape[0], 1, 1, 1), *self.factor) * span).astype(images.dtype.name))
        return _clip(images + delta, self.value_range)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range, "seed": self.seed}
