"""ConvLSTMCell: Keras 3's convolutional LSTM step (the cell of ConvLSTM1D/2D/3D), and its pure
forms on jax arrays that the layer's loop over time runs.

The step is Keras 3's LSTM step with convolutions for products, gates in the order input,
forget, cell, output (i, f, c, o):

    z = conv(x, kernel, strides, padding, dilation_rate) + bias + conv(h, recurrent_kernel, 'same')
    c' = f * c + i * activation(z_c),  h' = o * activation(c')

``kernel`` is ``kernel_size + (channels, 4 * filters)``, ``recurrent_kernel`` ``kernel_size +
(filters, 4 * filters)``, ``bias`` ``(4 * filters,)``: Keras's shapes, names and order. The
states h and c have the convolution's output shape (``(batch, *spatial', filters)``, or
channels first). Dropout as Keras 3's: with ``training``, four masks of the input's shape (one
per gate) and four of h's, drawn once per call and used at every step.
"""
import jax.numpy as jnp
from jax import lax

from minikeras import activations, constraints, initializers, regularizers
from minikeras.layers.base import Layer
from minikeras.layers.convolutional import conv_args as ca
from minikeras.layers.rnn.rnn_gates import on_arrays
from minikeras.ops.array import concat
from minikeras.ops.creation import ones
from minikeras.ops.jax_call import call_jax
from minikeras.ops.math import cast
from minikeras.random.draws import dropout
from minikeras.random.seed_generator import SeedGenerator
from minikeras.saving.registry import register_builtin

GATES = 4


def _dimension_numbers(rank, data_format):
    spatial = "DHW"[3 - rank:]
    features = "NC" + spatial if data_format == "channels_first" else "N" + spatial + "C"
    return features, spatial + "IO", features


class ConvStep:
    """The cell's settings that its pure step needs, hashable (a compiled step is kept per key)."""

    def __init__(self, rank, filters, strides, padding, data_format, dilation_rate, activation,
                 recurrent_activation, use_bias):
        self.rank, self.filters, self.strides, self.padding = rank, filters, strides, padding
        self.data_format, self.dilation_rate, self.use_bias = data_format, dilation_rate, use_bias
        self.activation, self.recurrent_activation = on_arrays(activation), on_arrays(recurrent_activation)
        self.key = (rank, filters, strides, padding, data_format, dilation_rate, activation, recurrent_activation,
                    use_bias)
        self.channel_axis = 1 if data_format == "channels_first" else -1

    def _conv(self, x, w, strides, padding, dilation):
        return lax.conv_general_dilated(x, w, strides, padding.upper(), rhs_dilation=dilation,
                                        dimension_numbers=_dimension_numbers(self.rank, self.data_format))

    def _per_gate(self, x, kernel, masks, conv):
        """``conv(x, kernel)``, or with one mask per gate, each gate's block of ``kernel`` applied
        to ``x * mask`` (Keras's four masked convolutions)."""
        if masks is None:
            return conv(x, kernel)
        blocks = jnp.split(kernel, GATES, axis=-1)
        return jnp.concatenate([conv(x * m, k) for m, k in zip(masks, blocks)], axis=self.channel_axis)

    def project(self, x, kernel, bias, dp):
        """The input's part of the step, ``conv(x * dp, kernel) + bias``, for any leading batch of
        steps (``x``: (n, *step input shape))."""
        z = self._per_gate(x, kernel, dp, lambda a, k: self._conv(a, k, self.strides, self.padding,
                                                                   self.dilation_rate))
        if bias is not None:
            z = z + (bias.reshape((-1,) + (1,) * self.rank) if self.data_format == "channels_first" else bias)
        return z

    def recur(self, p, states, recurrent_kernel, rdp):
        """One step from its input part ``p``: ``(h', (h', c'))``."""
        h, c = states
        ones_ = (1,) * self.rank
        z = p + self._per_gate(h, recurrent_kernel, rdp, lambda a, k: self._conv(a, k, ones_, "same", ones_))
        i, f, g, o = jnp.split(z, GATES, axis=self.channel_axis)
        act, rec = self.activation, self.recurrent_activation
        c = rec(f) * c + rec(i) * act(g)
        h = rec(o) * act(c)
        return h, (h, c)


