"""Keras 3's ``RandomGaussianBlur``: images blurred, with a drawn probability each, by one
Gaussian kernel per batch (Keras 3 on JAX's ``gaussian_blur``), then clipped to
``value_range``."""
import jax.numpy as jnp

from minikeras.image import keras_forwards
from minikeras.layers.preprocessing.image_augment_base import AugmentationLayer, jax_image_op, probability_factor
from minikeras.layers.preprocessing.image_base import symmetric_factor, uniform
from minikeras.ops.math import maximum, minimum, where
from minikeras.tensor import Tensor


def odd_kernel_size(kernel_size):
    """Keras 3's ``kernel_size``: an odd number k gives (k, k); a pair of odd numbers."""
    pair = tuple(kernel_size) if isinstance(kernel_size, (tuple, list)) else (kernel_size, kernel_size)
    if len(pair) != 2:
        raise ValueError("RandomGaussianBlur: The `kernel_size` argument should be a number (or a list of two "
                         f"numbers) Received: kernel_size={kernel_size}")
    if any(isinstance(k, bool) or not isinstance(k, (int, float)) or k % 2 == 0 for k in pair):
        raise ValueError(f"RandomGaussianBlur: kernel_size must be an odd number. Received: kernel_size={kernel_size}")
    return tuple(int(k) for k in pair)


def clip_to_range(images, value_range):
    return minimum(maximum(images, float(value_range[0])), float(value_range[1]))


class RandomGaussianBlur(AugmentationLayer):
    """Blurs each image, with probability drawn in ``factor``, by a Gaussian kernel.

    Args:
      factor: the probability of blurring an image, a number f in [0, 1] (drawn in [0, f]) or a
        pair (lower, upper).
      kernel_size: an odd number or a pair of odd numbers (width, height); 3 by default.
      sigma: the kernel's standard deviations (x and y, one draw each per batch) are drawn in
        [0, sigma] for a number in [0, 1], or in a pair's range.
      value_range: the images' range, (0, 255) by default; the output is clipped to it.
      data_format: 'channels_last' (default) or 'channels_first'.
      seed: folded into the draws from ``mk.random``'s generator.
    """

    keeps_boxes = True  # moves no pixel: bounding boxes pass unchanged, as in Keras 3

    def __init__(self, factor=1.0, kernel_size=3, sigma=1.0, value_range=(0, 255), data_format=None, seed=None,
                 **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = probability_factor(factor, "RandomGaussianBlur")
        self.kernel_size = odd_kernel_size(kernel_size)
        self.sigma = symmetric_factor(sigma, (0, 1), "RandomGaussianBlur: The `sigma` argument should be a number (or "
                                                     "a list of two numbers) in the range [0, 1]. ")
        self.value_range = value_range
        self.seed = seed

    def get_random_transformation(self, shape):
        batch = shape[0]
        probability = uniform(self.seed, (batch,), *self.factor)
        apply = uniform(self.seed, (batch,), 0.0, 1.0) < probability
        return {"should_apply_blur": apply, "blur_factor": uniform(self.seed, (2,), *self.sigma) + 1e-6}

    def transform_images(self, images, transformation):
        blurred = jax_image_op("random_gaussian_blur", keras_forwards.gaussian_blur,
                               [images, transformation["blur_factor"]], constant=(1,), kernel_size=self.kernel_size)
        apply = Tensor(jnp.asarray(transformation["should_apply_blur"])[:, None, None, None])
        return clip_to_range(where(apply, blurred, images), self.value_range)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "kernel_size": self.kernel_size, "sigma": self.sigma,
                "value_range": self.value_range, "seed": self.seed}
