"""Keras 3's random geometric augmentations: ``RandomFlip``, ``RandomRotation``, ``RandomZoom``,
``RandomTranslation``. Each draws one transform per image (``image_base``: from ``mk.random``'s
generator, only when training) and samples the images as TensorFlow's projective transform
does (``minikeras.image.transform``)."""
import jax.numpy as jnp

from minikeras.image.flips import reverse_axis
from minikeras.image.transform import affine_matrix, check_fill_and_interpolation, projective_transform
from minikeras.layers.preprocessing.image_base import RandomImageLayer, symmetric_factor, uniform
from minikeras.layers.preprocessing.image_boxes import flip_boxes, rotate_boxes, translate_boxes, zoom_boxes
from minikeras.ops.math import where
from minikeras.tensor import Tensor

HORIZONTAL, VERTICAL, HORIZONTAL_AND_VERTICAL = "horizontal", "vertical", "horizontal_and_vertical"


class RandomFlip(RandomImageLayer):
    """Flips each image left-right and/or top-bottom with probability 1/2.

    Args:
      mode: 'horizontal', 'vertical' or 'horizontal_and_vertical' (default; as in Keras 3 one
        draw decides both flips of an image).
      seed: folded into the draws from ``mk.random``'s generator.
    """

    def __init__(self, mode=HORIZONTAL_AND_VERTICAL, seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        if mode not in (HORIZONTAL, VERTICAL, HORIZONTAL_AND_VERTICAL):
            raise ValueError(f"RandomFlip: RandomFlip layer {self.name} received an unknown mode argument {mode!r}; "
                             f"expected one of {(HORIZONTAL, VERTICAL, HORIZONTAL_AND_VERTICAL)}")
        self.mode = mode
        self.seed = seed

    def transform(self, images, training):
        if not training:
            return images
        return self._flip_images(images, uniform(self.seed, (images.shape[0], 1, 1, 1), 0.0, 1.0) <= 0.5)

    def _flip_images(self, images, flips):
        flips = Tensor(flips)
        if self.mode in (HORIZONTAL, HORIZONTAL_AND_VERTICAL):
            images = where(flips, reverse_axis(images, 2), images)
        if self.mode in (VERTICAL, HORIZONTAL_AND_VERTICAL):
            images = where(flips, reverse_axis(images, 1), images)
        return images

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Keras 3's box transform: ``transformation`` is ``{"flips": (batch, 1, 1, 1) booleans,
        "input_shape": the channels-last batch shape}``; ``bounding_boxes`` batched."""
        if not training:
            return bounding_boxes
        height, width = transformation["input_shape"][1:3]
        return flip_boxes(bounding_boxes, transformation["flips"], height, width, self.bounding_box_format,
                          self.mode in (HORIZONTAL, HORIZONTAL_AND_VERTICAL), self.mode in (VERTICAL,
                                                                                            HORIZONTAL_AND_VERTICAL))

    def transform_with_boxes(self, images, bounding_boxes, training):
        if not training:
            return images, bounding_boxes
        flips = uniform(self.seed, (images.shape[0], 1, 1, 1), 0.0, 1.0) <= 0.5
        transformation = {"flips": flips, "input_shape": tuple(images.shape)}
        return self._flip_images(images, flips), self.transform_bounding_boxes(bounding_boxes, transformation)

    def get_config(self):
        return {**super().get_config(), "seed": self.seed, "mode": self.mode}


class _AffineLayer(RandomImageLayer):
    def __init__(self, fill_mode, interpolation, seed, fill_value, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        check_fill_and_interpolation(fill_mode, interpolation, type(self).__name__)
        self.fill_mode = fill_mode
        self.interpolation = interpolation
        self.seed = seed
        self.fill_value = fill_value

    def transform(self, images, training):
        if not training:
            return images
        return self._apply(images, self.draw_transforms(images.shape))

    def _apply(self, images, transforms):
        return projective_transform(images, Tensor(transforms), self.interpolation, self.fill_mode, self.fill_value)

    def draw_transforms(self, shape):
        """(batch, 8) transforms for a batch of ``shape``, as a jax array."""
        raise NotImplementedError

    def _affine_config(self):
        return {"fill_mode": self.fill_mode, "interpolation": self.interpolation, "seed": self.seed,
                "fill_value": self.fill_value}


_ROTATION_FACTOR = "The `factor` argument should be a number (or a list of two numbers) in the range [-1, 1]. "


class RandomRotation(_AffineLayer):
    """Rotates each image by a random angle about its centre.

    Args:
      factor: a fraction of a full turn: ``0.2`` draws angles in [-72, 72] degrees, a pair
        (lower, upper) in [lower * 360, upper * 360]; positive is counter-clockwise.
      fill_mode: 'reflect' (default), 'wrap', 'constant' (``fill_value``) or 'nearest'.
      interpolation: 'bilinear' (default) or 'nearest'.
      seed: folded into the draws from ``mk.random``'s generator.

    >>> layer = mk.layers.RandomRotation(0.1)
    >>> layer(np.zeros((2, 8, 8, 3)), training=True).shape
    (2, 8, 8, 3)
    """

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None, fill_value=0.0,
                 data_format=None, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.factor = symmetric_factor(factor, (-1, 1), _ROTATION_FACTOR)

    def draw_transforms(self, shape):
        return self._rotations(self._draw_angles(shape[0]), *shape[1:3])

    def _draw_angles(self, batch):
        return uniform(self.seed, (batch,), self.factor[0] * 360.0, self.factor[1] * 360.0)

    def _rotations(self, angle, height, width):
        zeros = jnp.zeros(angle.shape, jnp.float32)
        return affine_matrix(angle, zeros, zeros, jnp.ones(angle.shape, jnp.float32), height, width)

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Keras 3's box transform: ``transformation`` is ``{"angle": (batch,) degrees,
        "image_height", "image_width", "batch_size"}``; ``bounding_boxes`` batched."""
        if not training:
            return bounding_boxes
        return rotate_boxes(bounding_boxes, transformation["angle"], transformation["image_height"],
                            transformation["image_width"], self.bounding_box_format)

    def transform_with_boxes(self, images, bounding_boxes, training):
        if not training:
            return images, bounding_boxes
        batch, height, width = images.shape[:3]
        angle = self._draw_angles(batch)
        transformation = {"angle": angle, "image_height": height, "image_width": width, "batch_size": batch}
        return (self._apply(images, self._rotations(angle, height, width)),
                self.transform_bounding_boxes(bounding_boxes, transformation))

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, **self._affine_config()}


