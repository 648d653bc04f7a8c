"""The recurrent cells: SimpleRNNCell, LSTMCell, GRUCell (Keras 3's formulas, gate order and
weights), and what they share.

A cell is a Layer holding ``kernel`` (input_dim, gates * units), ``recurrent_kernel``
(units, gates * units) and ``bias``, called on one step: ``cell(x_t, states) -> (output,
new_states)``. ``RNN`` runs it over time with ``rnn_fused.fused_loop``: a cell of this module
gives its step as an ``rnn_gates`` object (``step_gates()``), the recurrent product and the gate math
with their gradient; the input's part (``x @ kernel + bias``) is computed for every step at
once before the loop. A user's own cell (any Layer with a ``state_size`` and a
``call(inputs, states)``) is staged into a jaxpr instead (``rnn.py``).

Dropout as Keras 3: with ``training=True`` one mask on the inputs and one on the recurrent
state, drawn once per call and used at every step (one mask per gate when
``recurrent_dropout`` is set, Keras's ``implementation=1``). The masks are drawn from the cell's
own ``seed_generator`` (a ``SeedGenerator`` of ``seed``, as Keras 3's cells hold: its state is
a non-trainable variable of the cell and of its RNN, not a weight).
"""
import jax.numpy as jnp

from minikeras import activations, constraints, initializers, regularizers
from minikeras.layers.base import Layer
from minikeras.layers.rnn.rnn_gates import GRUGates, LSTMGates, SimpleRNNGates, product
from minikeras.ops.array import concat
from minikeras.ops.creation import ones
from minikeras.ops.jax_call import call_jax
from minikeras.random.draws import dropout
from minikeras.random.seed_generator import SeedGenerator
from minikeras.saving.registry import register_builtin


def flat_states(states):
    """``states`` (a Tensor, or a list of them) as a list."""
    return list(states) if isinstance(states, (list, tuple)) else [states]


