"""Keras 3's ``RandomErasing``: a random rectangle of each image (with a drawn probability)
replaced by noise or a fill value."""
import jax
import jax.numpy as jnp

from minikeras.layers.preprocessing.image_augment_base import AugmentationLayer, probability_factor
from minikeras.layers.preprocessing.image_base import symmetric_factor, uniform
from minikeras.layers.preprocessing.image_blur import clip_to_range
from minikeras.ops.math import where
from minikeras.ops.random import next_key
from minikeras.tensor import Tensor


def box_masks(shape, x0, x1, y0, y1):
    """(batch, height, width, channels) booleans: pixel (y, x) with x0 <= x < x1, y0 <= y < y1."""
    batch, height, width, channels = shape
    y = jnp.arange(height, dtype=jnp.float32)[None, :, None, None]
    x = jnp.arange(width, dtype=jnp.float32)[None, None, :, None]
    inside = ((x >= x0[:, None, None, None]) & (x < x1[:, None, None, None]) & (y >= y0[:, None, None, None])
              & (y < y1[:, None, None, None]))
    return jnp.broadcast_to(inside, (batch, height, width, channels))


def crop_bounds(seed, batch, length, ratio):
    """Keras 3's crop along one axis: ``ratio * length`` long, at a uniform start."""
    crop = ratio * length
    start = uniform(seed, (batch,), 0.0, 1.0) * (length - crop)
    return start, start + crop


class RandomErasing(AugmentationLayer):
    """Erases a random rectangle of each image, with probability drawn in ``factor``.

    Args:
      factor: the probability of erasing, a number f in [0, 1] (drawn in [0, f]) or a pair.
      scale: the rectangle's sides are sqrt(s) of the image's, s drawn in this range per side
        (a number f gives [0, f]); (0.02, 0.33) by default.
      fill_value: None (default: normal noise times ``value_range[1]``), a number, or three
        numbers (one per channel); clipped to ``value_range``.
      value_range: the images' range, (0, 255) by default.
      data_format: 'channels_last' (default) or 'channels_first'.
      seed: folded into the draws from ``mk.random``'s generator.
    """

    keeps_boxes = True  # moves no pixel: bounding boxes pass unchanged, as in Keras 3

    def __init__(self, factor=1.0, scale=(0.02, 0.33), fill_value=None, value_range=(0, 255), seed=None,
                 data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = probability_factor(factor, "RandomErasing")
        self.scale = symmetric_factor(scale, (0, 1), "RandomErasing: The `scale` argument should be a number (or a "
                                                     "list of two numbers) in the range [0, 1]. ")
        if fill_value is not None and not (
                isinstance(fill_value, (int, float)) and not isinstance(fill_value, bool)
                or isinstance(fill_value, (tuple, list)) and len(fill_value) == 3):
            raise ValueError("RandomErasing: The `fill_value` argument should be a number (or a list of three "
                             f"numbers). Received: fill_value={fill_value}")
        self.fill_value = fill_value
        self.value_range = value_range
        self.seed = seed

    def get_random_transformation(self, shape):
        batch, height, width = shape[:3]
        sides = jnp.sqrt(uniform(self.seed, (batch, 2), *self.scale))
        x0, x1 = crop_bounds(self.seed, batch, width, sides[:, 0])
        y0, y1 = crop_bounds(self.seed, batch, height, sides[:, 1])
        probability = uniform(self.seed, (batch,), *self.factor)
        apply = uniform(self.seed, (batch,), 0.0, 1.0) < probability
        if self.fill_value is None:
            fill = jax.random.normal(next_key(self.seed), shape, jnp.float32) * self.value_range[1]
        else:
            fill = jnp.broadcast_to(jnp.asarray(self.fill_value, jnp.float32), shape)
        return {"apply_erasing": apply, "batch_masks": box_masks(shape, x0, x1, y0, y1), "fill_value": fill}

    def transform_images(self, images, transformation):
        fill = clip_to_range(Tensor(jnp.asarray(transformation["fill_value"], images.dtype)), self.value_range)
        erase = jnp.asarray(transformation["batch_masks"]) & jnp.asarray(
            transformation["apply_erasing"])[:, None, None, None]
        return where(Tensor(erase), fill, images)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "scale": self.scale, "fill_value": self.fill_value,
                "value_range": self.value_range, "seed": self.seed}