@register_builtin("minikeras.layers")
class ConvLSTMCell(Layer):
    """One ConvLSTM step on (batch, *spatial, channels) inputs (channels first: (batch,
    channels, *spatial)) and states ``[h, c]``; Keras 3's ``ConvLSTMCell``.

    Args:
      rank: 1, 2 or 3 spatial axes.
      filters: the channels of h and c.
      kernel_size, strides, dilation_rate: an int or ``rank`` ints (strides > 1 with
        dilation_rate > 1 is refused, as Keras does); the recurrent convolution has stride 1 and
        'same' padding.
      padding: 'valid' or 'same' (the input convolution's).
      data_format: 'channels_last' or 'channels_first' (None: ``backend.image_data_format()``).
      activation ('tanh'), recurrent_activation ('sigmoid'), use_bias, kernel_initializer,
      recurrent_initializer ('orthogonal'), bias_initializer, unit_forget_bias (the forget
      gate's bias starts at 1), regularizers and constraints of the three weights, dropout,
      recurrent_dropout, seed: as Keras's.

    >>> cell = ConvLSTMCell(2, filters=4, kernel_size=3, padding="same")
    >>> h, [h, c] = cell(mk.ones((1, 5, 5, 3)), [mk.zeros((1, 5, 5, 4)), mk.zeros((1, 5, 5, 4))])
    >>> h.shape
    (1, 5, 5, 4)
    """

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 activation="tanh", recurrent_activation="sigmoid", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", unit_forget_bias=True,
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 **kwargs):
        super().__init__(**kwargs)
        if rank not in (1, 2, 3):
            raise ValueError(f"Rank {rank} convolutions are not currently implemented. Received: rank={rank}")
        self.rank = rank
        self.filters = ca.positive(filters, "filters")
        self.kernel_size = ca.standardize_tuple(kernel_size, rank, "kernel_size")
        self.strides = ca.standardize_tuple(strides, rank, "strides", allow_zero=True)
        self.padding = ca.standardize_padding(padding)
        self.data_format = ca.standardize_data_format(data_format)
        self.dilation_rate = ca.standardize_tuple(dilation_rate, rank, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("Specifying `strides > 1` is not compatible with `dilation_rate > 1`. Please provide "
                             f"`strides=1` or `dilation_rate=1`. Received: strides={self.strides} and "
                             f"dilation_rate={self.dilation_rate}")
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
        self.seed = seed
        self.seed_generator = SeedGenerator(seed)  # the dropout masks' draws, as Keras 3's cell
        self.input_ndim = rank + 2
        self.state_size = -1  # as Keras's: the states' shape follows from the input's (get_initial_state)
        self.kernel = self.recurrent_kernel = self.bias = None
        self.step_input_shape = None

    # -- weights --------------------------------------------------------------------------
    def build(self, input_shape, states_shape=None):
        """Makes the weights for one step's input shape (batch, *spatial, channels)."""
        input_shape = tuple(input_shape)
        spatial = input_shape[2:] if self.data_format == "channels_first" else input_shape[1:-1]
        channels = ca.channels_of(input_shape, self.data_format)
        if None in spatial:
            raise ValueError("ConvLSTM layers only support static input shapes for the spatial dimension. Received "
                             f"invalid input shape: input_shape={input_shape}")
        if channels is None:
            raise ValueError("The channel dimension of the inputs (last axis) should be defined. Found None. Full "
                             f"input shape received: input_shape={input_shape}")
        self.state_shape(input_shape)  # refuses a convolution with no output
        self.step_input_shape = (None,) + input_shape[1:]
        f = self.filters
        self.kernel = self.add_weight("kernel", self.kernel_size + (channels, GATES * f), self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", self.kernel_size + (f, GATES * f),
                                                self.recurrent_initializer, regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        if self.use_bias:
            init = self.bias_initializer
            if self.unit_forget_bias:
                base = self.bias_initializer

                def init(shape, dtype=None):
                    return concat([base((f,), dtype=dtype), initializers.get("ones")((f,), dtype=dtype),
                                   base((2 * f,), dtype=dtype)], axis=0)
            self.bias = self.add_weight("bias", (GATES * f,), init, regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.built = True

    def state_shape(self, input_shape):
        """The shape of h and c for one step's ``input_shape``: the input convolution's output."""
        return ca.conv_output_shape(input_shape, self.filters, self.kernel_size, self.strides, self.padding,
                                    self.data_format, self.dilation_rate)

    def compute_output_shape(self, inputs_shape, states_shape=None):
        shape = self.state_shape(inputs_shape)
        return shape, [shape, shape]

    def get_initial_state(self, batch_size=None):
        """Zero h and c for ``batch_size`` steps of the built input shape."""
        shape = self.state_shape((batch_size,) + self.step_input_shape[1:])
        return [jnp.zeros(shape, self.compute_dtype), jnp.zeros(shape, self.compute_dtype)]

    # -- the pure step ------------------------------------------------------------------
    def conv_step(self):
        """The step on arrays (``ConvStep``), for the layer's loop over time."""
        return ConvStep(self.rank, self.filters, self.strides, self.padding, self.data_format, self.dilation_rate,
                        self.activation, self.recurrent_activation, self.use_bias)

    def step_weights(self):
        """The Variables the step reads: kernel, recurrent_kernel (and bias)."""
        return [self.kernel, self.recurrent_kernel] + ([self.bias] if self.use_bias else [])

    def dropout_masks(self, input_shape, state_shape, dtype, training):
        """``(input masks, recurrent masks)``: each None, or four masks, (4, *shape), one per gate,
        drawn when ``training`` and the rate is in (0, 1)."""
        def draw(rate, shape):
            if not training or not 0 < rate < 1:
                return None
            return dropout(ones((GATES,) + tuple(shape), dtype=dtype), rate, seed=self.seed_generator)
        return draw(self.dropout, input_shape), draw(self.recurrent_dropout, state_shape)

    # -- one step, as a layer -----------------------------------------------------------
    def call(self, inputs, states, training=False):
        """One step: ``(h, [h, c])``."""
        h, c = states
        if tuple(h.shape) != tuple(c.shape) or tuple(h.shape) != self.state_shape(inputs.shape):
            raise ValueError(f"ConvLSTMCell '{self.name}' expects states h and c of shape "
                             f"{self.state_shape(inputs.shape)} for inputs of shape {tuple(inputs.shape)}, received "
                             f"{tuple(h.shape)} and {tuple(c.shape)}")
        dp, rdp = self.dropout_masks(inputs.shape, h.shape, inputs.dtype, training)
        step, weights = self.conv_step(), [cast(w, self.compute_dtype) for w in self.step_weights()]
        masks = [m for m in (dp, rdp) if m is not None]
        has_dp, has_rdp = dp is not None, rdp is not None

        def fn(x, h, c, *rest):
            d = r = None
            if has_dp:
                d, rest = rest[0], rest[1:]
            if has_rdp:
                r, rest = rest[0], rest[1:]
            p = step.project(x, rest[0], rest[2] if step.use_bias else None, d)
            out, (h, c) = step.recur(p, (h, c), rest[1], r)
            return out, h, c

        outs = call_jax(fn, [inputs, h, c] + masks + weights, name=f"{self.name}_step",
                        constant=range(3, 3 + len(masks)), key=(step.key, has_dp, has_rdp, "cell"))
        return outs[0], [outs[1], outs[2]]

    def get_config(self):
        config = {
            "filters": self.filters, "kernel_size": self.kernel_size, "strides": self.strides,
            "padding": self.padding, "data_format": self.data_format, "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation),
            "recurrent_activation": activations.serialize(self.recurrent_activation),
            "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "recurrent_initializer": initializers.serialize(self.recurrent_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "unit_forget_bias": self.unit_forget_bias,
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "recurrent_regularizer": regularizers.serialize(self.recurrent_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "kernel_constraint": constraints.serialize(self.kernel_constraint),
            "recurrent_constraint": constraints.serialize(self.recurrent_constraint),
            "bias_constraint": constraints.serialize(self.bias_constraint),
            "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout, "seed": self.seed}
        return {**super().get_config(), "rank": self.rank, **config}