def _range_factor(factor, name, layer, low_open):
    message = (f"{layer}: the `{name}` argument should be a number (or a list of two numbers) in the range "
               f"{'(-1.0, 1.0]' if low_open else '[-1.0, 1.0]'}. ")

    def check(value):
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value > 1.0 or value < -1.0 or (
                low_open and value == -1.0):
            raise ValueError(f"{message}Received: {name}={factor}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise ValueError(f"{message}Received: {name}={factor}")
        check(factor[0])
        check(factor[1])
        return tuple(sorted(factor))
    check(factor)
    return (-abs(factor), abs(factor))


class RandomZoom(_AffineLayer):
    """Zooms each image in or out by a random factor about its centre.

    Args:
      height_factor: a fraction (or a pair (lower, upper)) in (-1, 1]: the zoom is drawn in
        [1 + lower, 1 + upper]; positive values zoom out (the image shrinks), negative zoom in.
      width_factor: the same for the width; None (default) zooms both sides by the height's draw.
      fill_mode, interpolation, seed, fill_value: as ``RandomRotation``.
    """

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor = height_factor
        self.height_range = _range_factor(height_factor, "height_factor", "RandomZoom", True)
        self.width_factor = width_factor
        self.width_range = None if width_factor is None else _range_factor(width_factor, "width_factor",
                                                                           "RandomZoom", True)

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Keras 3's box transform: ``transformation`` is ``{"height_zoom": (batch, 1),
        "width_zoom": (batch, 1), "input_shape": the channels-last batch shape}``; boxes batched."""
        if not training:
            return bounding_boxes
        height, width = transformation["input_shape"][1:3]
        return zoom_boxes(bounding_boxes, transformation["width_zoom"], transformation["height_zoom"], height, width,
                          self.bounding_box_format)

    def transform_with_boxes(self, images, bounding_boxes, training):
        if not training:
            return images, bounding_boxes
        transforms = self.draw_transforms(images.shape)
        transformation = {"width_zoom": transforms[:, 0:1], "height_zoom": transforms[:, 4:5],
                          "input_shape": tuple(images.shape)}
        return self._apply(images, transforms), self.transform_bounding_boxes(bounding_boxes, transformation)

    def draw_transforms(self, shape):
        batch, height, width = shape[:3]
        zoom_h = uniform(self.seed, (batch,), 1.0 + self.height_range[0], 1.0 + self.height_range[1])
        zoom_w = zoom_h if self.width_range is None else uniform(
            self.seed, (batch,), 1.0 + self.width_range[0], 1.0 + self.width_range[1])
        zeros = jnp.zeros((batch,), jnp.float32)
        x_offset = (width - 1.0) / 2.0 * (1.0 - zoom_w)
        y_offset = (height - 1.0) / 2.0 * (1.0 - zoom_h)
        return jnp.stack([zoom_w, zeros, x_offset, zeros, zoom_h, y_offset, zeros, zeros], axis=1)

    def get_config(self):
        return {**super().get_config(), "height_factor": self.height_factor, "width_factor": self.width_factor,
                **self._affine_config()}


class RandomTranslation(_AffineLayer):
    """Shifts each image by a random fraction of its height and width.

    Args:
      height_factor: a fraction (or a pair (lower, upper)) in [-1, 1] of the height: the shift
        is drawn in [lower * height, upper * height]; positive moves the image down.
      width_factor: the same for the width; positive moves it right.
      fill_mode, interpolation, seed, fill_value: as ``RandomRotation``.
    """

    def __init__(self, height_factor, width_factor, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor = height_factor
        self.height_range = _range_factor(height_factor, "height_factor", "RandomTranslation", False)
        self.width_factor = width_factor
        self.width_range = _range_factor(width_factor, "width_factor", "RandomTranslation", False)

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Keras 3's box transform: ``transformation`` is ``{"translations": (batch, 2) the x and
        y shifts in pixels, "input_shape": the channels-last batch shape}``; boxes batched."""
        if not training:
            return bounding_boxes
        height, width = transformation["input_shape"][1:3]
        return translate_boxes(bounding_boxes, transformation["translations"], height, width,
                               self.bounding_box_format)

    def transform_with_boxes(self, images, bounding_boxes, training):
        if not training:
            return images, bounding_boxes
        transforms = self.draw_transforms(images.shape)
        transformation = {"translations": jnp.stack([-transforms[:, 2], -transforms[:, 5]], axis=1),
                          "input_shape": tuple(images.shape)}
        return self._apply(images, transforms), self.transform_bounding_boxes(bounding_boxes, transformation)

    def draw_transforms(self, shape):
        batch, height, width = shape[:3]
        shift_h = uniform(self.seed, (batch,), *self.height_range) * height
        shift_w = uniform(self.seed, (batch,), *self.width_range) * width
        ones, zeros = jnp.ones((batch,), jnp.float32), jnp.zeros((batch,), jnp.float32)
        return jnp.stack([ones, zeros, -shift_w, zeros, ones, -shift_h, zeros, zeros], axis=1)

    def get_config(self):
        return {**super().get_config(), "height_factor": self.height_factor, "width_factor": self.width_factor,
                **self._affine_config()}
