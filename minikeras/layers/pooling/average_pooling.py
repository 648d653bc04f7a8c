"""Average pooling: AveragePooling1D, AveragePooling2D, AveragePooling3D (and their AvgPool aliases)."""
from minikeras.layers.pooling.base_pooling import BasePooling


class AveragePooling1D(BasePooling):
    """The mean of each ``pool_size`` window over 1 spatial axis; strides default to pool_size.
    With 'same' padding, over the in-bounds values only. See ``BasePooling`` for the arguments.

    >>> mk.layers.AveragePooling1D()(mk.ones((2, 8, 3))).shape
    (2, 4, 3)
    """

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(pool_size, strides, pool_dimensions=1, pool_mode="average", padding=padding,
                         data_format=data_format, name=name, **kwargs)


class AveragePooling2D(BasePooling):
    """The mean of each ``pool_size`` window over 2 spatial axes; strides default to pool_size.
    With 'same' padding, over the in-bounds values only. See ``BasePooling`` for the arguments.

    >>> mk.layers.AveragePooling2D()(mk.ones((2, 8, 8, 3))).shape
    (2, 4, 4, 3)
    """

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(pool_size, strides, pool_dimensions=2, pool_mode="average", padding=padding,
                         data_format=data_format, name=name, **kwargs)


class AveragePooling3D(BasePooling):
    """The mean of each ``pool_size`` window over 3 spatial axes; strides default to pool_size.
    With 'same' padding, over the in-bounds values only. See ``BasePooling`` for the arguments.

    >>> mk.layers.AveragePooling3D()(mk.ones((2, 4, 4, 4, 3))).shape
    (2, 2, 2, 2, 3)
    """

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(pool_size, strides, pool_dimensions=3, pool_mode="average", padding=padding,
                         data_format=data_format, name=name, **kwargs)


AvgPool1D = AveragePooling1D
AvgPool2D = AveragePooling2D
AvgPool3D = AveragePooling3D
