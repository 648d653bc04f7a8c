"""Max pooling: MaxPooling1D, MaxPooling2D, MaxPooling3D (and their MaxPool aliases)."""
from minikeras.layers.pooling.base_pooling import BasePooling


class MaxPooling1D(BasePooling):
    """The maximum of each ``pool_size`` window over 1 spatial axis; strides default to pool_size.
    See ``BasePooling`` for the arguments.

    >>> mk.layers.MaxPooling1D()(mk.ones((2, 8, 3))).shape
    (2, 4, 3)
    """

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(pool_size, strides, pool_dimensions=1, pool_mode="max", padding=padding,
                         data_format=data_format, name=name, **kwargs)


class MaxPooling2D(BasePooling):
    """The maximum of each ``pool_size`` window over 2 spatial axes; strides default to pool_size.
    See ``BasePooling`` for the arguments.

    >>> mk.layers.MaxPooling2D()(mk.ones((2, 8, 8, 3))).shape
    (2, 4, 4, 3)
    """

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(pool_size, strides, pool_dimensions=2, pool_mode="max", padding=padding,
                         data_format=data_format, name=name, **kwargs)


class MaxPooling3D(BasePooling):
    """The maximum of each ``pool_size`` window over 3 spatial axes; strides default to pool_size.
    See ``BasePooling`` for the arguments.

    >>> mk.layers.MaxPooling3D()(mk.ones((2, 4, 4, 4, 3))).shape
    (2, 2, 2, 2, 3)
    """

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(pool_size, strides, pool_dimensions=3, pool_mode="max", padding=padding,
                         data_format=data_format, name=name, **kwargs)


MaxPool1D = MaxPooling1D
MaxPool2D = MaxPooling2D
MaxPool3D = MaxPooling3D
