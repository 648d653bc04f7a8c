"""Keras 3's ``RandomPerspective``: each image's corners moved by random fractions of their
coordinates, the image warped by the homography that takes them there (Keras 3 on JAX's
``perspective_transform``, constant fill)."""
import jax.numpy as jnp

from minikeras.image import keras_forwards
from minikeras.image.transform import INTERPOLATIONS
from minikeras.layers.preprocessing.image_augment_base import AugmentationLayer, jax_image_op, probability_factor
from minikeras.layers.preprocessing.image_base import uniform
from minikeras.layers.preprocessing.image_boxes import perspective_boxes
from minikeras.ops.math import where
from minikeras.tensor import Tensor


def corner_points(batch, height, width):
    """(batch, 4, 2) corners (x, y): top-left, top-right, bottom-left, bottom-right."""
    corners = jnp.asarray([[0.0, 0.0], [width - 1, 0.0], [0.0, height - 1], [width - 1, height - 1]], jnp.float32)
    return jnp.broadcast_to(corners, (batch, 4, 2))


class RandomPerspective(AugmentationLayer):
    """Warps each image, with probability drawn in ``factor``, by a random perspective.

    Args:
      factor: the probability of warping an image, a number f in [0, 1] (drawn in [0, f]) or a
        pair (lower, upper); 1.0 (default) draws it in [0, 1].
      scale: in [0, 1]: each corner coordinate c moves to c * (1 + d), d drawn in
        [-scale / 2, scale / 2].
      interpolation: 'bilinear' (default) or 'nearest'.
      fill_value: the value outside the input image.
      data_format: 'channels_last' (default) or 'channels_first'.
      seed: folded into the draws from ``mk.random``'s generator.

    >>> mk.layers.RandomPerspective(scale=0.2)(np.zeros((2, 8, 8, 3)), training=True).shape
    (2, 8, 8, 3)
    """

    def __init__(self, factor=1.0, scale=1.0, interpolation="bilinear", fill_value=0.0, seed=None, data_format=None,
                 **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = probability_factor(factor, "RandomPerspective")
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0.0 <= scale <= 1.0:
            raise ValueError(f"RandomPerspective: The `scale` argument should be a number in the range [0,1]. "
                             f"Received: scale={scale}")
        if interpolation not in INTERPOLATIONS:
            raise NotImplementedError(f"RandomPerspective: Unknown `interpolation` {interpolation}. Expected one of "
                                      f"{INTERPOLATIONS}.")
        self.scale = scale
        self.interpolation = interpolation
        self.fill_value = fill_value
        self.seed = seed

    def get_random_transformation(self, shape):
        batch, height, width = shape[:3]
        probability = uniform(self.seed, (batch,), *self.factor)
        apply = uniform(self.seed, (batch,), 0.0, 1.0) < probability
        moves = uniform(self.seed, (batch, 4, 2), -0.5 * self.scale, 0.5 * self.scale)
        start = corner_points(batch, height, width)
        return {"apply_perspective": apply, "start_points": start, "end_points": start + start * moves}

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Keras 3's box transform: ``transformation`` is ``get_random_transformation``'s with
        the channels-last batch's ``input_shape``; ``bounding_boxes`` batched."""
        if not training:
            return bounding_boxes
        height, width = transformation["input_shape"][1:3]
        return perspective_boxes(bounding_boxes, transformation, height, width, self.bounding_box_format)

    def transform_images(self, images, transformation):
        warped = jax_image_op("random_perspective", keras_forwards.perspective_transform,
                              [images, transformation["start_points"], transformation["end_points"]],
                              constant=(1, 2), order=keras_forwards.INTERPOLATION_ORDER[self.interpolation],
                              fill_value=float(self.fill_value))
        return where(Tensor(jnp.asarray(transformation["apply_perspective"])[:, None, None, None]), warped, images)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "scale": self.scale,
                "interpolation": self.interpolation, "fill_value": self.fill_value, "seed": self.seed}
