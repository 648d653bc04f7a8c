"""The recurrent cells: SimpleRNNCell, LSTMCell, GRUCell (Keras 3's formulas, gate order and
weights), and what they share.

A cell is a Layer holding ``kernel`` (input_dim, gates * units), ``recurrent_kernel``
(units, gates * units) and ``bias``, called on one step: ``cell(x_t, states) -> (output,
new_states)``. ``RNN`` runs it over time as one ``lax.scan``; for that a cell of this module
gives its step as two pure functions of arrays (``scan_step``): ``project``, the input's part,
computed for every step at once before the scan (one large matrix product), and ``recur``,
the part that depends on the states, inside the scan. A user's own cell (any Layer with a
``state_size`` and a ``call(inputs, states)``) is staged into a jaxpr instead (``rnn.py``).

Dropout as Keras 3: with ``training=True`` one mask on the inputs and one on the recurrent
state, drawn once per call and used at every step (one mask per gate when
``recurrent_dropout`` is set, Keras's ``implementation=1``).
"""
import jax.numpy as jnp

from minikeras import _context, activations, initializers, regularizers
from minikeras.layers.base import Layer
from minikeras.ops.array import concat
from minikeras.ops.creation import ones
from minikeras.ops.jax_call import call_jax
from minikeras.ops.nn import dropout
from minikeras.saving.registry import register_builtin
from minikeras.tensor import Tensor, to_array


def on_arrays(activation):
    """A minikeras activation as a function of jax arrays (used inside the scan)."""
    def apply(a):
        with _context.recording_with([]):
            return to_array(activation(Tensor(a)))
    return apply


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
        self.kernel_constraint = kernel_constraint
        self.recurrent_constraint = recurrent_constraint
        self.bias_constraint = bias_constraint
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
        self.seed = seed
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
            seed = None if self.seed is None else int(self.seed)
            return dropout(ones(shape, dtype=dtype), rate, seed=seed)
        return draw(self.dropout, input_dim), draw(self.recurrent_dropout, self.units)

    def _masked_projection(self, kernel, bias, x, dp):
        """``(x * dp) @ kernel + bias``, per gate when ``dp`` holds one mask per gate; ``dp``
        broadcasts over the time axis of ``x`` (batch, time, n) or matches (batch, n)."""
        if dp is None:
            z = x @ kernel
        elif dp.ndim == 3:  # one mask per gate
            ks = jnp.split(kernel, dp.shape[0], axis=1)
            z = jnp.concatenate([(x * _over_time(m, x)) @ k for m, k in zip(dp, ks)], axis=-1)
        else:
            z = (x * _over_time(dp, x)) @ kernel
        return z if bias is None else z + bias

    def _recurrent_product(self, h, kernel, rdp):
        if rdp is None:
            return h @ kernel
        if rdp.ndim == 3:
            ks = jnp.split(kernel, rdp.shape[0], axis=1)
            return jnp.concatenate([(h * m) @ k for m, k in zip(rdp, ks)], axis=-1)
        return (h * rdp) @ kernel

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
        return [jnp.zeros((batch_size, n), self.dtype) for n in flat_states(self.state_size)]

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
            "kernel_constraint": self.kernel_constraint, "recurrent_constraint": self.recurrent_constraint,
            "bias_constraint": self.bias_constraint,
            "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout, "seed": self.seed})
        return {**super().get_config(), **config}


def _over_time(mask, x):
    return mask[:, None, :] if x.ndim == 3 else mask


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

    def project(self, w, x, dp):
        return self._masked_projection(w[0], w[2] if self.use_bias else None, x, dp)

    def recur(self, w, p, states, rdp):
        h = on_arrays(self.activation)(p + self._recurrent_product(states[0], w[1], rdp))
        return h, (h,)


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

    def project(self, w, x, dp):
        return self._masked_projection(w[0], w[2] if self.use_bias else None, x, dp)

    def recur(self, w, p, states, rdp):
        h, c = states
        z = p + self._recurrent_product(h, w[1], rdp)
        zi, zf, zc, zo = jnp.split(z, 4, axis=-1)
        sig, act = on_arrays(self.recurrent_activation), on_arrays(self.activation)
        c = sig(zf) * c + sig(zi) * act(zc)
        h = sig(zo) * act(c)
        return h, (h, c)

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

    def _biases(self, w):
        if not self.use_bias:
            return None, None
        return (w[2][0], w[2][1]) if self.reset_after else (w[2], None)

    def project(self, w, x, dp):
        return self._masked_projection(w[0], self._biases(w)[0], x, dp)

    def recur(self, w, p, states, rdp):
        h = states[0]
        u = self.units
        sig, act = on_arrays(self.recurrent_activation), on_arrays(self.activation)
        xz, xr, xh = jnp.split(p, 3, axis=-1)
        rec_bias = self._biases(w)[1]
        if rdp is not None and rdp.ndim == 2:
            rdp = jnp.broadcast_to(rdp, (3,) + rdp.shape)
        if self.reset_after:
            inner = self._recurrent_product(h, w[1], rdp)
            if rec_bias is not None:
                inner = inner + rec_bias
            rz, rr, rh = jnp.split(inner, 3, axis=-1)
            z, r = sig(xz + rz), sig(xr + rr)
            hh = act(xh + r * rh)
        else:
            hz, hr, hh_in = (h, h, h) if rdp is None else (h * rdp[0], h * rdp[1], h * rdp[2])
            z = sig(xz + hz @ w[1][:, :u])
            r = sig(xr + hr @ w[1][:, u:2 * u])
            hh = act(xh + (r * hh_in) @ w[1][:, 2 * u:])
        h = z * h + (1 - z) * hh
        return h, (h,)

    def get_config(self):
        return {**super().get_config(), "reset_after": self.reset_after}
