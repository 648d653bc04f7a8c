"""ConvLSTM1D, ConvLSTM2D, ConvLSTM3D: ``RNN`` around a ``ConvLSTMCell``, as Keras 3's.

Inputs are (batch, time, *spatial, channels) (channels first: (batch, time, channels,
*spatial)). The whole layer is one recorded op (``ops.jax_call``): the input convolution of
every step at once (one convolution over batch * time images), then the recurrent step in
``rnn_loop.run``'s ``lax.scan``, with its masks, ``go_backwards``, ``unroll`` and
``zero_output_for_mask``. The config is flat, as Keras's (the cell's arguments are the layer's,
no nested ``cell``), and the weights are the cell's: kernel, recurrent_kernel, bias.
"""
import inspect

import jax.numpy as jnp

from minikeras import regularizers
from minikeras.layers.rnn.conv_lstm_cell import ConvLSTMCell
from minikeras.layers.rnn.rnn import RNN
from minikeras.layers.rnn.rnn_loop import run
from minikeras.ops.jax_call import call_jax
from minikeras.ops.math import cast
from minikeras.saving.registry import register_builtin

_RNN_ARGUMENTS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll", "zero_output_for_mask")
# what ``**kwargs`` takes besides the named arguments (for .keras files): the cell's and RNN's
_KWARGS = frozenset(p for p in inspect.signature(ConvLSTMCell.__init__).parameters
                    if p not in ("self", "rank", "filters", "kernel_size", "kwargs")) | frozenset(_RNN_ARGUMENTS)


class ConvLSTM(RNN):
    """The N-D convolutional LSTM (``rank`` spatial axes); the arguments of ``ConvLSTMCell``
    and of ``RNN`` (return_sequences, return_state, go_backwards, stateful, unroll,
    zero_output_for_mask). The cell's settings read through the layer (``layer.filters``...).

    Call arguments: ``sequences``, ``initial_state`` ([h, c], each of the convolution's output
    shape), ``mask`` ((batch, time) booleans), ``training`` (dropout).
    """

    def __init__(self, rank, filters, kernel_size, **kwargs):
        rnn_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k in _RNN_ARGUMENTS}
        base = {k: kwargs.pop(k) for k in list(kwargs)
                if k in ("name", "trainable", "dtype", "input_shape", "batch_input_shape", "activity_regularizer")}
        cell = ConvLSTMCell(rank, filters, kernel_size, name="conv_lstm_cell", dtype=base.get("dtype"),
                            trainable=base.get("trainable", True), **kwargs)
        super().__init__(cell, **rnn_kwargs, **base)
        self.input_ndim = rank + 3

    def __getattr__(self, name):
        # the cell's settings read through the layer (layer.filters, layer.activation, ...), as Keras
        cell = vars(self).get("cell")
        if cell is not None and not name.startswith("_") and name in vars(cell):
            return vars(cell)[name]
        return super().__getattr__(name)

    # -- shapes and masks ---------------------------------------------------------------
    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        batch, steps = sequences_shape[0], sequences_shape[1]
        state = (batch,) + tuple(self.cell.state_shape((batch,) + tuple(sequences_shape[2:]))[1:])
        output = (batch, steps) + state[1:] if self.return_sequences else state
        return (output, state, state) if self.return_state else output

    def compute_mask(self, inputs, mask=None):
        """The output's mask: ``mask`` when returning sequences, else None (and None per state)."""
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        return [output_mask, None, None] if self.return_state else output_mask

    def _check_call(self, sequences, initial_state, mask):
        expected = self.cell.step_input_shape
        step_shape = tuple(sequences.shape[2:])
        if expected is not None and any(e is not None and e != n for e, n in zip(expected[1:], step_shape)):
            raise ValueError(f"{type(self).__name__} '{self.name}' was built for steps of shape "
                             f"{tuple(expected[1:])} (sequences of shape (batch, time) + {tuple(expected[1:])}), "
                             f"received sequences of shape {tuple(sequences.shape)}")
        if initial_state is not None:
            states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
            shape = tuple(self.cell.state_shape((sequences.shape[0],) + step_shape))
            if len(states) != 2:
                raise ValueError(f"{type(self).__name__} '{self.name}' expects 2 initial states [h, c] (each of "
                                 f"shape {shape}), received {len(states)}")
            for state in states:
                if tuple(state.shape) != shape:
                    raise ValueError(f"{type(self).__name__} '{self.name}': an initial state should have shape "
                                     f"{shape}, received initial_state with shape {tuple(state.shape)}")
            initial_state = None  # checked here: RNN's check counts (batch, units) states
        super()._check_call(sequences, initial_state, mask)

    # -- the loop -------------------------------------------------------------------------
    def _staged_call(self, sequences, mask, states, state_tree, training):
        """RNN.call's loop for this cell: the input convolutions of all steps, then the scan, as
        one ``call_jax``. Returns ``(output, h, c)``."""
        cell = self.cell
        # the step runs in the cell's compute dtype (RNN.call gives the states in it), its float32
        # weights cast by the step as a mixed-precision cell reads them
        dtype = cell.compute_dtype
        sequences = cast(sequences, dtype)
        step_shape = (sequences.shape[0],) + tuple(sequences.shape[2:])
        dp, rdp = cell.dropout_masks(step_shape, states[0].shape, dtype, training)
        step, weights = cell.conv_step(), [cast(w, dtype) for w in cell.step_weights()]
        masks = [m for m in (dp, rdp) if m is not None]
        has_dp, has_rdp, has_mask = dp is not None, rdp is not None, mask is not None
        options = dict(go_backwards=self.go_backwards, unroll=self.unroll, return_sequences=self.return_sequences,
                       zero_output_for_mask=self.zero_output_for_mask, output_is_first_state=True)

        def fn(x, h, c, *rest):
            m = None
            if has_mask:
                m, rest = rest[0], rest[1:]
            d = r = None
            if has_dp:
                d, rest = rest[0], rest[1:]
            if has_rdp:
                r, rest = rest[0], rest[1:]
            kernel, recurrent_kernel, bias = rest[0], rest[1], (rest[2] if step.use_bias else None)
            n, t = x.shape[0], x.shape[1]
            # every step's input convolution at once, over (batch * time) images, batch-major
            d = None if d is None else jnp.repeat(d, t, axis=1)  # a sample's masks at each of its steps
            p = step.project(x.reshape((-1,) + x.shape[2:]), kernel, bias, d)
            p = p.reshape((n, t) + p.shape[1:])
            out, (h, c) = run(lambda p_t, s: step.recur(p_t, s, recurrent_kernel, r), p, (h, c), m, **options)
            return out, h, c

        inputs = [sequences, states[0], states[1]] + ([cast(mask, "bool")] if has_mask else []) + masks + weights
        first_constant = 3 + has_mask
        key = (step.key, has_mask, has_dp, has_rdp, tuple(sorted(options.items())))
        return call_jax(fn, inputs, name=self.name, constant=range(first_constant, first_constant + len(masks)),
                        key=key)

    def get_config(self):
        config = super().get_config()
        del config["cell"]
        cell = self.cell.get_config()
        for key in ("name", "trainable", "dtype", "rank"):
            cell.pop(key, None)
        config.setdefault("activity_regularizer", regularizers.serialize(self.activity_regularizer))
        return {**config, **cell}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)


