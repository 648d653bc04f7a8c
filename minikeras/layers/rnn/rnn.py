"""RNN: a cell run over the time axis as one recorded op.

``RNN(cell)`` takes the built-in cells (``rnn_cells``), ``StackedRNNCells`` and a user's own
cell: any Layer with ``state_size`` and ``call(inputs, states) -> (output, new_states)``. A
built-in cell runs in ``rnn_fused.fused_loop`` (the input projection of all steps as one
product before the loop, a gradient of its own with the weight gradients as one product each
after its reverse loop); stacked built-in cells run one such loop per cell, each cell over the
whole sequence of the one below. A user's cell is staged once into a jaxpr
(``ops.staging.stage``) whose weights are inputs, run by ``rnn_loop.run`` in one ``lax.scan``.
Either way the whole layer is one ``call_jax`` (``ops.jax_call``): one tape record.

Masks as Keras 3: ``call(..., mask=)`` takes a (batch, time) boolean mask; a masked step keeps
the states and the output of the step before (``rnn_loop``). ``compute_mask`` passes the
mask on when the layer returns sequences.
"""
import inspect

import jax
import jax.numpy as jnp

from minikeras import _context
from minikeras.backend import is_tracer
from minikeras.layers.base import Layer
from minikeras.layers.rnn.rnn_cells import DropoutCell, flat_states
from minikeras.layers.rnn.rnn_fused import fused_loop
from minikeras.layers.rnn.rnn_loop import run
from minikeras.layers.rnn.stacked_cells import StackedRNNCells
from minikeras.ops.jax_call import call_jax
from minikeras.ops.math import cast
from minikeras.ops.staging import stage
from minikeras.saving.registry import deserialize_keras_object, register_builtin, serialize_keras_object
from minikeras.tensor import Tensor, Variable, to_array


def _leaves(tree):
    return jax.tree_util.tree_flatten(tree, is_leaf=lambda x: isinstance(x, (Tensor, Variable)))


def _staged_step(cell, x_aval, state_avals, state_tree, training):
    weights = list(cell.weights)
    kwargs = {"training": training} if "training" in _call_parameters(cell) else {}

    def step_fn(x, *states):
        out, new = cell(x, jax.tree_util.tree_unflatten(state_tree, list(states)), **kwargs)
        return out, _leaves(new)[0]

    for v in weights:  # read first: inside mk.function that lifts them as the function's state
        to_array(v)
    staged = stage(step_fn, [x_aval] + list(state_avals), carried=weights)  # gives their values back

    def step(w, x, states):
        outs, _ = staged.call(x, *_leaves(states)[0], *w)
        return outs[0], _as_tuples(jax.tree_util.tree_unflatten(state_tree, outs[1:]))

    return weights, step


def _call_parameters(cell):
    return inspect.signature(cell.call).parameters


def _builtin_cells(cell):
    """The built-in cells ``cell`` runs, one after another (None for a user's cell)."""
    cells = list(cell.cells) if isinstance(cell, StackedRNNCells) else [cell]
    return cells if all(isinstance(c, DropoutCell) for c in cells) else None


def _kept_output(y, mask, sequence, zero_output_for_mask):
    """The layer's output from the last cell's h (every step's, time-major, or the final one):
    a masked step repeats the output of the step before (zeros before the first unmasked step),
    or outputs zeros with ``zero_output_for_mask``. ``mask`` is (time, batch, 1) in step order.
    (A built-in cell's output is its h, which a masked step keeps: so the repeated output is h
    once a step has been unmasked.)"""
    if mask is None:
        return y
    if sequence:
        keep = mask if zero_output_for_mask else jnp.cumsum(mask, axis=0, dtype=jnp.int32) > 0
    else:
        keep = mask[-1] if zero_output_for_mask else jnp.any(mask, axis=0)
    return jnp.where(keep, y, jnp.zeros((), y.dtype))


