"""Layer wrappers: Bidirectional (a recurrent layer run both ways) and TimeDistributed (a
layer applied to every step)."""
from minikeras.dtypes import is_floating
from minikeras.layers.base import Layer
from minikeras.layers.core.wrapper import Wrapper
from minikeras.ops.array import concat, reshape
from minikeras.ops.math import cast
from minikeras.saving.registry import deserialize_keras_object, register_builtin, serialize_keras_object

_MERGE_MODES = ("sum", "mul", "ave", "concat", None)


def _copy(layer, **changes):
    config = {**layer.get_config(), **changes}
    return type(layer).from_config(config)


def _removeprefix(name, prefix):
    return name[len(prefix):] if name.startswith(prefix) else name


@register_builtin("minikeras.layers")
class Bidirectional(Layer):
    """Runs a recurrent ``layer`` forward and a copy of it backward over the sequence and merges
    the two outputs (``merge_mode``: 'concat' (default), 'sum', 'ave', 'mul' or None for the
    pair). ``backward_layer``: the backward layer to use instead of a copy (it must have
    ``go_backwards=True``). The backward outputs are flipped back to the input's order.

    ``initial_state``: the forward layer's states then the backward layer's; with
    ``return_state`` the call returns ``[output, *forward_states, *backward_states]``.

    >>> mk.layers.Bidirectional(mk.layers.LSTM(4, return_sequences=True))(mk.ones((2, 5, 3))).shape
    (2, 5, 8)
    """

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `Bidirectional` layer with a `keras.layers.Layer` instance. "
                             f"Received: {layer}")
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError(f"`backward_layer` need to be a `keras.layers.Layer` instance. Received: "
                             f"{backward_layer}")
        if merge_mode not in _MERGE_MODES:
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should be one of "
                             '{"sum", "mul", "ave", "concat", None}')
        super().__init__(**kwargs)
        if not hasattr(layer, "go_backwards"):
            raise TypeError(f"Bidirectional '{self.name}' wraps a recurrent layer with a `go_backwards` argument "
                            f"(LSTM, GRU, SimpleRNN, RNN); received {type(layer).__name__} '{layer.name}', which has "
                            "none")
        self.forward_layer = _copy(layer, name=f"forward_{_removeprefix(layer.name, 'forward_')}")
        if backward_layer is None:
            backward_layer = _copy(layer, go_backwards=not layer.go_backwards,
                                   name=f"backward_{_removeprefix(layer.name, 'backward_')}")
        self.backward_layer = backward_layer
        if self.forward_layer.go_backwards == self.backward_layer.go_backwards:
            raise ValueError("Forward layer and backward layer should have different `go_backwards` value. "
                             f"Received: forward_layer.go_backwards {self.forward_layer.go_backwards}, "
                             f"backward_layer.go_backwards={self.backward_layer.go_backwards}")
        for a in ("stateful", "return_sequences", "return_state"):
            f, b = getattr(self.forward_layer, a), getattr(self.backward_layer, a)
            if f != b:
                raise ValueError(f'Forward layer and backward layer are expected to have the same value for '
                                 f'attribute "{a}", got "{f}" for forward layer and "{b}" for backward layer')
        for side in (self.forward_layer, self.backward_layer):  # as Keras: zeros where masked, when sequences
            side.zero_output_for_mask = side.return_sequences
        self.merge_mode = merge_mode
        self.stateful = layer.stateful
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        self.supports_masking = True
        if weights:
            raise NotImplementedError(f"Bidirectional '{self.name}': `weights=` is not supported; call "
                                      "set_weights once the layer is built")

    def build(self, sequences_shape, initial_state_shape=None):
        for side in (self.forward_layer, self.backward_layer):
            if not side.built:
                side.build(sequences_shape)
                side.built = True
        self.built = True

    def call(self, sequences, initial_state=None, mask=None, training=None):
        forward_state = backward_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            forward_state, backward_state = list(initial_state[:half]), list(initial_state[half:])
        y = self.forward_layer(sequences, initial_state=forward_state, mask=mask, training=training)
        y_rev = self.backward_layer(sequences, initial_state=backward_state, mask=mask, training=training)
        states = []
        if self.return_state:
            states = list(y[1:]) + list(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = y_rev[:, ::-1]
        # in the wrapper's compute dtype, as Keras 3 (a mixed_float16 Bidirectional gives float16)
        y, y_rev = cast(y, self.compute_dtype), cast(y_rev, self.compute_dtype)
        if self.merge_mode == "concat":
            output = concat([y, y_rev], axis=-1)
        elif self.merge_mode == "sum":
            output = y + y_rev
        elif self.merge_mode == "ave":
            output = (y + y_rev) / 2
        elif self.merge_mode == "mul":
            output = y * y_rev
        else:
            output = [y, y_rev]
        if self.return_state:
            return (output if isinstance(output, list) else [output]) + states
        return output

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        if self.return_sequences:
            output_mask = [mask, mask] if not self.merge_mode else mask
        else:
            output_mask = [None, None] if not self.merge_mode else None
        if self.return_state:
            n = len(self.forward_layer.state_size)
            return (output_mask if isinstance(output_mask, list) else [output_mask]) + [None] * (2 * n)
        return output_mask

    def reset_states(self):
        if not self.stateful:
            raise AttributeError("Layer must be stateful.")
        self.forward_layer.reset_states()
        self.backward_layer.reset_states()

    reset_state = reset_states

    @property
    def states(self):
        if self.forward_layer.states and self.backward_layer.states:
            return tuple(self.forward_layer.states + self.backward_layer.states)
        return None

    def get_config(self):
        return {**super().get_config(), "merge_mode": self.merge_mode,
                "layer": serialize_keras_object(self.forward_layer),
                "backward_layer": serialize_keras_object(self.backward_layer)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        config["layer"] = deserialize_keras_object(config["layer"], custom_objects=custom_objects)
        backward = config.pop("backward_layer", None)
        if backward is not None:
            config["backward_layer"] = deserialize_keras_object(backward, custom_objects=custom_objects)
        return cls(**config)


@register_builtin("minikeras.layers")
class TimeDistributed(Wrapper):
    """Applies ``layer`` to every step of (batch, time, ...) inputs: the layer sees
    (batch * time, ...) and its output is reshaped back to (batch, time, ...). A ``Wrapper``.

    >>> mk.layers.TimeDistributed(mk.layers.Dense(2))(mk.ones((4, 5, 3))).shape
    (4, 5, 2)
    """

    min_ndim = 3

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `TimeDistributed` layer with a `keras.layers.Layer` instance. "
                             f"Received: {layer}")
        super().__init__(layer, **kwargs)
        self.supports_masking = True

    def build(self, input_shape):
        if not self.layer.built:
            self.layer.build((None,) + tuple(input_shape[2:]))
            self.layer.built = True
        self.built = True

    def call(self, inputs, training=None, mask=None):
        batch, steps = inputs.shape[0], inputs.shape[1]
        y = self.layer(reshape(inputs, (batch * steps,) + tuple(inputs.shape[2:])), training=training)
        if is_floating(y.dtype):  # Keras 3 runs the layer in the wrapper's compute dtype (float16 when mixed)
            y = cast(y, self.compute_dtype)
        return reshape(y, (batch, steps) + tuple(y.shape[1:]))

    def compute_mask(self, inputs, mask=None):
        return mask
