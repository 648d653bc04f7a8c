"""Keras layers (``mk.layers``)."""
from minikeras.layers.base import Layer  # noqa: F401
from minikeras.layers.conv import Conv2D  # noqa: F401
from minikeras.layers.core import Activation, Dense, Dropout, Flatten, Input, InputLayer, Reshape  # noqa: F401
from minikeras.layers.normalization import BatchNormalization  # noqa: F401
from minikeras.layers.pooling import (  # noqa: F401
    AveragePooling2D, AvgPool2D, GlobalAveragePooling2D, GlobalMaxPooling2D, MaxPool2D, MaxPooling2D)

Convolution2D = Conv2D