@register_builtin("minikeras.layers")
class ConvLSTM1D(ConvLSTM):
    """A 1-D convolutional LSTM over (batch, time, length, channels) sequences (channels first:
    (batch, time, channels, length)); Keras 3's arguments, weights and config.

    >>> mk.layers.ConvLSTM1D(4, 3, padding="same")(mk.ones((2, 5, 8, 3))).shape
    (2, 8, 4)
    """

    FROM_CONFIG_KEYS = _KWARGS

    def __init__(self, filters, kernel_size, **kwargs):
        super().__init__(1, filters, kernel_size, **kwargs)


@register_builtin("minikeras.layers")
class ConvLSTM2D(ConvLSTM):
    """A 2-D convolutional LSTM over (batch, time, rows, cols, channels) sequences (channels
    first: (batch, time, channels, rows, cols)); Keras 3's arguments, weights and config.

    >>> mk.layers.ConvLSTM2D(4, 3, return_sequences=True)(mk.ones((2, 5, 6, 6, 3))).shape
    (2, 5, 4, 4, 4)
    """

    FROM_CONFIG_KEYS = _KWARGS

    def __init__(self, filters, kernel_size, **kwargs):
        super().__init__(2, filters, kernel_size, **kwargs)


@register_builtin("minikeras.layers")
class ConvLSTM3D(ConvLSTM):
    """A 3-D convolutional LSTM over (batch, time, depth, rows, cols, channels) sequences
    (channels first: (batch, time, channels, depth, rows, cols)); Keras 3's arguments, weights
    and config.

    >>> mk.layers.ConvLSTM3D(2, 3, padding="same")(mk.ones((1, 2, 4, 4, 4, 1))).shape
    (1, 4, 4, 4, 2)
    """

    FROM_CONFIG_KEYS = _KWARGS

    def __init__(self, filters, kernel_size, **kwargs):
        super().__init__(3, filters, kernel_size, **kwargs)
