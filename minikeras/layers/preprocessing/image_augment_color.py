"""Keras 3's random colour augmentations of RGB images: ``RandomColorDegeneration``,
``RandomGrayscale``, ``RandomHue``, ``RandomSaturation``, ``RandomSharpness``.

Each draws a transformation named as Keras 3 names it (``get_random_transformation``) and
applies it (``transform_images``) with what Keras 3 on JAX computes (``color_augment_forwards``,
one recorded op each).
"""
import jax.numpy as jnp

from minikeras.backend import epsilon
from minikeras.layers.preprocessing import color_augment_forwards as forwards
from minikeras.layers.preprocessing.image_augment_base import AugmentationLayer, jax_image_op
from minikeras.layers.preprocessing.image_base import uniform
from minikeras.layers.preprocessing.image_color_ops import (
    ColorAugmentationLayer,
    batch_size,
    bounded_factor,
    checked_value_range,
)


class RgbLayer(ColorAugmentationLayer):
    """A colour layer of RGB images: other channel counts are refused, naming the layer."""

    def transform_images(self, images, transformation):
        if images.shape[-1] != 3:
            raise ValueError(f"{type(self).__name__} '{self.name}' expects RGB images with 3 channels; received "
                             f"images of shape {tuple(images.shape)} (channels last) with {images.shape[-1]}")
        return self.transform_rgb(images, transformation)


class RandomColorDegeneration(RgbLayer):
    """Moves each image towards its grayscale by a random amount (colours look duller).

    Args:
      factor: a number f in [-1, 1] (amounts drawn in [-f, f], as Keras 3's base factor; a
        negative amount moves away from gray) or a pair (lower, upper); 0 keeps the image,
        1 makes it gray.
      value_range: the images' range, (0, 255) by default; the output is clipped to it.
      data_format: 'channels_last' (default) or 'channels_first'.
      seed: folded into the draws from ``mk.random``'s generator.
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = bounded_factor(factor, (-1, 1), "RandomColorDegeneration")
        self.value_range = checked_value_range(value_range, "RandomColorDegeneration")
        self.seed = seed

    def get_random_transformation(self, shape):
        return {"factor": uniform(self.seed, (batch_size(shape), 1, 1, 1), *self.factor)}

    def transform_rgb(self, images, transformation):
        return jax_image_op("random_color_degeneration", forwards.degenerate_color,
                            [images, transformation["factor"]], constant=(1,), value_range=tuple(self.value_range))

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


class RandomGrayscale(AugmentationLayer):
    """Turns images to grayscale (the luma repeated over the channels) with probability
    ``factor``. As in Keras 3 its transformation is the boolean array (batch, 1, 1, 1) itself.

    Args:
      factor: the probability of an image turning gray, in [0, 1]; 0.5 by default.
      data_format: 'channels_last' (default) or 'channels_first'.
      seed: folded into the draws from ``mk.random``'s generator.
    """

    keeps_boxes = True  # moves no pixel: bounding boxes pass unchanged, as in Keras 3

    def __init__(self, factor=0.5, data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 0 <= factor <= 1:
            raise ValueError(f"RandomGrayscale: `factor` should be between 0 and 1. Received: factor={factor}")
        self.factor = factor
        self.seed = seed

    def get_random_transformation(self, shape):
        return (uniform(self.seed, (batch_size(shape),), 0.0, 1.0) < self.factor)[:, None, None, None]

    def transform_images(self, images, transformation):
        if images.shape[-1] not in (1, 3):
            raise ValueError(f"RandomGrayscale '{self.name}' expects images with 3 (RGB) or 1 channels; received "
                             f"images of shape {tuple(images.shape)} (channels last)")
        return jax_image_op("random_grayscale", forwards.to_grayscale_where, [images, transformation])

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "seed": self.seed}


class RandomHue(RgbLayer):
    """Shifts each image's hue by a random amount, in either direction.

    Args:
      factor: a number f in [0, 1] or a pair (lower, upper) in [0, 1]: the shift is half a
        draw in [lower, upper] of the hue circle, its sign random (f = 1: up to half a turn).
      value_range: the images' range, (0, 255) by default (kept as given, as Keras 3 does).
      data_format: 'channels_last' (default) or 'channels_first'.
      seed: folded into the draws from ``mk.random``'s generator.
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = bounded_factor(factor, (0, 1), "RandomHue")
        self.value_range = checked_value_range(value_range, "RandomHue", sort=False)
        self.seed = seed

    def get_random_transformation(self, shape):
        batch = batch_size(shape)
        sign = jnp.where(uniform(self.seed, (batch,), 0.0, 1.0) > 0.5, -1.0, 1.0)
        return {"factor": sign * uniform(self.seed, (batch,), *self.factor) * 0.5}

    def transform_rgb(self, images, transformation):
        return jax_image_op("random_hue", forwards.shift_hue, [images, transformation["factor"]], constant=(1,),
                            value_range=tuple(self.value_range))

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


class RandomSaturation(RgbLayer):
    """Scales each image's saturation by a random amount.

    Args:
      factor: a number f in [-1, 1] (drawn in [-f, f], Keras 3's base factor) or a pair; a
        draw d scales the saturation by d / (1 - d): 0.5 keeps it, 0 and below make the image
        gray, 1 saturates it fully.
      value_range: the images' range, (0, 255) by default; as in Keras 3 the scaled saturation
        is clipped to it.
      data_format: 'channels_last' (default) or 'channels_first'.
      seed: folded into the draws from ``mk.random``'s generator.
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = bounded_factor(factor, (-1, 1), "RandomSaturation")
        self.value_range = checked_value_range(value_range, "RandomSaturation")
        self.seed = seed

    def get_random_transformation(self, shape):
        draw = uniform(self.seed, (batch_size(shape),), *self.factor)
        return {"factor": draw / (1 - draw + epsilon())}

    def transform_rgb(self, images, transformation):
        return jax_image_op("random_saturation", forwards.scale_saturation, [images, transformation["factor"]],
                            constant=(1,), value_range=tuple(self.value_range))

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


class RandomSharpness(ColorAugmentationLayer):
    """Sharpens or blurs each image by a random amount: a draw d blends the image with its
    3x3 smoothing by ``1 - 2 d`` (d = 0.5 keeps it; below blurs, above sharpens).

    Args:
      factor: a number f in [0, 1] (drawn in [0, f]) or a pair (lower, upper) in [0, 1].
      value_range: the images' range, (0, 255) by default; the output is clipped to it.
      data_format: 'channels_last' (default) or 'channels_first'.
      seed: folded into the draws from ``mk.random``'s generator.
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = bounded_factor(factor, (0, 1), "RandomSharpness")
        self.value_range = checked_value_range(value_range, "RandomSharpness")
        self.seed = seed

    def get_random_transformation(self, shape):
        return {"factor": uniform(self.seed, (batch_size(shape),), *self.factor)}

    def transform_images(self, images, transformation):
        return jax_image_op("random_sharpness", forwards.sharpen, [images, transformation["factor"]], constant=(1,),
                            value_range=tuple(self.value_range))

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}
