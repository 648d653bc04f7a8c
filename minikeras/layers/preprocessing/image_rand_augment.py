"""Keras 3's ``RandAugment``: ``num_ops`` augmentations in turn, each chosen at random among
eleven (shear, translation, rotation, brightness, colour degeneration, contrast, sharpness,
posterization, solarization, auto contrast, equalization), all of strength ``factor``."""
import jax

from minikeras.layers.preprocessing.augment_choice import apply_chosen
from minikeras.layers.preprocessing.image_augment_base import AugmentationLayer, probability_factor
from minikeras.layers.preprocessing.image_augment_color import RandomColorDegeneration, RandomSharpness
from minikeras.layers.preprocessing.image_color import RandomBrightness, RandomContrast
from minikeras.layers.preprocessing.image_color_ops import (
    AutoContrast,
    Equalization,
    RandomPosterization,
    Solarization,
    checked_value_range,
)
from minikeras.layers.preprocessing.image_geometry import RandomRotation, RandomTranslation
from minikeras.layers.preprocessing.image_shear import RandomShear
from minikeras.ops.random import next_key

RAND_AUGMENT_OPS = ("random_shear", "random_translation", "random_rotation", "random_brightness",
                    "random_color_degeneration", "random_contrast", "random_sharpness", "random_posterization",
                    "solarization", "auto_contrast", "equalization")


def augmentation_layers(factor, value_range, interpolation, seed, dtype):
    """The augmentations of RandAugment and AugMix by Keras 3's names, built as Keras 3 builds
    them from one ``factor`` pair (lower, upper); all on channels-last batches."""
    common = {"seed": seed, "dtype": dtype}
    colour = {"value_range": value_range, **common}
    return {
        "random_shear": RandomShear(x_factor=factor, y_factor=factor, interpolation=interpolation, **common),
        "random_translation": RandomTranslation(height_factor=factor, width_factor=factor,
                                                interpolation=interpolation, **common),
        "random_rotation": RandomRotation(factor=factor, interpolation=interpolation, **common),
        "random_brightness": RandomBrightness(factor=factor, **colour),
        "random_color_degeneration": RandomColorDegeneration(factor=factor, **colour),
        "random_contrast": RandomContrast(factor=factor, **colour),
        "random_sharpness": RandomSharpness(factor=factor, **colour),
        "random_posterization": RandomPosterization(factor=max(1, int(8 * factor[1])), **colour),
        "solarization": Solarization(addition_factor=factor, threshold_factor=factor, **colour),
        "auto_contrast": AutoContrast(value_range=value_range, dtype=dtype),
        "equalization": Equalization(value_range=value_range, dtype=dtype),
    }


class RandAugment(AugmentationLayer):
    """Applies ``num_ops`` augmentations in turn, each drawn (for the whole batch, as Keras 3)
    among ``RAND_AUGMENT_OPS``; the drawn augmentation draws its own amounts per image.

    Args:
      value_range: the images' range, (0, 255) by default.
      num_ops: how many augmentations to apply, 2 by default.
      factor: the strength of every augmentation, a number f in [0, 1] (the range (0, f)) or a
        pair; 0.5 by default. Posterization keeps ``max(1, int(8 * upper))`` bits at most.
      interpolation: the geometric augmentations' sampling, 'bilinear' (default) or 'nearest'.
      seed: folded into the draws from ``mk.random``'s generator.
      data_format: 'channels_last' (default) or 'channels_first'.

    Its transformation is ``{"layer_idxes": (num_ops,) indices into RAND_AUGMENT_OPS}``.
    """

    def __init__(self, value_range=(0, 255), num_ops=2, factor=0.5, interpolation="bilinear", seed=None,
                 data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.value_range = checked_value_range(value_range, "RandAugment", sort=False)
        if isinstance(num_ops, bool) or not isinstance(num_ops, int) or num_ops < 0:
            raise ValueError(f"RandAugment: `num_ops` should be a non-negative integer. Received: num_ops={num_ops}")
        self.num_ops = num_ops
        self.factor = probability_factor(factor, "RandAugment")
        self.interpolation = interpolation
        self.seed = seed
        layers = augmentation_layers(self.factor, value_range, interpolation, seed, self.dtype_policy)
        self.augmentations = [layers[name] for name in RAND_AUGMENT_OPS]

    def get_random_transformation(self, shape):
        return {"layer_idxes": jax.random.randint(next_key(self.seed), (self.num_ops,), 0, len(RAND_AUGMENT_OPS))}

    def transform_images(self, images, transformation):
        for index in transformation["layer_idxes"]:
            images = apply_chosen(index, self.augmentations, images)
        return images

    def get_config(self):
        return {**super().get_config(), "value_range": self.value_range, "num_ops": self.num_ops,
                "factor": self.factor, "interpolation": self.interpolation, "seed": self.seed}
