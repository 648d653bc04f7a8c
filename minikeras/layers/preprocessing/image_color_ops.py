"""Keras 3's colour augmentation layers that work on the 0-255 scale of an image's values:
``Solarization``, ``AutoContrast``, ``Equalization``, ``RandomPosterization``, ``RandomInvert``.

Each random layer draws a transformation named as Keras 3 names it
(``get_random_transformation``) and applies it (``transform_images``) with what Keras 3 on JAX
computes (``color_augment_forwards``, one recorded op each).
"""
import jax
import jax.numpy as jnp

from minikeras.layers.preprocessing import color_augment_forwards as forwards
from minikeras.layers.preprocessing.image_augment_base import AugmentationLayer, jax_image_op
from minikeras.layers.preprocessing.image_base import symmetric_factor, uniform
from minikeras.ops.random import next_key

_VALUE_RANGE_MESSAGE = "The `value_range` argument should be a list of two numbers. "


def checked_value_range(value_range, layer, sort=True):
    """Keras 3's ``value_range``: a list or tuple of two numbers (sorted, as most layers keep it)."""
    if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
        raise ValueError(f"{layer}: {_VALUE_RANGE_MESSAGE}Received: value_range={value_range}")
    return sorted(value_range) if sort else value_range


def bounded_factor(factor, bounds, layer, name="factor"):
    """Keras 3's base ``factor`` in ``bounds``: a number f gives (max(-f, low), f), a pair is sorted."""
    return symmetric_factor(factor, bounds, f"{layer}: The `{name}` argument should be a number (or a list of two "
                                            f"numbers) in the range [{bounds[0]}, {bounds[1]}]. ")


def batch_size(shape):
    return shape[0]


class ColorAugmentationLayer(AugmentationLayer):
    """What the colour layers share: a ``value_range`` and a ``seed``, in their configs."""

    keeps_boxes = True  # moves no pixel: bounding boxes pass unchanged, as in Keras 3

    def get_config(self):
        return {**super().get_config(), "value_range": self.value_range, "seed": self.seed}


def _solarization_factor(factor, name):
    message = (f"Solarization: The `addition_factor` and `threshold_factor` arguments should be a number (or a list "
               f"of two numbers) in the range [0, 1]. Received: {name}={factor}")
    values = factor if isinstance(factor, (tuple, list)) else (0, factor)
    if len(values) != 2 or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1
                               for v in values):
        raise ValueError(message)
    return tuple(sorted(values))