class DropoutCell(Layer):
    """The settings every built-in cell shares: units, activations, initializers,
    regularizers, constraints, dropout; and the one-step ``call`` on its pure step."""

    gates = 1
    _default_recurrent_activation = None

    def __init__(self, units, activation="tanh", recurrent_activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 **kwargs):
        kwargs.pop("implementation", None)  # Keras's choice of kernel layout: the same numbers here
        super().__init__(**kwargs)
        if isinstance(units, bool) or not isinstance(units, int) or units <= 0:
            raise ValueError(f"Received an invalid value for argument `units`, expected a positive integer, "
                             f"got {units}.")
        self.units = units
        self.activation = activations.get(activation)
        if self._default_recurrent_activation is not None:
            self.recurrent_activation = activations.get(recurrent_activation or self._default_recurrent_activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
        self.seed = seed
        self.seed_generator = SeedGenerator(seed)
        self.kernel = self.recurrent_kernel = self.bias = None

    @property
    def output_size(self):
        return self.units

    def _mask_count(self):
        return self.gates if self.recurrent_dropout else None

    def _build_weights(self, input_dim, bias_shape, bias_initializer):
        g = self.gates
        self.kernel = self.add_weight("kernel", (input_dim, g * self.units), self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", (self.units, g * self.units),
                                                self.recurrent_initializer, regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", bias_shape, bias_initializer, regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.built = True

    # -- the pure step ------------------------------------------------------------------
    def step_weights(self):
        """The Variables the pure step reads, in the order ``project``/``recur`` take them."""
        return [self.kernel, self.recurrent_kernel] + ([self.bias] if self.use_bias else [])

    def step_key(self):
        """Identifies the pure step (two cells with equal keys compute the same function)."""
        act = getattr(self, "recurrent_activation", None)
        return (type(self).__name__, self.units, self.activation, act, self.use_bias,
                getattr(self, "reset_after", None))

    def dropout_masks(self, batch, input_dim, dtype, training):
        """``(input mask, recurrent mask)``, each None, a (batch, n) Tensor or, with
        ``recurrent_dropout``, a (gates, batch, n) Tensor; drawn when ``training``."""
        def draw(rate, n):
            if not training or not 0 < rate < 1:
                return None
            count = self._mask_count()
            shape = (count, batch, n) if count else (batch, n)
            return dropout(ones(shape, dtype=dtype), rate, seed=self.seed_generator)
        return draw(self.dropout, input_dim), draw(self.recurrent_dropout, self.units)

    def step_gates(self):
        """The cell's step for the fused loop over time: an ``rnn_gates`` object."""
        raise NotImplementedError(f"{type(self).__name__} defines no gates")

    def project(self, w, x, dp):
        """The input's part of the step, ``(x * dp) @ kernel + bias`` (its input bias)."""
        b_in, _ = self.step_gates().split_bias(w[2] if self.use_bias else None)
        p = product(x, w[0], dp)
        return p if b_in is None else p + b_in

    def recur(self, w, p, states, rdp):
        """The rest of the step, from the input's part ``p``: ``(output, new_states)``."""
        gates = self.step_gates()
        _, b_rec = gates.split_bias(w[2] if self.use_bias else None)
        new, _ = gates.step(w[1], b_rec, rdp, p, states)
        return new[0], new

    # -- one step, as a layer -----------------------------------------------------------
    def call(self, inputs, states, training=None):
        """One step: ``(output, new_states)`` (new_states a list, as Keras 3's cells)."""
        states = flat_states(states)
        dp, rdp = self.dropout_masks(inputs.shape[0], inputs.shape[-1], inputs.dtype, training)
        weights = self.step_weights()
        n_states = len(states)

        def fn(x, *rest):
            s, rest = rest[:n_states], rest[n_states:]
            masks, w = rest[:2], rest[2:]
            d, r = [m if m.ndim else None for m in masks]
            out, new = self.recur(w, self.project(w, x, d), tuple(s), r)
            return (out,) + tuple(new)

        none = jnp.zeros((), inputs.dtype)
        outs = call_jax(fn, [inputs] + states + [none if dp is None else dp, none if rdp is None else rdp] + weights,
                        name=f"{self.name}_step", constant=range(1 + n_states, 3 + n_states),
                        key=(self.step_key(), "cell"))
        return outs[0], list(outs[1:])

    def get_initial_state(self, batch_size=None):
        return [jnp.zeros((batch_size, n), self.compute_dtype) for n in flat_states(self.state_size)]

    def get_config(self):
        config = {"units": self.units, "activation": activations.serialize(self.activation)}
        if hasattr(self, "recurrent_activation"):
            config["recurrent_activation"] = activations.serialize(self.recurrent_activation)
        config.update({
            "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "recurrent_initializer": initializers.serialize(self.recurrent_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "recurrent_regularizer": regularizers.serialize(self.recurrent_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "kernel_constraint": constraints.serialize(self.kernel_constraint),
            "recurrent_constraint": constraints.serialize(self.recurrent_constraint),
            "bias_constraint": constraints.serialize(self.bias_constraint),
            "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout, "seed": self.seed})
        return {**super().get_config(), **config}


@register_builtin("minikeras.layers")
class SimpleRNNCell(DropoutCell):
    """``h_t = activation(x_t @ kernel + bias + h_{t-1} @ recurrent_kernel)``; state (h,).

    >>> cell = mk.layers.SimpleRNNCell(4)
    >>> out, [h] = cell(mk.ones((2, 3)), [mk.zeros((2, 4))])
    >>> out.shape
    (2, 4)
    """

    def __init__(self, units, activation="tanh", use_bias=True, **kwargs):
        super().__init__(units, activation=activation, use_bias=use_bias, **kwargs)
        self.state_size = units

    def _mask_count(self):
        return None  # SimpleRNN draws one mask each, even with recurrent dropout

    def build(self, input_shape):
        self._build_weights(input_shape[-1], (self.units,), self.bias_initializer)

    def step_gates(self):
        return SimpleRNNGates(self.activation)


@register_builtin("minikeras.layers")
class LSTMCell(DropoutCell):
    """Keras 3's LSTM step, gates in the order input, forget, cell, output (i, f, c, o):
    ``z = x @ kernel + h @ recurrent_kernel + bias``; ``c' = f * c + i * activation(z_c)``,
    ``h' = o * activation(c')``; states (h, c). ``unit_forget_bias`` starts the forget gate's
    bias at 1.
    """

    gates = 4
    _default_recurrent_activation = "sigmoid"

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 unit_forget_bias=True, **kwargs):
        super().__init__(units, activation=activation, recurrent_activation=recurrent_activation,
                         use_bias=use_bias, **kwargs)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.state_size = [units, units]

    def build(self, input_shape):
        init = self.bias_initializer
        if self.unit_forget_bias:
            units, base = self.units, self.bias_initializer

            def init(shape, dtype=None):
                return concat([base((units,), dtype=dtype), initializers.get("ones")((units,), dtype=dtype),
                               base((2 * units,), dtype=dtype)], axis=0)
        self._build_weights(input_shape[-1], (4 * self.units,), init)

    def step_gates(self):
        return LSTMGates(self.activation, self.recurrent_activation)

    def get_config(self):
        return {**super().get_config(), "unit_forget_bias": self.unit_forget_bias}


@register_builtin("minikeras.layers")
class GRUCell(DropoutCell):
    """Keras 3's GRU step, gates in the order update, reset, candidate (z, r, h).

    ``reset_after=True`` (default, cuDNN's form): the bias has shape (2, 3 * units), an input
    and a recurrent row, and the reset gate multiplies ``h @ recurrent_kernel_h + b``;
    ``reset_after=False``: a (3 * units,) bias and ``(r * h) @ recurrent_kernel_h``.
    ``h' = z * h + (1 - z) * candidate``; state (h,).
    """

    gates = 3
    _default_recurrent_activation = "sigmoid"

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 reset_after=True, **kwargs):
        super().__init__(units, activation=activation, recurrent_activation=recurrent_activation,
                         use_bias=use_bias, **kwargs)
        self.reset_after = bool(reset_after)
        self.state_size = units

    def build(self, input_shape):
        shape = (2, 3 * self.units) if self.reset_after else (3 * self.units,)
        self._build_weights(input_shape[-1], shape, self.bias_initializer)

    def step_gates(self):
        return GRUGates(self.activation, self.recurrent_activation, self.reset_after)

    def get_config(self):
        return {**super().get_config(), "reset_after": self.reset_after}
