"""Keras preprocessing layers (exported from ``mk.layers``)."""
from minikeras.layers.preprocessing.image_color import RandomBrightness, RandomContrast  # noqa: F401
from minikeras.layers.preprocessing.image_color_ops import (  # noqa: F401
    AutoContrast, Equalization, RandomInvert, RandomPosterization, Solarization)
from minikeras.layers.preprocessing.image_augment_color import (  # noqa: F401
    RandomColorDegeneration, RandomGrayscale, RandomHue, RandomSaturation, RandomSharpness)
from minikeras.layers.preprocessing.image_color_jitter import RandomColorJitter  # noqa: F401
from minikeras.layers.preprocessing.image_rand_augment import RandAugment  # noqa: F401
from minikeras.layers.preprocessing.image_aug_mix import AugMix  # noqa: F401
from minikeras.layers.preprocessing.image_clahe import ContrastLimitedAdaptiveHistogramEqualization  # noqa: F401
from minikeras.layers.preprocessing.image_geometry import (  # noqa: F401
    RandomFlip, RandomRotation, RandomTranslation, RandomZoom)
from minikeras.layers.preprocessing.image_shear import RandomShear  # noqa: F401
from minikeras.layers.preprocessing.image_perspective import RandomPerspective  # noqa: F401
from minikeras.layers.preprocessing.image_blur import RandomGaussianBlur  # noqa: F401
from minikeras.layers.preprocessing.image_erasing import RandomErasing  # noqa: F401
from minikeras.layers.preprocessing.image_elastic import RandomElasticTransform  # noqa: F401
from minikeras.layers.preprocessing.image_mixing import CutMix, MixUp  # noqa: F401
from minikeras.layers.preprocessing.max_num_bounding_boxes import MaxNumBoundingBoxes  # noqa: F401
from minikeras.layers.preprocessing.pipeline import Pipeline  # noqa: F401
from minikeras.layers.preprocessing.image_resizing import CenterCrop, RandomCrop, Resizing  # noqa: F401
from minikeras.layers.preprocessing.hashed_crossing import HashedCrossing  # noqa: F401
from minikeras.layers.preprocessing.audio import MelSpectrogram, STFTSpectrogram  # noqa: F401
