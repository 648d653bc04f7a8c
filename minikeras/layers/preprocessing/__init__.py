"""Keras preprocessing layers (exported from ``mk.layers``)."""
from minikeras.layers.preprocessing.image_color import RandomBrightness, RandomContrast  # noqa: F401
from minikeras.layers.preprocessing.image_geometry import (  # noqa: F401
    RandomFlip, RandomRotation, RandomTranslation, RandomZoom)
from minikeras.layers.preprocessing.image_shear import RandomShear  # noqa: F401
from minikeras.layers.preprocessing.image_resizing import CenterCrop, RandomCrop, Resizing  # noqa: F401
