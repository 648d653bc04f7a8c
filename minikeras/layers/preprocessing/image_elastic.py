"""Keras 3's ``RandomElasticTransform``: images displaced by a smooth random field (normal noise
blurred by a Gaussian), as Keras 3 on JAX's ``elastic_transform`` computes it, with a drawn
probability each, then clipped to ``value_range``."""
import jax
import jax.numpy as jnp
from jax import lax

from minikeras.image import keras_forwards
from minikeras.image.transform import INTERPOLATIONS
from minikeras.layers.preprocessing.image_augment_base import AugmentationLayer, jax_image_op, probability_factor
from minikeras.layers.preprocessing.image_base import symmetric_factor, uniform
from minikeras.layers.preprocessing.image_blur import clip_to_range
from minikeras.ops.math import where
from minikeras.ops.random import next_key
from minikeras.tensor import Tensor

FILL_MODES = ("reflect", "wrap", "constant", "nearest", "mirror")


def field_parameters(height, width, distortion):
    """Keras 3's (alpha, sigma) for a distortion factor: 10% of the longer side, 5% of the shorter."""
    return max(height, width) * 0.1 * distortion, min(height, width) * 0.05 * distortion


def kernel_size_for(sigma):
    """Keras's Gaussian kernel size for ``sigma``: int(6 sigma), made odd."""
    return int(6 * sigma) | 1


def _gaussian_1d(sigma, largest):
    """Keras's normalized Gaussian of size ``kernel_size_for(sigma)`` (sigma a traced scalar),
    centred in ``largest`` taps with zeros around it: a "same" convolution with it is one with
    Keras's kernel, and the draw need not be known when the program is compiled."""
    x = jnp.arange(largest, dtype=sigma.dtype) - (largest - 1) // 2
    half = (jnp.floor(6 * sigma).astype(jnp.int32) | 1) // 2
    weights = jnp.where(x == 0, 1.0, jnp.exp(-0.5 * (x / sigma) ** 2)) * (jnp.abs(x) <= half)
    return weights / jnp.sum(weights)


def elastic_forward(images, key_data, distortion, *, order, fill_mode, fill_value, largest_kernel):
    """Keras 3 on JAX's elastic transform of a channels-last batch for a distortion factor; one
    normal field drawn from ``key_data`` displaces both axes (Keras draws dx and dy from the
    same seed)."""
    batch, height, width, _ = images.shape
    dtype = images.dtype
    alpha, sigma = field_parameters(height, width, distortion.astype(dtype))
    noise = jax.random.normal(key_data, (batch, height, width), dtype) * sigma
    kernel_1d = _gaussian_1d(sigma, largest_kernel)
    kernel = jnp.outer(kernel_1d, kernel_1d)[:, :, None, None]
    blurred = lax.conv_general_dilated(noise[..., None], kernel.astype(dtype), (1, 1), "SAME",
                                       dimension_numbers=("NHWC", "HWIO", "NHWC"))[..., 0]
    y, x = jnp.meshgrid(jnp.arange(height, dtype=dtype), jnp.arange(width, dtype=dtype), indexing="ij")
    coordinates = jnp.stack([y + alpha * blurred, x + alpha * blurred], axis=1)

    def one(image, where_from):
        channel = jax.vmap(lambda c: keras_forwards.map_coordinates(c, where_from, order=order, fill_mode=fill_mode,
                                                                    fill_value=fill_value), in_axes=-1, out_axes=-1)
        return channel(image)

    return jax.vmap(one)(images, coordinates).astype(dtype)


class RandomElasticTransform(AugmentationLayer):
    """Displaces each image's pixels, with probability drawn in ``factor``, by a smooth random
    field.

    Args:
      factor: the probability of transforming an image, a number f in [0, 1] (drawn in
        [0, f]) or a pair (lower, upper).
      scale: the distortion d is drawn in [0, scale] (or a pair's range) in [0, 1], once per
        batch: the field's Gaussian has sigma = 5% of the shorter side times d and is scaled by
        10% of the longer side times d.
      interpolation: 'bilinear' (default) or 'nearest'.
      fill_mode: 'reflect' (default), 'wrap', 'constant' (``fill_value``), 'nearest' or
        'mirror', as ``jax.scipy.ndimage.map_coordinates`` (what Keras 3 on JAX calls).
      fill_value: the value outside the image for ``fill_mode='constant'``.
      value_range: the images' range, (0, 255) by default; the output is clipped to it.
      data_format: 'channels_last' (default) or 'channels_first'.
      seed: folded into the draws from ``mk.random``'s generator.
    """

    def __init__(self, factor=1.0, scale=1.0, interpolation="bilinear", fill_mode="reflect", fill_value=0.0,
                 value_range=(0, 255), seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = probability_factor(factor, "RandomElasticTransform")
        self.scale = symmetric_factor(scale, (0, 1), "RandomElasticTransform: The `scale` argument should be a "
                                                     "number (or a list of two numbers) in the range [0, 1]. ")
        if interpolation not in INTERPOLATIONS:
            raise NotImplementedError(f"RandomElasticTransform: Unknown `interpolation` {interpolation}. Expected one "
                                      f"of {INTERPOLATIONS}.")
        if fill_mode not in FILL_MODES:
            raise NotImplementedError(f"RandomElasticTransform: Unknown `fill_mode` {fill_mode}. Expected one of "
                                      f"{FILL_MODES}.")
        self.interpolation = interpolation
        self.fill_mode = fill_mode
        self.fill_value = fill_value
        self.value_range = value_range
        self.seed = seed

    def get_random_transformation(self, shape):
        """None when nothing can move (``scale`` or ``factor`` at most 0), as in Keras 3."""
        if self.scale[1] == 0 or self.factor[1] == 0:
            return None
        batch = shape[0]
        probability = uniform(self.seed, (batch,), *self.factor)
        apply = uniform(self.seed, (batch,), 0.0, 1.0) < probability
        return {"apply_transform": apply, "distortion_factor": uniform(self.seed, (), *self.scale),
                "seed": jax.random.key_data(next_key(self.seed))}

    def transform_images(self, images, transformation):
        if transformation is None:
            return images
        height, width = images.shape[1:3]
        largest = kernel_size_for(field_parameters(height, width, max(self.scale[1], 0.0))[1])
        moved = jax_image_op("random_elastic_transform", elastic_forward,
                             [images, jnp.asarray(transformation["seed"], jnp.uint32),
                              jnp.asarray(transformation["distortion_factor"], jnp.float32)],
                             constant=(1, 2), order=keras_forwards.INTERPOLATION_ORDER[self.interpolation],
                             fill_mode=self.fill_mode, fill_value=float(self.fill_value), largest_kernel=largest)
        apply = Tensor(jnp.asarray(transformation["apply_transform"])[:, None, None, None])
        return clip_to_range(where(apply, moved, images), self.value_range)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "scale": self.scale,
                "interpolation": self.interpolation, "fill_mode": self.fill_mode, "fill_value": self.fill_value,
                "value_range": self.value_range, "seed": self.seed}
