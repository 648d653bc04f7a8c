"""Keras 3's ``RandomColorJitter``: random brightness, contrast, saturation and hue, in that
order, each only when its factor is given."""
from minikeras.layers.preprocessing.image_augment_base import AugmentationLayer
from minikeras.layers.preprocessing.image_augment_color import RandomHue, RandomSaturation
from minikeras.layers.preprocessing.image_color import RandomBrightness, RandomContrast
from minikeras.layers.preprocessing.image_color_ops import checked_value_range


class RandomColorJitter(AugmentationLayer):
    """Applies ``RandomBrightness``, ``RandomContrast``, ``RandomSaturation`` and ``RandomHue``
    in turn (those whose factor is given), each with its own draw per image.

    Args:
      value_range: the images' range, (0, 255) by default, given to each of the four.
      brightness_factor: ``RandomBrightness``'s factor, or None (default) to skip it.
      contrast_factor: ``RandomContrast``'s factor, or None.
      saturation_factor: ``RandomSaturation``'s factor, or None.
      hue_factor: ``RandomHue``'s factor, or None.
      seed: folded into the draws from ``mk.random``'s generator (each of the four's).
      data_format: 'channels_last' (default) or 'channels_first'.

    Its transformation is drawn by the four as they apply (``get_random_transformation``
    gives None), as in Keras 3.
    """

    keeps_boxes = True  # moves no pixel: bounding boxes pass unchanged, as in Keras 3

    def __init__(self, value_range=(0, 255), brightness_factor=None, contrast_factor=None, saturation_factor=None,
                 hue_factor=None, seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.value_range = checked_value_range(value_range, "RandomColorJitter", sort=False)
        self.brightness_factor = brightness_factor
        self.contrast_factor = contrast_factor
        self.saturation_factor = saturation_factor
        self.hue_factor = hue_factor
        self.seed = seed
        steps = ((RandomBrightness, brightness_factor), (RandomContrast, contrast_factor),
                 (RandomSaturation, saturation_factor), (RandomHue, hue_factor))
        self.steps = [cls(factor=factor, value_range=value_range, seed=seed, dtype=self.dtype_policy)
                      for cls, factor in steps if factor is not None]

    def get_random_transformation(self, shape):
        return None

    def transform_images(self, images, transformation=None):
        for step in self.steps:
            images = step.transform(images, True)
        return images

    def get_config(self):
        return {**super().get_config(), "value_range": self.value_range, "brightness_factor": self.brightness_factor,
                "contrast_factor": self.contrast_factor, "saturation_factor": self.saturation_factor,
                "hue_factor": self.hue_factor, "seed": self.seed}
