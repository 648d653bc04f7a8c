"""The two layers Keras's ConvNeXt defines for itself (``keras.src.applications.convnext``):
``LayerScale``, a learned per-channel scale of a residual branch, and ``StochasticDepth``, which
drops a whole residual branch per example while training; and ``keras_file_class``, which names
the applications' own layers in ``.keras`` files as Keras does (InceptionResNetV2's
CustomScaleLayer uses it too).

    x = LayerScale(1e-6, 96, name="convnext_tiny_stage_0_block_0_layer_scale")(x)
    x = StochasticDepth(0.1)(x, training=True)
"""
from minikeras import initializers
from minikeras.layers import Layer
from minikeras.ops.nn import dropout
from minikeras.saving.registry import register_builtin


def keras_file_class(keras_module):
    """Registers an application's own layer for ``.keras`` files: read back from Keras's
    ``keras.src.applications.<module>`` (which the loader reads as ``minikeras.applications``)
    and written under that same module name, so that Keras loads minikeras's files."""
    def register(cls):
        return register_builtin(f"minikeras.src.applications.{keras_module}")(
            register_builtin("minikeras.applications")(cls))
    return register


@keras_file_class("convnext")
class StochasticDepth(Layer):
    """With ``training=True``, each example's input is zeroed with probability
    ``drop_path_rate`` and the rest divided by ``1 - drop_path_rate`` (Keras's
    ``floor(keep_prob + uniform)`` mask, one draw per example); the identity otherwise.

    Args:
      drop_path_rate: the probability of dropping an example's residual branch, in [0, 1).
    """

    def __init__(self, drop_path_rate, **kwargs):
        super().__init__(**kwargs)
        if isinstance(drop_path_rate, bool) or not isinstance(drop_path_rate, (int, float)) \
                or not 0 <= drop_path_rate < 1:
            raise ValueError(f"StochasticDepth: `drop_path_rate` must be a float in [0, 1). "
                             f"Received: drop_path_rate={drop_path_rate!r}")
        self.drop_path_rate = drop_path_rate

    def call(self, x, training=None):
        if not training or self.drop_path_rate == 0:
            return x
        noise_shape = (x.shape[0],) + (1,) * (len(x.shape) - 1)
        return dropout(x, float(self.drop_path_rate), noise_shape=noise_shape)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "drop_path_rate": self.drop_path_rate}


@keras_file_class("convnext")
class LayerScale(Layer):
    """``x * gamma``: a trainable scale per channel (the last axis), ``projection_dim`` of
    them, each starting at ``init_values`` (arXiv:2103.17239).

    Args:
      init_values: the scales' initial value (ConvNeXt: 1e-6).
      projection_dim: the number of channels.
    """

    def __init__(self, init_values, projection_dim, **kwargs):
        super().__init__(**kwargs)
        self.init_values = init_values
        self.projection_dim = projection_dim

    def build(self, input_shape):
        if input_shape[-1] is not None and input_shape[-1] != self.projection_dim:
            raise ValueError(f"LayerScale '{self.name}' expects inputs with {self.projection_dim} channels on the "
                             f"last axis (its projection_dim). Received: input_shape={tuple(input_shape)}")
        # unnamed, as Keras's ('variable'); the attribute is still `gamma`
        self.gamma = self.add_weight(shape=(self.projection_dim,),
                                     initializer=initializers.Constant(self.init_values), trainable=True)

    def call(self, x):
        return x * self.gamma

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "init_values": self.init_values, "projection_dim": self.projection_dim}