@register_builtin("minikeras.layers")
class RNN(Layer):
    """Runs ``cell`` over the time axis of (batch, time, features) inputs.

    Args:
      cell: an RNN cell (``LSTMCell``, ..., or a Layer with ``state_size`` and
        ``call(inputs, states)``), or a list of cells (stacked with ``StackedRNNCells``).
      return_sequences: return every step's output (batch, time, units), not only the last.
      return_state: also return the final states: ``[output, *states]``.
      go_backwards: run from the last step to the first (outputs in that order).
      stateful: the final states of a batch are the initial states of the next (the batch
        size must be fixed); ``reset_states()`` zeros them.
      unroll: trace the steps one by one instead of a ``lax.scan`` (short sequences only).
      zero_output_for_mask: masked steps output zeros instead of repeating the last output.

    Call arguments: ``sequences``, ``initial_state`` (a list of (batch, n) tensors), ``mask``
    ((batch, time) booleans), ``training`` (dropout).

    >>> layer = mk.layers.RNN(mk.layers.LSTMCell(4), return_sequences=True)
    >>> layer(mk.ones((2, 5, 3))).shape
    (2, 5, 4)
    """

    _NOT_TRACKED = Layer._NOT_TRACKED | {"states"}  # stateful states are not weights, as in Keras 3

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, zero_output_for_mask=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if "call" not in dir(cell):
            raise ValueError(f"Argument `cell` should have a `call` method. Received: cell={cell}")
        if "state_size" not in dir(cell):
            raise ValueError("The RNN cell should have a `state_size` attribute (single integer or list of "
                             f"integers, one integer per RNN state). Received: cell={cell}")
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = bool(stateful)
        self.unroll = bool(unroll)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.supports_masking = True
        self.states = None
        state_size = cell.state_size
        self.state_size = [state_size] if isinstance(state_size, int) else list(state_size)

    # -- shapes and masks ---------------------------------------------------------------
    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        batch, length = sequences_shape[0], sequences_shape[1]
        states = [(batch, s) if isinstance(s, int) else [(batch, n) for n in s] for s in self.state_size]
        size = getattr(self.cell, "output_size", None) or flat_states(self.state_size)[0]
        output = (batch, length, size) if self.return_sequences else (batch, size)
        return (output, *states) if self.return_state else output

    def compute_mask(self, inputs, mask=None):
        """The output's mask: ``mask`` when returning sequences, else None (and None per state)."""
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        return [output_mask] + [None] * len(self.state_size) if self.return_state else output_mask

    # -- weights and states -------------------------------------------------------------
    def build(self, sequences_shape, initial_state_shape=None):
        if isinstance(self.cell, Layer) and not self.cell.built:
            self.cell.build((sequences_shape[0],) + tuple(sequences_shape[2:]))
            self.cell.built = True
        if isinstance(self.cell, Layer) and (_builtin_cells(self.cell) is None
                                             or self.cell.compute_dtype != self.compute_dtype):
            # a staged cell (a user's), or one of another policy, reads its weights in its own
            # call, under its own autocast scope: the RNN's scope must not cast them first
            self._read_in_own_dtype(self.cell.weights)
        if self.stateful:
            if sequences_shape[0] is None:
                raise ValueError("When using `stateful=True` in a RNN, the batch size must be static. Found "
                                 f"dynamic batch size: sequence.shape={tuple(sequences_shape)}")
            if self.states is not None:
                self.reset_states()
        self.built = True

    def get_initial_state(self, batch_size):
        """Zero states for ``batch_size`` sequences (the cell's ``get_initial_state`` if it has one)."""
        get = getattr(self.cell, "get_initial_state", None)
        if get is not None:
            return flat_states(get(batch_size=batch_size))
        return [jnp.zeros((batch_size, n), self.compute_dtype) for n in flat_states(self.state_size)]

    def reset_states(self, states=None):
        """Zeros the states of a stateful layer (or sets them to ``states``)."""
        if not self.stateful:
            raise AttributeError("Layer must be stateful.")
        if self.states is None:
            return
        values = [None] * len(self.states) if states is None else flat_states(states)
        for v, value in zip(self.states, values):
            v.assign(jnp.zeros(v.shape, v.dtype) if value is None else value)

    reset_state = reset_states

    # -- the call -----------------------------------------------------------------------
    def _symbolic_call(self, inputs, args, training, kwargs):
        sequences = inputs[0] if isinstance(inputs, (list, tuple)) else inputs
        if self.stateful and getattr(sequences, "shape", (0,))[0] is None:  # before its shape is probed with sizes
            raise ValueError("When using `stateful=True` in a RNN, the batch size must be static. Found dynamic batch "
                             f"size: sequence.shape={tuple(sequences.shape)}. Give the model's input a batch size: "
                             "mk.Input(shape, batch_size=n), or batch_input_shape=(n, ...) on its first layer")
        return super()._symbolic_call(inputs, args, training, kwargs)

    def _check_call(self, sequences, initial_state, mask):
        if self.unroll and sequences.shape[1] is None:
            raise ValueError("Cannot unroll a RNN if the time dimension is undefined.")
        if self.stateful and self.states is not None and sequences.shape[0] != self.states[0].shape[0]:
            raise ValueError(
                "If an RNN is stateful, the batch size of the input sequences must be the same as the batch size "
                f"of the initial state. \n- Expected batch size: {self.states[0].shape[0]}\n- Received batch size: "
                f"{sequences.shape[0]}")
        if mask is not None and tuple(mask.shape) != tuple(sequences.shape[:2]):
            raise ValueError(f"Layer '{self.name}' expects a mask of shape (batch, time) = "
                             f"{tuple(sequences.shape[:2])}, received a mask of shape {tuple(mask.shape)}")
        if initial_state is not None:
            leaves = _leaves(initial_state)[0]
            expected = flat_states(self.state_size)
            expected = [n for s in expected for n in flat_states(s)]
            if len(leaves) != len(expected):
                raise ValueError(f"Layer '{self.name}' expects {len(expected)} initial states (of sizes {expected}), "
                                 f"received {len(leaves)}")
            for state, n in zip(leaves, expected):
                if tuple(state.shape) != (sequences.shape[0], n):
                    raise ValueError(
                        f"Layer '{self.name}': an initial state should have shape (batch, units) = "
                        f"{(sequences.shape[0], n)}, received initial_state with shape {tuple(state.shape)}")

    def _state_variables(self, batch_size):
        """A stateful layer's states, made on its first call on values (an abstract evaluation of
        shapes, as a model's build, makes none and keeps none)."""
        if self.states is None:
            self.states = [Variable(s, trainable=False, name="rnn_state") for s in self.get_initial_state(batch_size)]
        return list(self.states)

    def call(self, sequences, initial_state=None, mask=None, training=None):
        self._check_call(sequences, initial_state, mask)
        keeps_state = self.stateful and (bool(_context.call_state.traces) or not is_tracer(sequences._value))
        if initial_state is None:
            initial_state = (self._state_variables(sequences.shape[0]) if keeps_state
                             else self.get_initial_state(sequences.shape[0]))
        initial_state = flat_states(initial_state)
        states, state_tree = _leaves(initial_state)
        # the states in the cell's compute dtype and the results in the layer's, as Keras 3 (a
        # float32 cell in a mixed_float16 RNN steps in float32 and the RNN gives float16)
        cell_dtype = getattr(self.cell, "compute_dtype", self.compute_dtype)
        states = [cast(s if isinstance(s, (Tensor, Variable)) else Tensor(to_array(s)), cell_dtype)
                  for s in states]
        cells = _builtin_cells(self.cell)
        if cells is not None:
            outs = self._fused_call(cells, sequences, mask, states, training)
        else:
            outs = self._staged_call(sequences, mask, states, state_tree, training)
        if cell_dtype != self.compute_dtype:
            outs = [cast(x, self.compute_dtype) for x in outs]
        output, final = outs[0], list(outs[1:])
        if keeps_state:
            for v, s in zip(self.states, final):
                v.assign(s)
        if not self.return_state:
            return output
        return [output] + list(jax.tree_util.tree_unflatten(state_tree, final))

    def _fused_call(self, cells, sequences, mask, states, training):
        """The built-in cells' loops (one per cell) as one ``call_jax``."""
        batch, dim = sequences.shape[0], sequences.shape[-1]
        has_mask, n_states = mask is not None, len(states)
        plans, extra, constant = [], [], []  # per cell: (gates, has dp, has rdp, weight count, state count)
        for cell in cells:
            dp, rdp = cell.dropout_masks(batch, dim, sequences.dtype, training)
            weights = cell.step_weights()
            plans.append((cell.step_gates(), dp is not None, rdp is not None, len(weights),
                          len(flat_states(cell.state_size))))
            for m in (dp, rdp):
                if m is not None:  # dropout masks: inputs never differentiated
                    constant.append(1 + has_mask + n_states + len(extra))
                    extra.append(m)
            extra += weights
            dim = cell.units
        go_backwards, unroll, sequence = self.go_backwards, self.unroll, self.return_sequences
        zero_output = self.zero_output_for_mask

        def fn(x, *rest):
            m = rest[0] if has_mask else None
            rest = rest[1:] if has_mask else rest
            init, rest = rest[:n_states], rest[n_states:]
            x = jnp.swapaxes(x, 0, 1)
            m = None if m is None else jnp.swapaxes(m, 0, 1)[:, :, None]
            if go_backwards:
                x, m = jnp.flip(x, 0), (None if m is None else jnp.flip(m, 0))
            finals = []
            for k, (gates, has_dp, has_rdp, n_weights, n_cell_states) in enumerate(plans):
                dp = rdp = None
                if has_dp:
                    dp, rest = rest[0], rest[1:]
                if has_rdp:
                    rdp, rest = rest[0], rest[1:]
                w, rest = rest[:n_weights], rest[n_weights:]
                s, init = init[:n_cell_states], init[n_cell_states:]
                keep_sequence = k < len(plans) - 1 or sequence
                outs = fused_loop(gates, x, w[0], w[1], w[2] if n_weights > 2 else None, m, tuple(s), dp, rdp,
                                  unroll=unroll, sequence=keep_sequence)
                if keep_sequence:
                    x, outs = outs[0], outs[1:]
                finals += list(outs)
            y = _kept_output(x if sequence else finals[-plans[-1][4]], m, sequence, zero_output)
            return (jnp.swapaxes(y, 0, 1) if sequence else y,) + tuple(finals)

        inputs = [sequences] + ([cast(mask, "bool")] if has_mask else []) + states + extra
        key = (tuple((c.step_key(), p[1:]) for c, p in zip(cells, plans)), has_mask, n_states, go_backwards, unroll,
               sequence, zero_output)
        return call_jax(fn, inputs, name=self.name, constant=constant, key=key)

    def _staged_call(self, sequences, mask, states, state_tree, training):
        """A user's cell, staged, in one ``lax.scan`` (``rnn_loop.run``) as one ``call_jax``."""
        batch = sequences.shape[0]
        x_aval = jax.ShapeDtypeStruct((batch,) + tuple(sequences.shape[2:]), sequences.dtype)
        weights, step = _staged_step(self.cell, x_aval, [jax.ShapeDtypeStruct(s.shape, s.dtype) for s in states],
                                     state_tree, training)
        has_mask, n_states = mask is not None, len(states)
        options = dict(go_backwards=self.go_backwards, unroll=self.unroll, return_sequences=self.return_sequences,
                       zero_output_for_mask=self.zero_output_for_mask)

        def fn(x, *rest):
            m = rest[0] if has_mask else None
            rest = rest[1:] if has_mask else rest
            init = _as_tuples(jax.tree_util.tree_unflatten(state_tree, rest[:n_states]))
            w = rest[n_states:]
            out, final = run(lambda x_t, s: step(w, x_t, s), x, init, m, **options)
            return (out,) + tuple(jax.tree_util.tree_leaves(final))

        inputs = [sequences] + ([cast(mask, "bool")] if has_mask else []) + states + weights
        return call_jax(fn, inputs, name=self.name)

    def get_config(self):
        return {**super().get_config(), "return_sequences": self.return_sequences,
                "return_state": self.return_state, "go_backwards": self.go_backwards, "stateful": self.stateful,
                "unroll": self.unroll, "zero_output_for_mask": self.zero_output_for_mask,
                "cell": serialize_keras_object(self.cell)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        cell = deserialize_keras_object(config.pop("cell"), custom_objects=custom_objects)
        return cls(cell, **config)


def _as_tuples(tree):
    """Lists in a state structure as tuples (the scan's carry keeps one structure)."""
    if isinstance(tree, (list, tuple)):
        return tuple(_as_tuples(t) for t in tree)
    return tree