class Solarization(ColorAugmentationLayer):
    """Inverts the values above a random threshold (255 - x on the 0-255 scale), after adding
    a random amount.

    Args:
      addition_factor: a number f in [0, 1] or a pair (lower, upper); as in Keras 3 the
        addition (on the 0-255 scale) is drawn per image in [lower, upper * 255]. Default 0.
      threshold_factor: the same for the threshold: values at or above it are inverted.
        Default 0 (every value is inverted).
      value_range: the images' range, (0, 255) by default.
      seed: folded into the draws from ``mk.random``'s generator.

    >>> mk.layers.Solarization()(np.array([[[10.0, 200.0, 255.0]]])).numpy()
    array([[[245.,  55.,   0.]]], dtype=float32)
    """

    def __init__(self, addition_factor=0.0, threshold_factor=0.0, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(**kwargs)
        self.addition_factor = _solarization_factor(addition_factor, "addition_factor")
        self.threshold_factor = _solarization_factor(threshold_factor, "threshold_factor")
        self.value_range = checked_value_range(value_range, "Solarization")
        self.seed = seed

    def get_random_transformation(self, shape):
        draw_shape = (batch_size(shape), 1, 1, 1)
        return {"additions": uniform(self.seed, draw_shape, self.addition_factor[0], self.addition_factor[1] * 255),
                "thresholds": uniform(self.seed, draw_shape, self.threshold_factor[0],
                                      self.threshold_factor[1] * 255)}

    def transform_images(self, images, transformation):
        return jax_image_op("solarization", forwards.solarize,
                            [images, transformation["additions"], transformation["thresholds"]], constant=(1, 2),
                            value_range=tuple(self.value_range))

    def get_config(self):
        return {**super().get_config(), "addition_factor": self.addition_factor,
                "threshold_factor": self.threshold_factor}


class AutoContrast(AugmentationLayer):
    """Stretches each image's channels from their own (min, max) to the whole ``value_range``.
    As in Keras 3 it works at inference too (``training=False`` does not skip it).

    Args:
      value_range: the images' range, (0, 255) by default.
    """

    keeps_boxes = True  # moves no pixel: bounding boxes pass unchanged, as in Keras 3

    def __init__(self, value_range=(0, 255), **kwargs):
        super().__init__(**kwargs)
        self.value_range = checked_value_range(value_range, "AutoContrast")

    def call(self, inputs, training=None):
        return super().call(inputs, training=True)

    def get_random_transformation(self, shape):
        return None

    def transform_images(self, images, transformation=None):
        return jax_image_op("auto_contrast", forwards.auto_contrast, [images], value_range=tuple(self.value_range))

    def get_config(self):
        return {**super().get_config(), "value_range": self.value_range}


class Equalization(AugmentationLayer):
    """Histogram equalization of each channel, as Keras 3: one histogram per channel over the
    whole batch (of ``bins`` bins on the 0-255 scale), its cumulative counts as a lookup table.

    Args:
      value_range: the images' range, (0, 255) by default.
      bins: the number of histogram bins, 256 by default.
      data_format: 'channels_last' (default) or 'channels_first'.
    """

    keeps_boxes = True  # moves no pixel: bounding boxes pass unchanged, as in Keras 3

    def __init__(self, value_range=(0, 255), bins=256, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        if isinstance(bins, bool) or not isinstance(bins, int) or bins < 2:
            raise ValueError(f"Equalization: `bins` should be an integer of at least 2. Received: bins={bins}")
        self.bins = bins
        self.value_range = checked_value_range(value_range, "Equalization")

    def get_random_transformation(self, shape):
        return None

    def transform_images(self, images, transformation=None):
        return jax_image_op("equalization", forwards.equalize, [images], value_range=tuple(self.value_range),
                            bins=self.bins)

    def get_config(self):
        return {**super().get_config(), "bins": self.bins, "value_range": self.value_range}


class RandomPosterization(ColorAugmentationLayer):
    """Keeps a random number of the highest bits of each value (as uint8 on the 0-255 scale).

    Args:
      factor: the bits kept, a number n in [1, 8] (drawn in [1, n)) or a pair (lower, upper)
        (drawn in [lower, upper)); a pair of equal numbers keeps exactly that many. As in
        Keras 3 the upper end is never drawn.
      value_range: the images' range, (0, 255) by default.
      data_format: 'channels_last' (default) or 'channels_first'.
      seed: folded into the draws from ``mk.random``'s generator.
    """

    MAX_BITS = 8

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = bounded_factor(factor, (1, 8), "RandomPosterization")
        self.value_range = checked_value_range(value_range, "RandomPosterization")
        self.seed = seed

    def get_random_transformation(self, shape):
        if self.factor[0] != self.factor[1]:
            bits = jax.random.randint(next_key(self.seed), (batch_size(shape),), int(self.factor[0]),
                                      int(self.factor[1])).astype(jnp.uint8)
        else:
            bits = jnp.full((batch_size(shape),), int(self.factor[0]), jnp.uint8)
        return {"shift_factor": self.MAX_BITS - bits}

    def transform_images(self, images, transformation):
        return jax_image_op("random_posterization", forwards.posterize, [images, transformation["shift_factor"]],
                            constant=(1,), value_range=tuple(self.value_range))

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


class RandomInvert(ColorAugmentationLayer):
    """Inverts images (``value_range[1] - x``) with a probability drawn in ``factor``.

    Args:
      factor: the probability, a number f in [0, 1] (drawn in [0, f]) or a pair; 1 by default.
      value_range: the images' range, (0, 255) by default (kept as given, as Keras 3 does).
      data_format: 'channels_last' (default) or 'channels_first'.
      seed: folded into the draws from ``mk.random``'s generator.
    """

    def __init__(self, factor=1.0, value_range=(0, 255), seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = bounded_factor(factor, (0, 1), "RandomInvert")
        self.value_range = checked_value_range(value_range, "RandomInvert", sort=False)
        self.seed = seed

    def get_random_transformation(self, shape):
        probability = uniform(self.seed, (batch_size(shape),), *self.factor)
        return {"apply_inversion": uniform(self.seed, (batch_size(shape),), 0.0, 1.0) < probability}

    def transform_images(self, images, transformation):
        return jax_image_op("random_invert", forwards.invert, [images, transformation["apply_inversion"]],
                            top=float(self.value_range[1]))

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}
