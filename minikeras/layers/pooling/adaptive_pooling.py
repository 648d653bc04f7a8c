"""Adaptive pooling to a fixed output size: Adaptive{Average,Max}Pooling{1,2,3}D, as Keras 3.15's."""
from minikeras.layers.base import Layer
from minikeras.layers.convolutional import conv_args as ca
from minikeras.ops.nn_pool_general import adaptive_pool_nd

_SIZE_WORDS = {1: "integer or tuple of 1 integer", 2: "integer or (height, width) tuple",
               3: "integer or (depth, height, width) tuple"}


class BaseAdaptivePooling(Layer):
    """Pools each spatial axis of length n into ``output_size`` windows, window i covering
    [floor(i n / out), ceil((i + 1) n / out)): (batch, *spatial, channels) -> (batch, *output_size,
    channels) (channels_first: (batch, channels, *output_size)).

    Args:
      output_size: an int or one per spatial axis.
      data_format: 'channels_last' or 'channels_first'; None: ``backend.image_data_format()``.
    """

    pool_dimensions = None
    pool_mode = None

    def __init__(self, output_size, data_format=None, **kwargs):
        rank = self.pool_dimensions
        if isinstance(output_size, int) and not isinstance(output_size, bool):
            output_size = (output_size,) * rank
        elif isinstance(output_size, (tuple, list)) and len(output_size) == rank:
            output_size = tuple(output_size)
        else:
            raise TypeError(f"`output_size` must be an {_SIZE_WORDS[rank]}. Received: {output_size} of type "
                            f"{type(output_size)}")
        super().__init__(**kwargs)
        self.output_size = output_size
        self.data_format = ca.standardize_data_format(data_format)
        self.input_ndim = rank + 2

    def call(self, inputs):
        x = ca.to_channels_last(inputs, self.data_format)
        return ca.from_channels_last(adaptive_pool_nd(x, self.pool_mode, self.output_size), self.data_format)

    def compute_output_shape(self, input_shape):
        if self.data_format == "channels_last":
            return (input_shape[0], *self.output_size, input_shape[-1])
        return (input_shape[0], input_shape[1], *self.output_size)

    def get_config(self):
        return {**super().get_config(), "output_size": self.output_size, "data_format": self.data_format}


def _adaptive(name, rank, mode):
    what = "maximum" if mode == "max" else "mean"
    doc = (f"Adaptive {what} pooling over {rank} spatial axes (see ``BaseAdaptivePooling``).\n\n"
           f"    >>> mk.layers.{name}({(2,) * rank})(mk.ones({(1,) + (5,) * rank + (3,)})).shape\n"
           f"    {(1,) + (2,) * rank + (3,)}\n    ")
    return type(name, (BaseAdaptivePooling,), {"pool_dimensions": rank, "pool_mode": mode, "__doc__": doc,
                                               "__module__": __name__})


AdaptiveAveragePooling1D = _adaptive("AdaptiveAveragePooling1D", 1, "average")
AdaptiveAveragePooling2D = _adaptive("AdaptiveAveragePooling2D", 2, "average")
AdaptiveAveragePooling3D = _adaptive("AdaptiveAveragePooling3D", 3, "average")
AdaptiveMaxPooling1D = _adaptive("AdaptiveMaxPooling1D", 1, "max")
AdaptiveMaxPooling2D = _adaptive("AdaptiveMaxPooling2D", 2, "max")
AdaptiveMaxPooling3D = _adaptive("AdaptiveMaxPooling3D", 3, "max")
