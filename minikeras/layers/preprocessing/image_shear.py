"""Keras 3's ``RandomShear``: each image sheared along x and y by random amounts (one draw per
image from ``mk.random``'s generator, only when training), sampled as the sibling geometric
layers sample (``minikeras.image.transform``). As the other augmentation layers
(``image_augment_base``), it draws a transformation (``{"shear_factor": (batch, 2)}``, Keras's
name) and applies it, so a layer that combines augmentations can draw and apply them itself."""
import jax.numpy as jnp

from minikeras.image.transform import check_fill_and_interpolation, projective_transform
from minikeras.layers.preprocessing.image_augment_base import AugmentationLayer
from minikeras.layers.preprocessing.image_base import uniform
from minikeras.layers.preprocessing.image_boxes import shear_boxes
from minikeras.tensor import Tensor

_FACTOR_MESSAGE = "The `factor` argument should be a number (or a list of two numbers) in the range [0, 1.0]. "


def shear_factor_range(factor, name):
    """Keras 3's shear factor: a number f in [0, 1] gives (-f, f), a pair of numbers is sorted.

    Keras 3.15 also wants a pair's numbers in [0, 1], so it cannot rebuild its own layer from
    the (-f, f) its config writes for a number; here a pair may hold numbers in [-1, 1], and
    every config round trips."""
    def check(value, low):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value > 1.0 or value < low:
            raise ValueError(f"RandomShear: {_FACTOR_MESSAGE}Received: {name}={factor}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise ValueError(f"RandomShear: {_FACTOR_MESSAGE}Received: {name}={factor}")
        check(factor[0], -1.0)
        check(factor[1], -1.0)
        return tuple(sorted(factor))
    check(factor, 0.0)
    return (-abs(factor), abs(factor))


def shear_transforms(shear_x, shear_y):
    """(batch, 8) projective transforms for shear amounts (batch,) each: output (x, y) reads
    the input at (x + shear_x * y, y + shear_y * x), as Keras 3's shear matrix (not centred)."""
    ones, zeros = jnp.ones_like(shear_x), jnp.zeros_like(shear_x)
    return jnp.stack([ones, shear_x, zeros, shear_y, ones, zeros, zeros, zeros], axis=1)


class RandomShear(AugmentationLayer):
    """Shears each image along x and y by random amounts, each with a random sign.

    Args:
      x_factor: a number f in [0, 1] (amounts drawn in [-f, f]) or a pair (lower, upper) in
        [0, 1]; output pixel (x, y) reads the input at x + amount * y (not centred: row y moves
        by amount * y pixels). As in Keras 3, each image's drawn x and y
        amounts are both negated with probability 1/2.
      y_factor: the same for the columns moving down.
      interpolation: 'bilinear' (default) or 'nearest'.
      fill_mode: 'reflect' (default), 'wrap', 'constant' (``fill_value``) or 'nearest'.
      fill_value: the value outside the image for ``fill_mode='constant'``.
      data_format: 'channels_last' (default) or 'channels_first'.
      seed: folded into the draws from ``mk.random``'s generator.

    >>> layer = mk.layers.RandomShear(x_factor=0.2, y_factor=0.2)
    >>> layer(np.zeros((2, 8, 8, 3)), training=True).shape
    (2, 8, 8, 3)
    """

    def __init__(self, x_factor=0.0, y_factor=0.0, interpolation="bilinear", fill_mode="reflect", fill_value=0.0,
                 data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.x_factor = shear_factor_range(x_factor, "x_factor")
        self.y_factor = shear_factor_range(y_factor, "y_factor")
        check_fill_and_interpolation(fill_mode, interpolation, "RandomShear")
        self.fill_mode = fill_mode
        self.fill_value = fill_value
        self.interpolation = interpolation
        self.seed = seed

    def get_random_transformation(self, shape):
        """{"shear_factor": (batch, 2)}: each image's x and y amounts, as Keras 3 draws them."""
        batch = shape[0]
        sign = jnp.where(uniform(self.seed, (batch, 1), 0.0, 1.0) > 0.5, -1.0, 1.0)
        shear_y = uniform(self.seed, (batch, 1), *self.y_factor)
        shear_x = uniform(self.seed, (batch, 1), *self.x_factor)
        return {"shear_factor": jnp.concatenate([shear_x, shear_y], axis=1) * sign}

    def transform_images(self, images, transformation):
        amounts = jnp.asarray(transformation["shear_factor"], jnp.float32)
        return projective_transform(images, Tensor(shear_transforms(amounts[:, 0], amounts[:, 1])),
                                    self.interpolation, self.fill_mode, self.fill_value)

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Keras 3's box transform: ``transformation`` is ``{"shear_factor": (batch, 2),
        "input_shape": the channels-last batch shape}``; ``bounding_boxes`` batched."""
        if not training:
            return bounding_boxes
        height, width = transformation["input_shape"][1:3]
        return shear_boxes(bounding_boxes, transformation["shear_factor"], height, width, self.bounding_box_format,
                           self.compute_dtype)

    def get_config(self):
        return {**super().get_config(), "x_factor": self.x_factor, "y_factor": self.y_factor,
                "fill_mode": self.fill_mode, "interpolation": self.interpolation, "seed": self.seed,
                "fill_value": self.fill_value}
